"""--flows-all keeps the frameworks' console output a test reads with capsys.

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


def test_a_flows_test_stays_quiet_by_default(flows, capsys):
    flows.run(Hello)
    assert "Flow Execution" not in capsys.readouterr().out
"""


@pytest.mark.parametrize("args", [["-p", "no:flows"], ["--flows-all"]], ids=["bare", "flows-all"])
def test_capsys_sees_the_console_under_flows_all(
    pytester: pytest.Pytester, args: list[str]
) -> None:
    pytester.makepyfile(test_console=TEST)
    selected = ["-k", "reads"] if "no:flows" in args else []
    result = pytester.runpytest_subprocess("-p", "no:randomly", *args, *selected)
    result.assert_outcomes(passed=1 if selected else 2)
