"""--flows-all keeps the frameworks' console output a test reads with capsys, and the
messages crewai's console formatter prints (its version check) a test mocks.

Compared with the bare runtime: the same test passes with ``-p no:flows``.
"""

from __future__ import annotations

import pytest

TEST = """
from crewai.flow.flow import Flow, start


class Hello(Flow):
    @start()
    def hi(self):
        return "hi"


def test_reads_crewais_console(capsys):
    Hello().kickoff()
    out = capsys.readouterr().out
    assert "Flow Execution" in out and "Name: Hello" in out


def test_reads_the_version_panel(monkeypatch):
    # crewAI's own TestConsoleFormatterVersionCheck: the PyPI answer mocked, CI unset
    from unittest.mock import patch

    from crewai.events.utils import console_formatter

    monkeypatch.setenv("CI", "")
    formatter = console_formatter.ConsoleFormatter(verbose=True)
    newer = (True, "1.0.0", "2.0.0")
    with (
        patch.object(console_formatter, "is_newer_version_available", return_value=newer),
        patch.object(console_formatter, "is_current_version_yanked", return_value=(False, "")),
        patch.object(formatter.console, "print") as printed,
    ):
        formatter._show_version_update_message_if_needed()
    assert printed.call_count == 2


def test_a_flows_test_stays_quiet_by_default(flows, capsys):
    flows.run(Hello)
    assert "Flow Execution" not in capsys.readouterr().out
"""


@pytest.mark.parametrize(
    "args",
    [
        # The bare run only shows the inner tests pass without the plugin (a control of
        # the tests themselves); CI runs the flows-all case, the property under test.
        pytest.param(["-p", "no:flows"], marks=pytest.mark.long, id="bare"),
        pytest.param(["--flows-all"], id="flows-all"),
    ],
)
def test_capsys_sees_the_console_under_flows_all(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    pytester.makepyfile(test_console=TEST)
    selected = ["-k", "reads"] if "no:flows" in args else []
    # the plugin alone: the other plugins' imports cost seconds a run
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "pytest_flows.plugin", *args, *selected)
    result.assert_outcomes(passed=2 if selected else 3)
