"""Deprecated import paths: the modules earlier docs showed, kept as aliases.

Every path any earlier revision of docs/, examples/ or README.md showed
(tests/public_paths.txt, derived from the history) keeps importing for at least
one minor release after the one that deprecated it (docs/contributing.md,
"Deprecation policy"). Such a module re-exports the very objects of their public
home and, when it is imported, warns once: one ``DeprecationWarning`` per module
per process, naming the imports that replace it, attributed to the line that
imported it. Warning on import (rather than from a module ``__getattr__`` per
name) keeps it to one warning for ``from pytest_flows.replies import call_tool,
stream``, and lets type checkers see the re-exported names.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn

__all__ = [
    "ALIASES",
    "DEPRECATED_IN",
    "REMOVED_IN",
    "missing_name",
    "moved_message",
    "warn_moved",
]

#: The release that deprecated the pre-0.2 module paths, and the first that may drop them.
DEPRECATED_IN = "0.2.0"
REMOVED_IN = "0.4.0"

#: Every deprecated alias module (tests/test_public_paths.py holds this equal to the
#: modules that call warn_moved, and to the moved paths in tests/public_paths.txt).
ALIASES = (
    "pytest_flows.agent_framework.patches",
    "pytest_flows.crewai.crews",
    "pytest_flows.crewai.patches",
    "pytest_flows.errors",
    "pytest_flows.golden.migrations",
    "pytest_flows.races",
    "pytest_flows.recording",
    "pytest_flows.replies",
    "pytest_flows.script",
    "pytest_flows.seams",
    "pytest_flows.snapshot",
    "pytest_flows.store",
    "pytest_flows.strategies",
    "pytest_flows.syrupy_extension",
    "pytest_flows.usage",
)


def moved_message(module: str, homes: Mapping[str, Sequence[str]]) -> str:
    """``pytest_flows.replies is deprecated ...: use `from pytest_flows import a, b` instead``."""
    imports = "; ".join(
        f"from {home} import {', '.join(sorted(names))}" for home, names in homes.items() if names
    )
    return (
        f"{module} is deprecated since pytest-flows {DEPRECATED_IN} and goes in {REMOVED_IN}: "
        f"use `{imports}` instead (see CHANGELOG.md)."
    )


def _importer_stacklevel() -> int:
    """The stack level, from warn_moved, of the line that imported the module.

    1 is warn_moved, 2 the deprecated module's body, 3 whoever imported it:
    warnings skips importlib's bootstrap frames when it counts, but not
    importlib.import_module's own frame, which is skipped here.
    """
    level = 3
    frame = sys._getframe(3)
    while frame.f_back is not None:
        filename = frame.f_code.co_filename
        if not ("importlib" in filename and "_bootstrap" in filename):
            if os.path.basename(os.path.dirname(filename)) != "importlib":
                break
            level += 1
        frame = frame.f_back
    return level


def warn_moved(module: str, homes: Mapping[str, Sequence[str]]) -> None:
    """Warn, once per import of ``module``, that its names now live in ``homes``."""
    warnings.warn(
        moved_message(module, homes), DeprecationWarning, stacklevel=_importer_stacklevel()
    )


def missing_name(module: str, homes: Mapping[str, Sequence[str]]) -> Callable[[str], NoReturn]:
    """A module ``__getattr__`` for the old module's names that are not public any more."""
    kept = sorted(name for names in homes.values() for name in names)

    def __getattr__(name: str) -> NoReturn:
        raise AttributeError(
            f"module {module!r} has no attribute {name!r}: {module} is a deprecated alias "
            f"that keeps only the names its documentation showed ({', '.join(kept)}); "
            f"{name} is internal since pytest-flows {DEPRECATED_IN}. The public names are "
            "listed in docs/reference.md."
        )

    return __getattr__
