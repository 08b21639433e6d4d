"""The flight recorder, end to end: crewAI flows recorded in a plain Python process (no
pytest) with crewAI's real ``LLM`` calling a loopback OpenAI-compatible server, then
replayed under the harness with every LLM call answered from the record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import flight_flows
import pytest
from flight_flows import AgentFlow, PersistFlow, RaceFlow, StreamFlow, TicketFlow, ToolFlow
from loopback_openai import LoopbackOpenAI

from pytest_flows._internal.errors import FlowsUsageError, FlowsWarning
from pytest_flows.recorder import read_record

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One production process records every run these tests replay (the slow part: it
    imports crewAI)."""
    out = tmp_path_factory.mktemp("recordings")
    # The slow lookup's answer is held back long enough that the fast one comes back
    # first even on a loaded machine (0.3 s was not: the race flipped under load).
    with LoopbackOpenAI(delays={"slow lookup": 1.0}) as server:
        done = subprocess.run(
            [sys.executable, str(HERE / "flight_production.py"), str(out), server.base_url],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    records = {}
    for path in map(Path, report["written"]):
        record = read_record(path)
        inputs = record.run_kwargs.get("inputs") or {}
        ticket = inputs.get("ticket", "")
        special = {
            "RaceFlow": "race",
            "ToolFlow": "tool",
            "PersistFlow": "persist",
            "AgentFlow": "agent",
            "StreamFlow": "chunks",
        }
        name = special.get(record.target.rpartition(":")[2]) or (
            "long"
            if "export" in ticket
            else "failed"
            if "Explode" in ticket
            else "streamed"
            if "streamed" in ticket
            else "short"
        )
        records[name] = record
    report["records"] = records
    report["server_requests"] = len(server.requests)
    return report


def test_the_production_process_loaded_no_test_dependency(production):
    assert production["test_modules"] == []
    assert sorted(production["records"]) == [
        "agent",
        "chunks",
        "failed",
        "long",
        "persist",
        "race",
        "short",
        "streamed",
        "tool",
    ]


def test_the_production_key_reaches_no_record(production):
    import gzip

    for record in production["records"].values():
        text = gzip.decompress(record.path.read_bytes()).decode()
        assert "sk-production-key" not in text
        assert "0123456789abcdef" not in text


def test_a_recorded_run_replays_with_the_same_trace_and_output(flows, production):
    record = production["records"]["long"]
    assert record.outcome == "finished"
    replayed = flows.replay(record.path, TicketFlow)

    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == production["results"]["long"]
    assert replayed.replayed_trace == replayed.recorded_trace
    # The harness's own trace shows the recorded route.
    assert "router chose route label=long" in replayed.run.trace.render()


def test_a_streaming_run_is_recorded_and_replays(flows, production):
    """Flow(stream=True): crewAI's kickoff runs the flow under its stream session."""
    record = production["records"]["streamed"]
    assert production["results"]["streamed_frames"] > 0
    assert record.outcome == "finished"
    assert record.header["stream"] is True
    replayed = flows.replay(record.path, TicketFlow)
    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == production["results"]["streamed"]


def test_a_streamed_reply_replays_with_the_same_chunks(flows, production, monkeypatch):
    """Flow(stream=True) with a streaming LLM: the consumer got the reply's chunks as
    frames; the record has them, and the replay streams the same chunks."""
    record = production["records"]["chunks"]
    chunks = production["results"]["chunks"]
    assert len(chunks) > 1 and "llm_stream_chunk" in production["results"]["stream_frames"]
    assert record.header["stream"] is True
    assert [e["chunk"] for e in record.of_kind("llm.chunk")] == chunks

    replayed = flows.replay(record.path, StreamFlow)
    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == "".join(chunks)
    (stream,) = [e for e in replayed.replayed_trace.events if e.kind == "llm.stream"]
    assert json.loads(dict(stream.fields)["chunks"]) == chunks
    assert replayed.replayed_trace == replayed.recorded_trace

    # A replay that streamed other chunks is reported (here: the record's chunks of
    # that reply no longer make up its text, so the replay answers it with the text,
    # which the LLM, built to stream, streams as one chunk).
    edited = read_record(record.path)
    edited.of_kind("llm.chunk")[0]["chunk"] = "Dear customer, "
    (first, *_) = flows.replay(edited, StreamFlow).divergences
    assert first.kind == "stream" and first.where == "streamed reply 1 of method draft"
    assert first.message.startswith("streamed 1 chunk(s) [")
    assert "; recorded 4: " in first.message

    # Today's code asks for the reply whole where the recorded run streamed it (here:
    # the record says it streamed and today's does not; either way it is reported).
    edited = read_record(record.path)
    edited.of_kind("llm.request")[0]["stream"] = False
    (first, *_) = flows.replay(edited, StreamFlow).divergences
    assert first.kind == "stream" and first.where == "LLM request 1 of method draft"
    assert "asks for the reply streamed; recorded: whole" in first.message


def test_every_recorded_request_and_answer_is_in_the_record(production):
    record = production["records"]["long"]
    requests = record.of_kind("llm.request")
    assert [r["method"] for r in requests] == ["classify", "escalate"]
    assert requests[0]["messages"][0]["content"].startswith(flight_flows.CLASSIFY_PROMPT)
    responses = record.of_kind("llm.response")
    assert responses[0]["usage"]["total_tokens"] == 14
    assert [e["method"] for e in record.of_kind("method.started")] == [
        "classify",
        "route",
        "escalate",
    ]
    assert all(e["thread"] for e in record.entries)


def test_a_run_that_failed_in_production_fails_the_same_way(flows, production):
    record = production["records"]["failed"]
    assert record.outcome == "failed"
    replayed = flows.replay(record.path, TicketFlow)

    assert not replayed.diverged, replayed.report()
    assert isinstance(replayed.run.error, ValueError)
    assert "Explode now" in str(replayed.run.error)


def test_a_changed_prompt_is_reported_at_its_request_with_a_diff(flows, production, monkeypatch):
    monkeypatch.setattr(flight_flows, "CLASSIFY_PROMPT", "Classify this support ticket:")
    replayed = flows.replay(production["records"]["short"].path, TicketFlow)

    first = replayed.first
    assert first is not None and first.kind == "prompt"
    assert first.where == "LLM call 1 of method classify"
    assert "-  Classify this ticket: reset my password" in first.diff
    assert "+  Classify this support ticket: reset my password" in first.diff
    assert "prompt differs" in replayed.report()


def test_two_listeners_that_raced_replay_in_the_recorded_order(flows, production):
    record = production["records"]["race"]
    assert production["results"]["race"] == ["fast", "slow"]  # slow's LLM answer came late
    replayed = flows.replay(record.path, RaceFlow)

    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == ["fast", "slow"]
    assert "rebuilt as schedule 's'" in replayed.interleaving  # the recorded latencies did it
    assert replayed.schedule == replayed.run.schedule == "s"


def test_a_route_that_differs_today_is_reported(flows, production, monkeypatch):
    monkeypatch.setattr(flight_flows, "LONG_AFTER", 40)  # today's router: few tickets are long
    replayed = flows.replay(production["records"]["long"].path, TicketFlow)

    first = replayed.first
    assert first is not None and first.kind == "output"
    assert first.where == "method route"
    assert "returned 'short' (recorded: 'long')" in first.message
    kinds = [d.kind for d in replayed.divergences]
    assert "method" in kinds and "outcome" in kinds  # answer ran instead of escalate


def test_replay_needs_the_flow_named_and_the_right_one(flows, production):
    path = production["records"]["long"].path
    with pytest.raises(FlowsUsageError, match="name what the record was made from"):
        flows.replay(path)
    with pytest.raises(FlowsUsageError, match="not flight_flows:RaceFlow"):
        flows.replay(path, RaceFlow)


def test_flows_replay_collects_every_record_as_a_test(pytester, production):
    directory = production["records"]["long"].path.parent
    run_ids = sorted(record.run_id for record in production["records"].values())

    refused = pytester.runpytest_inprocess(f"--flows-replay={directory}", "-p", "no:randomly")
    refused.assert_outcomes(failed=9)
    refused.stdout.fnmatch_lines(["*--flows-replay-allow=flight_flows*"])

    result = pytester.runpytest_inprocess(
        f"--flows-replay={directory}",
        "--flows-replay-allow=flight_flows",
        "-p",
        "no:randomly",
        "-v",
    )
    result.assert_outcomes(passed=9)
    for run_id in run_ids:
        result.stdout.fnmatch_lines([f"*test_replay?{run_id}?*PASSED*"])


def test_export_writes_a_ready_test_module_for_one_incident(pytester, production):
    record = production["records"]["failed"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_flows.recorder", "export", str(record.path), "--to", "."],
        capture_output=True,
        text=True,
        cwd=pytester.path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    test = pytester.path / f"test_replay_{record.run_id}.py"
    assert f"wrote test_replay_{record.run_id}.py" in done.stdout
    text = test.read_text()
    assert "from flight_flows import TicketFlow" in text
    assert "failed with ValueError" in text
    assert (pytester.path / "flight_records" / record.path.name).is_file()
    result = pytester.runpytest_inprocess(str(test), "-p", "no:randomly")
    result.assert_outcomes(passed=1)


def _write_record(path: Path, target: str, entries: list[dict], end: dict) -> Path:
    """A record as the recorder writes it (for edges a loopback LLM cannot produce)."""
    import gzip

    header = {
        "kind": "header",
        "format": "pytest-flows-record",
        "version": 1,
        "run_id": "synthetic01",
        "framework": "crewai",
        "target": target,
        "run_kwargs": {"inputs": {}},
    }
    lines = [header, *({"seq": n, "t": 0.0, **e} for n, e in enumerate(entries, 1)), end]
    path.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))
    return path


