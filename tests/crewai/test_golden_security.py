"""Golden files of crewai flows: nothing secret is written, and nothing a file names is
imported (issue 26)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("crewai")

FLOW = """
from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import persist
from pydantic import BaseModel


class TicketState(BaseModel):
    counter: int = 0


@persist()
class TicketFlow(Flow[TicketState]):
    @start()
    def begin(self) -> int:
        self.state.counter += 1
        return self.state.counter

    @listen(begin)
    def finish(self, value: int) -> str:
        return "done"
"""

TEST = """
import pytest
from ticket_flow import TicketFlow


@pytest.mark.golden
def test_ticket(flows, flow_store):
    flows.run(TicketFlow{args})
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    pytester.makepyfile(ticket_flow=textwrap.dedent(FLOW))
    return pytester


def golden_file(pytester: pytest.Pytester) -> Path:
    return pytester.path / "__goldens__" / "test_ticket" / "test_ticket.json"


def record(pytester: pytest.Pytester, args: str = "") -> pytest.RunResult:
    pytester.makepyfile(test_ticket=TEST.format(args=args))
    return pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")


def test_a_secret_named_input_is_refused_and_nothing_written(project: pytest.Pytester) -> None:
    result = record(project, ', inputs={"api_key": "sk-not-in-the-env-1234"}, extra_inputs=True')

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*refusing to write a golden file*secret-named fields (*inputs.api_key*"]
    )
    assert not golden_file(project).exists()


def test_a_secret_named_field_in_a_trace_line_is_refused() -> None:
    from pytest_flows._internal.secret_check import secret_fields

    found = secret_fields(["tool.called search args={'client_secret': 'abc123'}"], "trace")
    assert found == ["trace[0] (client_secret=...)"]
    assert secret_fields(["inputs={'api_key': None}", "token=0.25 logprob"], "trace") == []


def test_an_unchanged_recording_still_passes(project: pytest.Pytester) -> None:
    record(project).assert_outcomes(passed=1)
    project.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


def test_the_flow_class_a_golden_names_is_never_imported_from_the_file(
    project: pytest.Pytester,
) -> None:
    record(project).assert_outcomes(passed=1)
    marker = project.path / "imported"
    project.makepyfile(
        evil_module=f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n"
        "class Evil:\n    def __init__(self, *a, **k):\n"
        f"        Path({str(marker)!r}).write_text('constructed')\n"
    )
    golden = golden_file(project)
    document = json.loads(golden.read_text(encoding="utf-8"))
    document["runs"][0]["flow"] = "evil_module:Evil"
    golden.write_text(json.dumps(document, indent=2), encoding="utf-8")

    result = project.runpytest_inprocess("-p", "no:randomly")

    assert not marker.exists()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*[[]topology[]] run 1 (evil_module:Evil): the golden names flow class "
            "evil_module:Evil, which is not one this test ran*"
        ]
    )
