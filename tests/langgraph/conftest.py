"""Without the langgraph extra these tests are skipped, saying so.

``tests/`` is on ``sys.path`` (the suite's rootdir conftest), where this folder
itself imports as a namespace package ``langgraph``: the installed
distribution is what decides, not an import.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

try:
    version("langgraph")
    MISSING = ""
except PackageNotFoundError:
    MISSING = "langgraph is not installed (pip install 'pytest-flows[langgraph]')"


class _NotInstalled(pytest.File):
    """A test module of a framework that is not installed: one skip, not an import error."""

    def collect(self) -> Any:
        pytest.skip(MISSING)


def pytest_pycollect_makemodule(module_path: Path, parent: Any) -> Any:
    if MISSING:
        return _NotInstalled.from_parent(parent, path=module_path)
    return None