def test_human_answers_and_crew_results_are_answered_from_the_record(flows, tmp_path):
    from flight_flows import AskFlow, CrewFlow

    from pytest_flows._internal.trace import render_value

    asked = _write_record(
        tmp_path / "ask.flight.jsonl.gz",
        "flight_flows:AskFlow",
        [
            {"kind": "method.started", "method": "greet"},
            {"kind": "human.answered", "method": "greet", "via": "ask", "answer": "Ada"},
            {"kind": "method.finished", "method": "greet", "rendered": render_value("hello Ada")},
        ],
        {"kind": "end", "outcome": "finished", "rendered": render_value("hello Ada")},
    )
    replayed = flows.replay(asked, AskFlow)
    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == "hello Ada"

    crewed = _write_record(
        tmp_path / "crew.flight.jsonl.gz",
        "flight_flows:CrewFlow",
        [
            {"kind": "method.started", "method": "research"},
            # None of the crew's agents' LLM calls: it is answered whole (and said).
            {"kind": "crew.finished", "method": "research", "crew": "crew", "raw": "tides: notes"},
            {
                "kind": "method.finished",
                "method": "research",
                "rendered": render_value("tides: notes"),
            },
        ],
        {"kind": "end", "outcome": "finished", "rendered": render_value("tides: notes")},
    )
    with pytest.warns(FlowsWarning, match="crew 'crew' in method research was answered whole"):
        replayed = flows.replay(crewed, CrewFlow)
    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == "tides: notes"
    assert "not compared: crew 'crew'" in replayed.report()


