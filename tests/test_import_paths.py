"""Every module of pytest_flows (public or under ``_internal``) works as the first import
of a test module.

The plugin configures a framework's adapter the moment the framework is
imported; a module that imports the framework half-way through its own import
used to re-enter itself from that hook and fail collection ("partially
initialized module ... has no attribute 'ADAPTER'"), but only when nothing had
imported the framework before it. So each module gets a process that has imported none of it: a
pytest run (this plugin only, to keep it cheap) of a test module whose first
line imports it, in a child forked from an interpreter that imported only pytest
and the plugin (tests/first_import_runner.py).
A framework module's child imports the framework (seconds each): CI checks the ones a
process imports first in practice (every documented import path, the adapter the
import hook loads, the recorder's hooks); the long mode (PYTEST_FLOWS_LONG=1) every one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import public_paths
import pytest
from long_mode import LONG

import pytest_flows
from pytest_flows._internal.deprecation import ALIASES

PACKAGE = Path(pytest_flows.__file__).parent


def _all_modules() -> list[str]:
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules.append(".".join(parts))
    return modules


#: The deprecated aliases at the top re-export public names only (tests/test_public_paths.py
#: imports each in a fresh interpreter); the adapters' aliases stay here, since what can
#: break there is the adapter's re-entrant load.
MODULES = [
    m
    for m in _all_modules()
    if m not in ALIASES or m.startswith(("pytest_flows.crewai.", "pytest_flows.agent_framework."))
]


def test_every_module_is_found() -> None:
    # guards the walk above: an empty or partial list would make the test below vacuous
    assert {
        "pytest_flows",
        "pytest_flows._internal.plugin",
        "pytest_flows.agent_framework",
        "pytest_flows.agent_framework._llm",
        "pytest_flows.crewai",
        "pytest_flows.crewai._adapter",
        "pytest_flows.langgraph",
        "pytest_flows.langgraph._adapter",
    } <= set(MODULES)
    # a framework's modules get a pytest run of their own (the import hook is what can
    # re-enter), never the core's bare import
    assert _group("pytest_flows.langgraph._adapter") == "langgraph"


#: an adapter's modules import its framework: without the extra there is nothing to import
_FRAMEWORK_OF = {
    "pytest_flows.agent_framework": "agent-framework-core",
    "pytest_flows.crewai": "crewai",
    "pytest_flows.langgraph": "langgraph",
}


def _skip_reason(module: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    for package, distribution in _FRAMEWORK_OF.items():
        if module == package or module.startswith(f"{package}."):
            try:
                version(distribution)
            except PackageNotFoundError:
                return f"{distribution} is not installed"
    if module == "pytest_flows.crewai._conversation":
        from pytest_flows.crewai import _compat as compat

        if compat.conversational_mixin() is None:
            return "conversational flows need crewai >= 1.15"
    return None


def _first_in_practice(module: str) -> bool:
    """Whether a process imports ``module`` before the rest of its adapter: a path the
    docs show, the adapter the import hook loads, or the recorder's hooks."""
    return (
        module in public_paths.read()
        or module.endswith("._adapter")
        or module.startswith("pytest_flows.recorder._")
    )


def _group(module: str) -> str | None:
    """The group that checks ``module``, or None where only the long mode does."""
    for package in ("crewai", "agent_framework", "langgraph"):
        if module.startswith((f"pytest_flows.{package}", f"pytest_flows.recorder._{package}")):
            if not LONG:
                return package if _first_in_practice(module) else None
            if package == "crewai":  # the costly one: two halves, for xdist to spread
                return f"crewai-{MODULES.index(module) % 2 + 1}"
            return package
    return "core"


_GROUPS = (
    ["core", "crewai-1", "crewai-2", "agent_framework", "langgraph"]
    if LONG
    else ["core", "crewai", "agent_framework", "langgraph"]
)


#: What each group's frameworks import that pytest-flows does not hook (see the runner).
_PRELOAD = {
    # (the core's own third-party imports: the check is of pytest_flows' modules)
    "core": "hypothesis.strategies,pydantic,sortedcontainers,concurrent.futures,zoneinfo,"
    "pickle,gzip,unittest,queue,fractions",
    "crewai": "openai,numpy",
    "crewai-1": "openai,numpy",
    "crewai-2": "openai,numpy",
    "agent_framework": "openai",
    # langchain-core is LangGraph's base; the plugin hooks only `langgraph` itself
    "langgraph": "openai,langchain_core.runnables,langchain_core.messages",
}


RUNNER = Path(__file__).with_name("first_import_runner.py")


#: Groups that xdist spreads over its workers: the framework's import is most of the cost.
@pytest.mark.parametrize("group", _GROUPS)
def test_each_module_imports_first_in_a_process_that_imported_none_of_it(
    group: str, tmp_path: Path
) -> None:
    modules = [m for m in MODULES if _group(m) == group and _skip_reason(m) is None]
    if not modules:
        framework = group.partition("-")[0]
        pytest.skip(f"no {group} module here: {_skip_reason(f'pytest_flows.{framework}')}")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(PACKAGE.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "FIRST_IMPORT_PRELOAD": _PRELOAD.get(group, ""),
        # the core imports no framework: the import alone, without a pytest run around it
        "FIRST_IMPORT_BARE": "1" if group == "core" else "0",
    }
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(tmp_path), *modules],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["module"] for r in results] == modules, done.stderr[-3000:]
    failed = [r for r in results if r["code"] != 0]
    assert not failed, "\n\n".join(
        f"`from {r['module']} import *` as the first import of a test module failed:\n{r['output']}"
        for r in failed
    )


def test_a_module_that_fails_to_import_first_is_reported(tmp_path: Path) -> None:
    # The runner's report is what the test above relies on: a module that cannot be
    # imported comes back with its code and pytest's output.
    done = subprocess.run(
        [sys.executable, str(RUNNER), str(tmp_path), "pytest_flows._internal.no_such_module"],
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    (result,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert result["code"] != 0
    assert "No module named 'pytest_flows._internal.no_such_module'" in result["output"]
