"""The examples of a framework whose extra is not installed are skipped, saying so."""

from __future__ import annotations

import importlib.util
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest

try:
    version("agent-framework-core")
    AF_MISSING = ""
except PackageNotFoundError:
    AF_MISSING = (
        "agent-framework-core is not installed (pip install 'pytest-flows[agent-framework]')"
    )


try:
    version("langgraph")
    LANGGRAPH_MISSING = ""
except PackageNotFoundError:
    LANGGRAPH_MISSING = "langgraph is not installed (pip install 'pytest-flows[langgraph]')"


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


CONVERSATIONAL_MISSING = (
    ""
    if _has_module("crewai.flow.conversational")
    else "conversational flows need crewai >= 1.15 (crewai 1.14's are experimental)"
)


def _needs_agent_framework(path: Path) -> bool:
    # the Agent Framework examples, and the conformance example that runs both frameworks
    return path.parent.name.startswith("af_") or path.name in (
        "test_af_golden_drafts.py",
        "test_golden_conformance.py",
    )


class _Unavailable(pytest.File):
    """An example of something not installed: one skip, not an import error."""

    reason = ""

    def collect(self) -> Any:
        pytest.skip(self.reason)


def pytest_pycollect_makemodule(module_path: Path, parent: Any) -> Any:
    reason = ""
    if _needs_agent_framework(module_path):
        reason = AF_MISSING
    elif module_path.parent.name.startswith("langgraph_"):
        reason = LANGGRAPH_MISSING
    elif module_path.parent.name == "support_bot":  # a conversational flow
        reason = CONVERSATIONAL_MISSING
    if not reason:
        return None
    unavailable = _Unavailable.from_parent(parent, path=module_path)
    unavailable.reason = reason
    return unavailable
