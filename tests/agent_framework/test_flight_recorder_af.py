"""The flight recorder with Agent Framework: a workflow recorded in a plain Python
process (its agent's chat client talking HTTP to a loopback OpenAI-compatible server),
replayed under the harness with every model call answered from the record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agent_framework")

import flight_af

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.recorder import read_record

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "crewai"))
from loopback_openai import LoopbackOpenAI  # noqa: E402


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("af-recordings")
    with LoopbackOpenAI() as server:
        done = subprocess.run(
            [sys.executable, str(HERE / "flight_af_production.py"), str(out), server.base_url],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    records = {}
    for path in report["written"]:
        record = read_record(path)
        name = str(record.header["workflow"]).removesuffix("-flow")
        if name == "writer" and record.of_kind("llm.request")[0].get("stream"):
            name = "streamed"
        records[name] = record
    report["records"] = records
    report["record"] = records["writer"]
    report["requests"] = list(server.requests)
    return report


def test_a_recorded_workflow_replays_with_the_same_trace_and_outputs(flows, production):
    record = production["record"]
    assert production["test_modules"] == []
    assert len(production["requests"]) == 7  # the real HTTP calls happened in production
    assert [e["method"] for e in record.of_kind("method.started")] == ["writer", "publish"]
    assert record.of_kind("llm.request")[0]["method"] == "writer"

    replayed = flows.replay(record.path, flight_af.build_writer())

    assert not replayed.diverged, replayed.report()
    assert replayed.run.outputs == production["outputs"]["writer"]
    assert replayed.replayed_trace == replayed.recorded_trace


def test_a_changed_instruction_is_reported_at_its_request(flows, production, monkeypatch):
    workflow = flight_af.build_writer()
    replayed = flows.replay(production["record"].path, workflow)
    assert not replayed.diverged, replayed.report()

    monkeypatch.setattr(flight_af, "INSTRUCTIONS", "Write two lines about the topic.")
    # The instructions are not part of the messages at the chat-client layer; the
    # message is: a different start message is a different first request.
    record = production["record"]
    record.header["run_kwargs"] = {"message": "tides and the sun"}
    changed = flows.replay(record, flight_af.build_writer())
    assert changed.first is not None and changed.first.kind == "prompt"
    assert changed.first.where == "LLM call 1 of method writer"
    assert "+  tides and the sun" in changed.first.diff


def test_the_record_names_the_function_that_built_the_workflow(flows, production):
    records = production["records"]
    assert records["writer"].header["factory"] == "flight_af:build_writer"
    assert records["review"].header["factory"] == "flight_af:build_review"
    assert records["titled"].header["factory"] is None  # build_titled needs an argument

    with pytest.raises(FlowsUsageError, match=r"flows.replay\(path, 'flight_af:build_writer'\)"):
        flows.replay(records["writer"].path)
    with pytest.raises(FlowsUsageError, match=r"flows.replay\(path, build_workflow\(\)\)"):
        flows.replay(records["titled"].path)
    by_name = flows.replay(records["writer"].path, "flight_af:build_writer")
    assert not by_name.diverged, by_name.report()
    by_function = flows.replay(records["writer"].path, flight_af.build_writer)
    assert not by_function.diverged, by_function.report()


def test_a_streamed_run_is_recorded_and_replays(flows, production):
    record = production["records"]["streamed"]
    (response,) = record.of_kind("llm.response")
    assert response["stream"] is True
    assert response["response"] == "4 words, starting 'rivers and the sea' "

    assert record.run_kwargs == {"message": "rivers and the sea", "stream": True}
    replayed = flows.replay(record.path, flight_af.build_writer())
    assert not replayed.diverged, replayed.report()
    assert [str(o) for o in replayed.run.outputs] == production["outputs"]["streamed"]
    assert "stream=yes" in replayed.run.trace.render()  # replayed streamed, as recorded


def test_a_request_info_answer_is_recorded_and_answered_from_the_record(flows, production):
    record = production["records"]["review"]
    assert record.outcome == "finished"  # the paused run and its continuation: one record
    (asked,) = record.of_kind("human.asked")
    (answered,) = record.of_kind("human.answered")
    assert asked["via"] == "request_info" and asked["response_type"] == "Verdict"
    assert answered["request_id"] == asked["request_id"] and answered["method"] == "review"
    assert answered["answer"] == {"approved": True, "note": "ship it"}

    replayed = flows.replay(record.path, flight_af.build_review())
    assert not replayed.diverged, replayed.report()
    assert [str(o) for o in replayed.run.outputs] == production["outputs"]["review"]


def test_the_recorded_answer_is_what_today_s_code_gets(flows, production):
    record = read_record(production["records"]["review"].path)
    (answered,) = record.of_kind("human.answered")
    answered["answer"] = {"approved": False, "note": "too short"}  # as if rejected
    replayed = flows.replay(record, flight_af.build_review())
    assert [str(o) for o in replayed.run.outputs] == [
        "rejected (too short): 2 words, starting 'a lighthouse'"
    ]
    (outcome,) = [d for d in replayed.divergences if d.kind == "outcome"]
    assert 'recorded: ["approved (ship it)' in outcome.message


def test_flows_replay_and_export_rebuild_workflows_from_their_factory(pytester, production):
    records = production["records"]
    directory = records["writer"].path.parent
    result = pytester.runpytest_inprocess(
        f"--flows-replay={directory}", "--flows-replay-allow=flight_af", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["*does not name the function that builds 'titled-flow'*"])
    result.stdout.fnmatch_lines(["*record_flows(..., factories={'titled-flow': *"])

    from pytest_flows._internal.flight.export import export

    test = export(records["review"].path, pytester.path)
    assert "from flight_af import build_review" in test.read_text()
    assert "flows.replay(RECORD, build_review())" in test.read_text()
    pytester.runpytest_inprocess(str(test), "-p", "no:randomly").assert_outcomes(passed=1)
    with pytest.raises(ValueError, match="does not name the function that builds"):
        export(records["titled"].path, pytester.path)


def test_factories_name_what_the_recorder_cannot_see(tmp_path):
    from pytest_flows.recorder import record_flows, stop_recording
    from pytest_flows.recorder._agent_framework import _factory

    record_flows(
        tmp_path, frameworks=["agent_framework"], factories={"named": "flight_af:build_writer"}
    )
    try:
        assert _factory(flight_af.build_writer()) == "flight_af:build_writer"  # seen at build()
        assert _factory(flight_af.build_titled("named")) == "flight_af:build_writer"  # given
        assert _factory(flight_af.build_titled("other")) is None  # needs an argument
    finally:
        stop_recording()
    with pytest.raises(ValueError, match=r"'package\.module:build_workflow'"):
        record_flows(tmp_path, factories={"named": "build_writer"})


# -- tools ----------------------------------------------------------------------------------
def test_an_agent_s_tool_call_is_recorded_and_answered_from_the_record(
    flows, production, monkeypatch
):
    record = production["records"]["clerk"]
    (reply, _) = record.of_kind("llm.response")
    assert reply["response_type"] == "tool_calls"
    assert reply["response"][0]["name"] == "lookup_order"
    (started,) = record.of_kind("tool.started")
    (finished,) = record.of_kind("tool.finished")
    assert started["method"] == "clerk" and started["args"] == {"query": "A-17"}
    assert finished["output"] == "order A-17: shipped"
    assert finished["call_id"] == started["call_id"] == reply["response"][0]["id"]
    second = record.of_kind("llm.request")[1]
    assert second["messages"][-1]["content"] == "[result order A-17: shipped]"

    # Today's order system would answer otherwise: the replay answers from the record.
    monkeypatch.setattr(flight_af, "ORDER_STATUS", "lost")
    replayed = flows.replay(record.path, flight_af.build_clerk())
    assert not replayed.diverged, replayed.report()
    assert [str(o) for o in replayed.run.outputs] == production["outputs"]["clerk"]
    (call,) = flows.bound("tools").calls  # the replay's fake_tools answered it
    assert call.caller["tool"] == "lookup_order" and call.caller["method"] == "clerk"
    assert call.reply == "order A-17: shipped"


def test_an_agent_s_tool_called_otherwise_today_is_reported(flows, production, monkeypatch):
    record = read_record(production["records"]["clerk"].path)
    (started,) = record.of_kind("tool.started")
    started["args"] = {"query": "B-2"}  # production's tool ran for B-2 (a wrapper rewrote it)
    first = flows.replay(record, flight_af.build_clerk()).first
    assert first is not None and first.kind == "tool"
    assert first.where == "tool call 1 of lookup_order in method clerk"
    assert 'called with {"query": "A-17"}; recorded: {"query": "B-2"}' in first.message

    # Today's code renamed the tool: the model would be offered find_order, so the
    # recorded reply (a call of lookup_order) cannot be given; the run stops there.
    monkeypatch.setattr(flight_af, "CLERK_TOOLS", [flight_af.find_order])
    renamed = flows.replay(production["records"]["clerk"].path, flight_af.build_clerk())
    prompt, calls, unused, *_ = renamed.divergences
    assert prompt.kind == "prompt" and prompt.where == "LLM call 1 of method clerk"
    assert prompt.message == "tools offered were ['lookup_order'], now ['find_order']"
    assert calls.kind == "tool" and calls.where == "LLM call 1 of method clerk"
    assert "calls tool lookup_order, which today's code does not offer" in calls.message
    assert unused.kind == "tool" and "today's code did not make it" in unused.message
    assert renamed.run.error is not None


# -- checkpoints ----------------------------------------------------------------------------
def test_checkpoints_are_recorded_and_compared(flows, production, monkeypatch):
    record = production["records"]["checkpointed"]
    saves = record.of_kind("checkpoint.saved")
    assert [s["iteration"] for s in saves] == [0, 1, 2]  # entry, then after each superstep
    assert saves[-1]["state"]["kept"] == "7 words,"
    assert saves[-1]["state"]["api_key"] == "<secret>"  # scrubbed, and not compared
    assert production["outputs"]["checkpointed"] == ["kept 7 words"]

    replayed = flows.replay(record.path, flight_af.build_checkpointed())
    assert not replayed.diverged, replayed.report()

    monkeypatch.setattr(flight_af, "KEEP_WORDS", 1)  # today's code keeps less
    changed = flows.replay(record.path, flight_af.build_checkpointed())
    (first,) = changed.divergences
    assert first.kind == "state" and first.where == "checkpoint 3 (superstep 2)"
    assert '-  "kept": "7 words,"' in first.diff and '+  "kept": "7"' in first.diff


def test_the_production_key_reaches_no_agent_framework_record(production):
    import gzip

    for record in production["records"].values():
        assert "sk-production-key-af" not in gzip.decompress(record.path.read_bytes()).decode()
