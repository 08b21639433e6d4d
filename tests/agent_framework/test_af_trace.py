"""The superstep trace: what ran in each superstep, canonical and reproducible."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import af_workflows as wf
import pytest
from agent_framework import WorkflowRunResult

from pytest_flows.agent_framework import FlowsCheckpointStorage, WorkflowRun, explore_seeds

DIAMOND_TRACE = """\
workflow started diamond input='hello'
checkpoint saved <uuid:1> superstep=0 parent=-
superstep started 1
executor invoked split edge=input->split input='hello'
state set text value='hello' by=split
message sent split target=* data='hello'
state committed text value='hello'
checkpoint saved <uuid:2> superstep=1 parent=<uuid:1>
superstep started 2
executor invoked reverse edge=split->reverse input='hello'
message sent reverse target=* data='olleh'
executor invoked upper edge=split->upper input='hello'
message sent upper target=* data='HELLO'
checkpoint saved <uuid:3> superstep=2 parent=<uuid:2>
superstep started 3
executor invoked join edge=upper+reverse->join input=["HELLO", "olleh"]
message sent join target=* data=Joined(parts=['HELLO', 'olleh'])
checkpoint saved <uuid:4> superstep=3 parent=<uuid:3>
superstep started 4
executor invoked short edge=join->short input=Joined(parts=['HELLO', 'olleh'])
workflow output short data='SHORT:HELLO|olleh'
checkpoint saved <uuid:5> superstep=4 parent=<uuid:4>
workflow finished diamond status=IDLE
"""


def storage() -> FlowsCheckpointStorage:
    return FlowsCheckpointStorage(allowed_types=[wf.Joined, wf.Ticket, wf.ReviewRequest])


def test_fan_out_fan_in_then_switch_case_trace(flows):
    run = flows.run(wf.build_diamond(storage()), "hello")

    assert isinstance(run, WorkflowRun)
    assert run.outputs == ["SHORT:HELLO|olleh"]
    assert run.output == "SHORT:HELLO|olleh"
    assert run.status == "IDLE"
    assert run.pending == []
    assert run.state == {"text": "hello"}
    assert len(run.checkpoints) == 5
    assert isinstance(run.result, WorkflowRunResult)
    assert run.trace.render() == DIAMOND_TRACE


def test_switch_case_takes_the_long_branch(flows):
    run = flows.run(wf.build_diamond(), "hello world")

    assert run.outputs == ["LONG:HELLO WORLD|dlrow olleh"]
    assert run.trace.names("executor.invoked") == ["split", "reverse", "upper", "join", "long"]
    (delivery,) = [e for e in run.trace.of_kind("executor.invoked") if e.name == "long"]
    assert delivery.get("edge") == "join->long"


@pytest.mark.parametrize(
    ("text", "route", "label"),
    [
        ("Site is DOWN", "escalate", "on-call"),
        ("Where is my invoice?", "billing", "billing"),
        ("How do I log in?", "faq", "faq bot"),
    ],
)
def test_switch_case_routes_each_ticket_to_one_case(flows, text, route, label):
    run = flows.run(wf.build_triage(), text)

    assert run.outputs == [f"{label}: {text}"]
    assert run.state == {"routed_to": label}
    assert run.trace.names("executor.invoked") == ["classify", route]
    (delivery,) = run.trace.of_kind("executor.invoked")[1:]
    assert delivery.get("edge") == f"classify->{route}"


def test_trace_is_the_same_for_every_seed_of_an_order_independent_workflow(flows):
    exploration = explore_seeds(flows, lambda: wf.build_diamond(storage()), "hello", seeds=range(8))

    exploration.assert_deterministic()
    assert exploration.distinct == 1
    assert all(run.trace.render() == DIAMOND_TRACE for run in exploration.runs.values())


def test_repeated_runs_render_byte_identical_traces(flows):
    first = flows.run(wf.build_diamond(storage()), "hello").trace.render()
    second = flows.run(wf.build_diamond(storage()), "hello").trace.render()

    assert first == second == DIAMOND_TRACE


_PROBE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {here!r})
    import af_workflows as wf
    from pytest_flows.agent_framework import FlowsCheckpointStorage
    from pytest_flows._internal.session import FlowsSession

    for seed in {seeds!r}:
        with FlowsSession(seed=seed, test_id="probe") as flows:
            storage = FlowsCheckpointStorage(allowed_types=[wf.Joined])
            sys.stdout.write(flows.run(wf.build_diamond(storage), "hello").trace.render())
        sys.stdout.write("\\0")
    """
)


def test_trace_is_the_same_under_any_pythonhashseed():
    # One interpreter per hash seed runs every scheduler seed (agent_framework's import
    # is most of an interpreter's cost; one per seed and hash seed took twice as long).
    here = str(Path(__file__).parent)
    seeds = [0, 5]
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", _PROBE.format(here=here, seeds=seeds)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        traces = done.stdout.split("\0")
        assert traces.pop() == ""
        assert traces == [DIAMOND_TRACE] * len(seeds), f"PYTHONHASHSEED={hash_seed}"


def test_a_failing_executor_fails_the_run_with_its_trace(flows):
    with pytest.raises(ValueError, match="cannot handle 'go'") as raised:
        flows.run(wf.build_failing(), "go")

    notes = "\n".join(getattr(raised.value, "__notes__", []))
    assert "executor failed boom error=\"ValueError: cannot handle 'go'\"" in notes


def test_a_failed_run_is_returned_with_raise_on_error_false(flows):
    run = flows.run(wf.build_failing(), "go", raise_on_error=False)

    assert run.failed
    assert isinstance(run.error, ValueError)
    assert run.status == "FAILED"
    assert run.outputs == []
    lines = run.trace.lines()
    assert lines[-3:] == [
        "executor invoked boom edge=start->boom input='go'",
        "executor failed boom error=\"ValueError: cannot handle 'go'\"",
        "workflow failed failing error=\"ValueError: cannot handle 'go'\"",
    ]


def test_virtual_time_costs_nothing(flows):
    # time.monotonic() reads the virtual clock in a flows test; the wall needs the OS clock
    started = time.clock_gettime(time.CLOCK_MONOTONIC)
    run = flows.run(wf.build_counter(limit=5, pause=600), 1)

    assert run.outputs[-1] == "done at 5 after 5 visits"
    assert flows.clock.monotonic() == pytest.approx(2400.0)  # four 10-minute sleeps
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - started < 60


def test_streaming_run_collects_the_events(flows):
    run = flows.run(wf.build_triage(), "refund please", stream=True)

    assert run.outputs == ["billing: refund please"]
    assert [e.type for e in run.events][:2] == ["started", "status"]
    assert run.trace.lines()[0] == "workflow started triage input='refund please' stream=yes"


@pytest.mark.asyncio
async def test_arun_in_an_async_test(flows):
    run = await flows.arun(wf.build_triage(), "urgent: site down")

    assert run.outputs == ["on-call: urgent: site down"]


def test_a_sync_function_executor_runs_offloaded_and_is_traced(flows):
    run = flows.run(wf.build_sync(), "three little words")

    assert run.state == {"words": 3}
    assert "state set words value=3 by=count_words" in run.trace.lines()
