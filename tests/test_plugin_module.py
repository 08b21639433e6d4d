"""``pytest -p pytest_flows.plugin``: the plugin where entry points are not loaded,
registered once whichever ways it is named (docs/reference.md, "Loading the plugin")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: What each run checks: the plugin is registered once, under the entry point's name.
ONCE = """
import asyncio
import pytest_flows._internal.plugin as real

def test_registered_once(pytestconfig):
    names = [n for n, p in pytestconfig.pluginmanager.list_name_plugin() if p is real]
    assert names == ["flows"]

def test_the_flows_fixture(flows):
    assert flows.seed == 0

def test_a_plain_test_is_on_the_harness_under_flows_all(pytestconfig):
    async def kind():
        return type(asyncio.get_running_loop()).__name__
    expected = "DeterministicEventLoop" if pytestconfig.getoption("flows_all") else None
    assert expected in (asyncio.run(kind()), None)
"""

A_FLOWS_TEST = """
from crewai.flow.flow import Flow, listen, start

class Twice(Flow):
    @start()
    def one(self):
        return 1

    @listen(one)
    def two(self, value):
        return value + 1

def test_a_flow_on_the_harness(flows):
    run = flows.run(Twice)
    assert run.output == 2
    assert "method finished two output=2" in run.trace.lines()
"""


def _run(pytester: pytest.Pytester, autoload: bool, *args: str) -> pytest.RunResult:
    if autoload:
        pytester._monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
        args = ("-p", "no:randomly", *args)
    else:
        pytester._monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester._monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


@pytest.mark.parametrize(
    "autoload",
    [
        # CI: test_autoload_off_dash_p_flows_all_runs_a_flows_test runs the same command
        # (autoload off, -p pytest_flows.plugin --flows-all) on these tests and one more
        pytest.param(False, marks=pytest.mark.long, id="autoload-off"),
        pytest.param(True, id="autoload-on"),
    ],
)
def test_dash_p_loads_the_plugin_once(pytester: pytest.Pytester, autoload: bool) -> None:
    pytester.makepyfile(test_once=ONCE)
    result = _run(pytester, autoload, "-p", "pytest_flows.plugin", "--flows-all")
    result.assert_outcomes(passed=3)


def test_a_conftest_naming_it_with_autoload_on_loads_it_once(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["pytest_flows.plugin"]')
    pytester.makepyfile(test_once=ONCE)
    _run(pytester, True).assert_outcomes(passed=3)


def test_no_flows_still_turns_it_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_off="def test_x(request):\n    request.getfixturevalue('flows')\n")
    result = _run(pytester, False, "-p", "no:flows", "-p", "pytest_flows.plugin")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*fixture 'flows' not found*"])


def test_autoload_off_dash_p_flows_all_runs_a_flows_test(pytester: pytest.Pytester) -> None:
    pytest.importorskip("crewai")
    pytester.makepyfile(test_flow=A_FLOWS_TEST, test_once=ONCE)
    result = _run(pytester, False, "-p", "pytest_flows.plugin", "--flows-all")
    result.assert_outcomes(passed=4)


def test_the_entry_point_still_names_the_plugin_module() -> None:
    # /work/shared/tools/fidelity (and users' -p) read the pytest11 value: it must import
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    value = re.search(r'^\[project\.entry-points\.pytest11\]\nflows = "([\w.]+)"', text, re.M)
    assert value is not None
    import importlib

    module = importlib.import_module(value.group(1))
    assert hasattr(module, "pytest_addoption")


def test_loading_the_plugin_imports_no_deprecated_alias() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_flows.plugin, pytest_flows._internal.plugin\n"
        "from pytest_flows._internal.deprecation import ALIASES\n"
        "print(','.join(m for m in ALIASES if m in sys.modules) or 'none')"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout.strip() == "none"
