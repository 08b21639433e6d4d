"""Shared test configuration for pytest-flows' own suite."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
from collections.abc import Iterator
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.metadata import PackageNotFoundError, version
from typing import Any

# Loaded before any in-process pytester run: such a run drops, when it ends, every
# module first imported during it, and a hypothesis imported there and again later
# makes two SearchStrategy classes ("Expected a SearchStrategy but got LazyStrategy").
import hypothesis.strategies  # noqa: F401
import pytest
from long_mode import LONG

import pytest_flows._internal.state.strategies  # noqa: F401

# ... and numpy (crewai's and langchain's dependency) for the same reason: a C extension
# that cannot be loaded twice in one process ("cannot load module more than once per
# process" in the first crewai import after a pytester run that imported it first).
with contextlib.suppress(ImportError):
    import numpy  # noqa: F401

pytest_plugins = ["pytester"]


class _AgentFrameworkNotInstalled(MetaPathFinder, Loader):
    """tests/ is on sys.path (this conftest's folder), where tests/agent_framework/
    would import as an empty namespace package `agent_framework` when the real one
    is not installed: the name fails to import instead, so
    `pytest.importorskip("agent_framework")` skips."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if name.partition(".")[0] != "agent_framework":
            return None
        return ModuleSpec(name, self)

    def create_module(self, spec: ModuleSpec) -> Any:
        raise ModuleNotFoundError(
            f"No module named {spec.name!r} (agent-framework-core is not installed)",
            name=spec.name,
        )

    def exec_module(self, module: Any) -> None:  # never reached: create_module raises
        raise AssertionError(module)


try:
    version("agent-framework-core")
except PackageNotFoundError:
    sys.meta_path.insert(0, _AgentFrameworkNotInstalled())


#: Modules whose tests run for seconds each (exhaustive explorations, an interpreter a
#: group of modules): run first, so `-n 2` ends on short tests instead of one worker
#: finishing a long one alone.
_LONG_MODULES = ("test_explore", "test_import_paths")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "long: runs only in the long mode (PYTEST_FLOWS_LONG=1); CI checks the same "
        "property in a bounded form, named in the test's comment",
    )
    config.addinivalue_line(
        "markers",
        "real_time: waits on real time on purpose (the test's comment says why); the "
        "suite's other tests of the same rule fake it",
    )


#: A test that pytest-timeout did not end (a hypothesis test takes its one timeout for a
#: failing example and runs the example again, unstopped) ends its process this many
#: real seconds after its timeout, with every thread's stack on the stderr pytest's
#: capture does not hold: xdist then names the test that crashed its worker, and CI
#: goes on.
_HARD_STOP_AFTER = 30
_stderr: Any = None


def _uncaptured_stderr(config: pytest.Config) -> Any:
    """The process's stderr from before pytest's capture took fd 2 (a copy of it)."""
    capman = config.pluginmanager.getplugin("capturemanager")
    err = getattr(getattr(capman, "_global_capturing", None), "err", None)
    fd = getattr(err, "targetfd_save", 2)
    return os.fdopen(os.dup(fd if isinstance(fd, int) else 2), "w")


def _timeout_of(item: pytest.Item) -> float:
    """pytest-timeout's timeout for ``item`` (0: none), as it reads it."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and (marker.args or "timeout" in marker.kwargs):
        seconds = marker.args[0] if marker.args else marker.kwargs["timeout"]
    else:
        seconds = item.config.getoption("timeout", None)
        if seconds is None:
            seconds = item.config.getini("timeout")
    return float(seconds or 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    global _stderr
    timeout = _timeout_of(item)
    if timeout <= 0:
        yield
        return
    if _stderr is None:
        _stderr = _uncaptured_stderr(item.config)
    faulthandler.dump_traceback_later(timeout + _HARD_STOP_AFTER, exit=True, file=_stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(trylast=True)  # after pytest-randomly's shuffle, which it keeps
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.path.name.startswith(_LONG_MODULES))
    if not LONG:
        skip = pytest.mark.skip(reason="long mode only: set PYTEST_FLOWS_LONG=1")
        for item in items:
            if item.get_closest_marker("long"):
                item.add_marker(skip)
