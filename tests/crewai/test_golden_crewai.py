"""Golden replay of crewai flows, in a test project: record, then change the flow."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("crewai")

FLOW = """
from crewai.flow.flow import Flow, listen, router, start
from crewai.flow.persistence import persist
from pydantic import BaseModel


class TicketState(BaseModel):
    counter: int = 0
    {note_field}
    {extra_field}


@persist()
class TicketFlow(Flow[TicketState]):
    {flow_body}

    @start()
    def begin(self) -> int:
        self.state.counter += 1
        return self.state.counter

    @router(begin)
    def decide(self, value: int) -> str:
        return "big" if value > 1 else "small"

    @listen("small")
    def {listener}(self) -> str:
        self.state.note = "small"
        return {output}
"""

TEST = """
import pytest
from ticket_flow import TicketFlow


@pytest.mark.golden
def test_ticket(flows, flow_store):
    run = flows.run(TicketFlow)
    assert run.state.counter == 1
"""


def write_flow(
    pytester: pytest.Pytester,
    *,
    listener: str = "on_small",
    output: str = "'done'",
    extra_field: str = "",
    flow_body: str = "",
    note_field: str = 'note: str = ""',
) -> None:
    source = FLOW.format(
        listener=listener,
        output=output,
        extra_field=extra_field,
        flow_body=flow_body,
        note_field=note_field,
    )
    pytester.makepyfile(ticket_flow=textwrap.dedent(source))


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # The flow module is rewritten between runs, often within the same second and at
    # the same size: a cached .pyc of the old source would be loaded instead.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    write_flow(pytester)
    pytester.makepyfile(test_ticket=TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    return pytester


def golden_file(pytester: pytest.Pytester) -> Path:
    return pytester.path / "__goldens__" / "test_ticket" / "test_ticket.json"


def run_check(pytester: pytest.Pytester) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:randomly")


def test_the_recording_holds_saves_trace_topology_and_resumes(project: pytest.Pytester) -> None:
    document = json.loads(golden_file(project).read_text(encoding="utf-8"))
    (run,) = document["runs"]
    assert run["flow"] == "ticket_flow:TicketFlow"
    assert [s["method"] for s in run["saves"]] == ["begin", "decide", "on_small"]
    assert json.loads(run["saves"][-1]["raw"])["note"] == "small"
    assert "router chose decide label=small" in run["trace"]
    assert run["topology"]["on_small"] == {"kind": "listen", "trigger": "small", "labels": []}
    assert [r["from"] for r in run["resumes"]] == [
        "save 1 (after 'begin')",
        "save 2 (after 'decide')",
        "save 3 (after 'on_small')",
    ]
    # resuming from a saved counter of 1 takes the other route
    assert "router chose decide label=big" in run["resumes"][0]["trace"]


def test_an_unchanged_flow_passes(project: pytest.Pytester) -> None:
    run_check(project).assert_outcomes(passed=1)


def test_re_recording_writes_the_same_bytes(project: pytest.Pytester) -> None:
    first = golden_file(project).read_bytes()
    result = project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    assert golden_file(project).read_bytes() == first


def test_a_changed_method_output_is_behaviour(project: pytest.Pytester) -> None:
    write_flow(project, output="'finished'")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*golden replay: * break(s) (behaviour) against __goldens__/test_ticket/test_ticket.json",  # noqa: E501
            "*[[]behaviour[]] run 1 (ticket_flow:TicketFlow)*",
            "*-method finished on_small output='done'",
            "*+method finished on_small output='finished'",
            "*--flows-golden-update*",
        ]
    )
    assert "topology" not in result.stdout.str()


def test_a_renamed_listener_is_topology(project: pytest.Pytester) -> None:
    write_flow(project, listener="on_tiny")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (topology)*",
            "*[[]topology[]] run 1 (ticket_flow:TicketFlow): methods, routes or listeners*",
            "*- on_small: listen(small) (no longer in the flow)",
            "*+ on_tiny: listen(small) (new: a resumed run would also run it after small)",
            "*keep the old method/route/executor names*",
        ]
    )


def test_a_new_required_state_field_is_schema(project: pytest.Pytester) -> None:
    # crewai builds a state with no arguments: a required field needs an initial_state
    write_flow(
        project, extra_field="priority: int", flow_body="initial_state = TicketState(priority=2)"
    )
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (schema)*",
            "*[[]schema[]] run 1 (ticket_flow:TicketFlow), save 1 (after 'begin'): the stored "
            "state does not fit today's TicketState",
            "*new required field 'priority': the stored state has no value",
            "*give new fields a default*",
        ]
    )


def test_a_changed_field_type_is_schema(project: pytest.Pytester) -> None:
    write_flow(project, note_field="note: list[str] = []")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (schema)*",
            "*changed type of 'note': stored '' fails (list_type: *",
        ]
    )


def test_schema_problems_name_new_removed_and_retyped_fields() -> None:
    from pydantic import BaseModel, ConfigDict

    from pytest_flows.crewai._golden import state_model_problems

    class Today(BaseModel):
        counter: str = ""
        priority: int

    stored = {"id": "x", "counter": 1, "note": "gone"}
    assert state_model_problems(Today, stored) == [
        "changed type of 'counter': stored 1 fails (string_type: Input should be a valid string)",
        "new required field 'priority': the stored state has no value",
        "removed field 'note': the stored value would be dropped on resume",
    ]

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        counter: int = 0

    assert state_model_problems(Strict, {"counter": 1, "note": "x"}) == [
        "removed field 'note': the model forbids it now"
    ]
    assert state_model_problems(Strict, {"counter": 2}) == []


def test_a_new_field_with_a_default_is_no_break(project: pytest.Pytester) -> None:
    write_flow(project, extra_field="priority: int = 0")
    run_check(project).assert_outcomes(passed=1)


def test_stored_bytes_today_cannot_decode_are_codec(project: pytest.Pytester) -> None:
    path = golden_file(project)
    document = json.loads(path.read_text(encoding="utf-8"))
    # as if the stored format had changed under the codec: JSON no longer
    document["runs"][0]["saves"][1]["raw"] = "gASVEAAAAAAAAAB9lC4="
    path.write_text(json.dumps(document), encoding="utf-8")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (codec)*",
            "*[[]codec[]] run 1 (ticket_flow:TicketFlow), save 2 (after 'decide'): today's "
            "codec cannot decode it",
            "*is not valid JSON*",
        ]
    )


def test_a_missing_golden_says_how_to_record_it(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert()
    write_flow(pytester)
    pytester.makepyfile(test_ticket=TEST)
    result = run_check(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no golden recording at *test_ticket.json*--flows-golden-update*"]
    )


def test_goldens_are_the_same_bytes_under_another_hash_seed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = golden_file(project).read_bytes()
    monkeypatch.setenv("PYTHONHASHSEED", "987")
    result = project.runpytest_subprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    assert golden_file(project).read_bytes() == first


# CI: the test above (another hash seed, another process) and
# test_snapshot_stability (xdist workers write the same snapshot bytes).
@pytest.mark.long
def test_goldens_are_the_same_bytes_under_xdist_and_check_under_another_hash_seed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = golden_file(project).read_bytes()
    monkeypatch.setenv("PYTHONHASHSEED", "987")
    result = project.runpytest_subprocess(
        "-p", "no:randomly", "-p", "xdist", "-n", "2", "--flows-golden-update"
    )
    result.assert_outcomes(passed=1)
    assert golden_file(project).read_bytes() == first
    # ... and checks against them in yet another (one process: xdist is covered above).
    monkeypatch.setenv("PYTHONHASHSEED", "5")
    project.runpytest_subprocess("-p", "no:randomly").assert_outcomes(passed=1)


SECRET = "sk-golden-" + "0123456789abcdef"


def test_a_secret_value_is_never_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.syspathinsert()
    write_flow(pytester)
    pytester.makepyfile(
        test_ticket=f"""
import pytest
from ticket_flow import TicketFlow


@pytest.mark.golden
def test_ticket(flows, flow_store):
    flows.run(TicketFlow, inputs={{"note": {SECRET!r}}})
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*refusing to write a golden file*$OPENAI_API_KEY*"])
    # (the plugin's "pytest-flows trace" report section shows the run's inputs as is)
    assert all(SECRET not in line for line in result.stdout.lines if "refusing" in line)
    assert not golden_file(pytester).exists()


def test_a_secret_named_state_field_is_never_written(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert()
    write_flow(pytester, extra_field='api_key: str = "k-123"')
    pytester.makepyfile(test_ticket=TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*secret-named fields (state.api_key)*"])
    assert not golden_file(pytester).exists()