def test_the_wrapped_kickoff_takes_inputs_first_and_a_sink_failure_stays_inside(caplog):
    """What the recorder's crewAI part relies on: kickoff passes inputs first; a sink
    that fails logs and returns (it runs inside crewAI's emit)."""
    import inspect
    import logging

    from crewai.flow.runtime import Flow

    from pytest_flows._internal.flight.capture import FlightRecorder, RunRecording
    from pytest_flows.recorder._crewai import CrewAISink

    assert list(inspect.signature(Flow.kickoff_async).parameters)[:2] == ["self", "inputs"]
    assert "self.kickoff_async(" in inspect.getsource(Flow.kickoff)
    # The @persist save and the LLM's tool execution, as the recorder wraps them.
    from crewai.flow.persistence.decorators import PersistenceDecorator
    from crewai.llms.base_llm import BaseLLM

    persist = inspect.signature(PersistenceDecorator.persist_state).parameters
    assert list(persist)[:2] == ["flow_instance", "method_name"]
    execute = inspect.signature(BaseLLM._handle_tool_execution).parameters
    assert list(execute)[:4] == ["self", "function_name", "function_args", "available_functions"]

    class Broken:
        type = "method_execution_started"

        @property
        def method_name(self) -> str:
            raise RuntimeError("odd event")

    run = RunRecording(FlightRecorder("unused"), "crewai", "1", "m:F", {})
    with caplog.at_level(logging.ERROR, logger="pytest_flows.recorder"):
        CrewAISink(run)(object(), Broken())
    assert "recording a crewAI event failed" in caplog.text


# -- tools and persisted states -------------------------------------------------------------
def test_a_tool_the_llm_ran_is_recorded_and_answered_from_the_record(flows, production):
    record = production["records"]["tool"]
    (started,) = record.of_kind("tool.started")
    assert started["tool"] == "lookup_order" and started["args"] == {"query": "A-17"}
    assert record.of_kind("tool.finished")[0]["output"] == "order A-17: shipped"
    assert production["results"]["tool"] == "order A-17: shipped"

    calls = []
    real = flight_flows.lookup_order
    try:
        # Today's tool would answer otherwise: the replay answers it from the record.
        flight_flows.lookup_order = lambda query: calls.append(query) or "not shipped"
        replayed = flows.replay(record.path, ToolFlow)
    finally:
        flight_flows.lookup_order = real
    assert not replayed.diverged, replayed.report()
    assert calls == []
    assert replayed.run.output == "order A-17: shipped"
    # The model's reply was the tool call; the tool's result came from the record.
    (call,) = flows.bound("tools").calls
    assert call.caller["tool"] == "lookup_order" and call.request.data["arguments"] == {
        "query": "A-17"
    }


def test_an_agent_s_tool_is_answered_from_the_record(flows, production, monkeypatch):
    record = production["records"]["agent"]
    (started,) = record.of_kind("tool.started")
    assert started["agent"] == "Clerk" and started["args"] == {"query": "B-5"}

    def offline(query: str) -> str:
        raise AssertionError("the replay must not run the real tool")

    monkeypatch.setattr(flight_flows, "lookup_order", offline)
    replayed = flows.replay(record.path, AgentFlow)
    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == production["results"]["agent"]
    (call,) = flows.bound("tools").calls  # the replay's fake_tools answered it
    assert call.caller["method"] == "assist" and call.reply == "order B-5: shipped"


def test_a_tool_called_with_other_arguments_is_reported(flows, production, tmp_path):
    import gzip

    record = production["records"]["tool"]
    lines = [json.loads(line) for line in gzip.decompress(record.path.read_bytes()).splitlines()]
    for line in lines:
        # The model asked for order A-17; the tool ran for B-2 (a wrapper rewrote it).
        if line.get("kind") == "llm.response":
            line["response_type"] = "tool_calls"
            line["response"] = [{"name": "lookup_order", "arguments": '{"query": "A-17"}'}]
        if line.get("kind") == "tool.started":
            line["args"] = {"query": "B-2"}
    edited = tmp_path / record.path.name
    edited.write_bytes(gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode()))
    first = flows.replay(edited, ToolFlow).first
    assert first is not None and first.kind == "tool"
    assert first.where == "tool call 1 of lookup_order in method lookup"
    assert 'called with {"query": "A-17"}; recorded: {"query": "B-2"}' in first.message


def test_a_tool_today_s_code_does_not_call_is_reported(flows, production, monkeypatch):
    monkeypatch.setattr(flight_flows, "LOOKUP_ASKS_THE_MODEL", False)
    replayed = flows.replay(production["records"]["tool"].path, ToolFlow)
    kinds = {d.kind: d for d in replayed.divergences}
    assert "today's code did not make it" in kinds["tool"].message


def test_persisted_states_are_recorded_scrubbed_and_compared(flows, production, monkeypatch):
    import gzip

    record = production["records"]["persist"]
    saves = record.of_kind("state.saved")
    assert [s["method"] for s in saves] == ["classify", "done"]
    assert saves[0]["state"]["label"] == "6" and saves[0]["state"]["ticket"] == "reset my password"
    assert (
        saves[0]["state"]["api_key"] != "" and "sk-production" not in saves[0]["state"]["api_key"]
    )
    assert "sk-production-key" not in gzip.decompress(record.path.read_bytes()).decode()

    replayed = flows.replay(record.path, PersistFlow)
    assert not replayed.diverged, replayed.report()

    monkeypatch.setattr(flight_flows, "LABEL_WORDS", 2)
    changed = flows.replay(record.path, PersistFlow)
    first = changed.first
    assert first is not None and first.kind == "state"
    assert first.where == "state saved after method classify"
    assert '- "label": "6",' in first.diff and '+ "label": "6 words,",' in first.diff


def _race_record(production, tmp_path, name, edit):  # type: ignore[no-untyped-def]
    """The race record without its latencies (every entry at t=0), edited by ``edit``."""
    import gzip

    record = production["records"]["race"]
    lines = [json.loads(line) for line in gzip.decompress(record.path.read_bytes()).splitlines()]
    for line in lines:
        if "t" in line:
            line["t"] = 0.0
    lines = edit(lines)
    path = tmp_path / f"{name}.flight.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode()))
    return path


def _swap(lines, first, second):  # type: ignore[no-untyped-def]
    i = next(n for n, x in enumerate(lines) if first(x))
    j = next(n for n, x in enumerate(lines) if second(x))
    lines[i], lines[j] = lines[j], lines[i]
    return lines


def _finished(method):  # type: ignore[no-untyped-def]
    return lambda x: x.get("kind") == "method.finished" and x.get("method") == method


def _slow_appended_first(lines):  # type: ignore[no-untyped-def]
    """The race's record, edited: the flow's output says slow appended first."""
    from pytest_flows._internal.trace import render_value

    for line in lines:
        if line.get("kind") == "end":
            line["output"] = ["slow", "fast"]
            line["rendered"] = render_value(["slow", "fast"])
        if line.get("kind") == "method.finished" and line.get("method") == "report":
            line["rendered"] = render_value(["slow", "fast"])
    return lines


def test_the_recorded_order_is_rebuilt_as_a_schedule_else_by_a_seed(flows, production, tmp_path):
    """Without the recorded latencies to steer it, the replay searches the scheduler's
    schedules for the recorded order (breadth first from seed 0's), then the seeds."""

    # fast finished first, yet slow appended first
    by_schedule = flows.replay(
        _race_record(production, tmp_path, "a", _slow_appended_first), RaceFlow
    )
    assert not by_schedule.diverged, by_schedule.report()
    assert by_schedule.schedule not in (None, "s")  # seed 0 finishes slow first: searched
    assert by_schedule.schedule == by_schedule.run.schedule
    assert f"rebuilt as schedule {by_schedule.schedule!r}" in by_schedule.interleaving

    # fast's LLM call came back first, so fast appended and finished first: the search
    # steers by the order the LLM replies came back in, and finds it ...
    path = _race_record(production, tmp_path, "b", lambda lines: lines)
    steered = flows.replay(path, RaceFlow)
    assert not steered.diverged, steered.report()
    assert steered.run.output == ["fast", "slow"]
    assert steered.schedule == steered.run.schedule != "s"
    # ... and where the search's budget does not reach, a seed does, and says so.
    by_seed = flows.replay(path, RaceFlow, schedules=1)
    assert not by_seed.diverged, by_seed.report()
    assert by_seed.schedule is None and by_seed.run.output == ["fast", "slow"]
    assert "came back at seed" in by_seed.interleaving
    assert "no schedule within the search's budget" in by_seed.interleaving


def test_an_order_the_runtime_cannot_produce_is_said_so(flows, production, tmp_path):
    def report_too_early(lines):  # type: ignore[no-untyped-def]
        started = lambda x: x.get("kind") == "method.started" and x.get("method") == "report"  # noqa: E731
        return _swap(lines, _finished("slow"), started)

    path = _race_record(production, tmp_path, "impossible", report_too_early)
    result = flows.replay(path, RaceFlow, schedules=8, seeds=2)
    assert result.first is not None and result.first.kind == "order"
    # Today's report is an and_(slow, fast) listener: no schedule can start it earlier,
    # and the report says so instead of blaming the search's budget.
    assert result.interleaving == (
        "The recorded order cannot happen under today's code: report started before it "
        "could be triggered: today's report listens to and(slow, fast); slow had not "
        "finished (fast had) (no schedule or seed can give it, so none was searched)."
    )


def test_a_search_out_of_budget_says_so(flows, production, tmp_path):
    """A possible order the search's budget did not reach is not called impossible."""

    path = _race_record(production, tmp_path, "budget", _slow_appended_first)
    result = flows.replay(path, RaceFlow, schedules=1, seeds=1)
    assert result.first is not None and result.first.kind == "order"
    assert result.interleaving.startswith(
        "The search's budget ran out before the recorded order of method starts and "
        "finishes came back: 1 schedule(s) and the seeds [0] were tried. It was not "
        "shown impossible"
    )
