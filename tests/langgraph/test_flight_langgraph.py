"""The flight recorder with LangGraph: graphs recorded in a plain Python process (a
module-level ``ChatOpenAI`` talking HTTP to a loopback OpenAI-compatible server, an
``interrupt()`` answered by a second invocation), replayed under the harness with every
model call and answer taken from the record."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import flight_lg_graphs
import langchain_core.tracers.context
import pytest

import pytest_flows.langgraph._adapter
from pytest_flows.recorder import read_record, record_flows, stop_recording

# Imported here, not first inside the in-process runs (pytester unloads what a run imported).
assert pytest_flows.langgraph._adapter.ADAPTER
assert langchain_core.tracers.context.register_configure_hook

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "crewai"))
from loopback_openai import LoopbackOpenAI  # noqa: E402

KEY = "sk-production-key-lg-0123456789"


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("lg-recordings")
    with LoopbackOpenAI() as server:
        done = subprocess.run(
            [sys.executable, str(HERE / "flight_lg_production.py"), str(out), server.base_url],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    records = [read_record(path) for path in report["written"]]
    report["records"] = {
        ("paused" if r.outcome == "paused" else r.header["graph"]): r for r in records
    }
    report["requests"] = list(server.requests)
    return report


def test_a_graph_run_is_recorded_in_production_without_pytest(production):
    assert production["test_modules"] == []
    # the real HTTP calls happened in production: the writer's two, the teller's two streamed
    assert [r["json"].get("stream", False) for r in production["requests"]] == [
        False,
        False,
        True,
        True,
    ]
    record = production["records"]["writer"]
    assert record.framework == "langgraph"
    assert record.header["factory"] == "flight_lg_graphs:writer"
    assert record.run_kwargs == {
        "inputs": {"topic": "tides and the moon"},
        "config": {"configurable": {"thread_id": "ticket-7", "user": "ada"}},
    }
    assert [e["method"] for e in record.of_kind("method.started")] == [
        "draft",
        "review",
        "review",  # re-run from its top when the answer came
        "publish",
    ]
    (request,) = record.of_kind("llm.request")
    assert request["method"] == "draft"
    assert request["messages"] == [
        {"role": "system", "content": "Write one line about the topic."},
        {"role": "human", "content": "tides and the moon"},
    ]
    (reply,) = record.of_kind("llm.response")
    assert reply["response"] == "4 words, starting 'tides and the moon'"


def test_an_interrupt_and_its_answer_are_one_record(production):
    record = production["records"]["writer"]
    assert record.outcome == "finished"  # the paused run and its continuation: one record
    (asked,) = record.of_kind("human.asked")
    (answered,) = record.of_kind("human.answered")
    assert (asked["via"], asked["method"]) == ("interrupt", "review")
    assert asked["value"]["question"] == "publish?"
    assert answered["interrupt_id"] == asked["interrupt_id"] and answered["answer"] == "yes"


def test_a_recorded_run_replays_with_the_same_trace_and_outputs(flows, production):
    replayed = flows.replay(production["records"]["writer"].path, flight_lg_graphs.writer)

    assert not replayed.diverged, replayed.report()
    assert replayed.run.values["notes"] == production["outputs"]["writer"]
    assert replayed.replayed_trace == replayed.recorded_trace
    assert "graph resumed writer answers=[i1]" in replayed.run.trace.render()


def test_a_changed_prompt_is_reported_at_its_request(flows, production, monkeypatch):
    monkeypatch.setattr(flight_lg_graphs, "INSTRUCTIONS", "Write two lines about the topic.")

    replayed = flows.replay(production["records"]["writer"].path, flight_lg_graphs.writer)

    assert replayed.first is not None and replayed.first.kind == "prompt"
    assert replayed.first.where == "LLM call 1 of method draft"
    assert "+  Write two lines about the topic." in replayed.first.diff


def test_the_recorded_answer_is_what_today_s_code_gets(flows, production):
    record = read_record(production["records"]["writer"].path)
    (answered,) = record.of_kind("human.answered")
    answered["answer"] = {"approved": False}  # any JSON value a resume can carry

    replayed = flows.replay(record, flight_lg_graphs.writer)

    assert "review={'approved': False}" in replayed.run.values["notes"]
    assert any(d.kind == "output" and "review" in d.where for d in replayed.divergences)


def test_a_run_left_paused_replays_paused(flows, production):
    record = production["records"]["paused"]
    assert record.outcome == "paused" and not record.of_kind("human.answered")

    replayed = flows.replay(record.path, flight_lg_graphs.writer)

    assert not replayed.diverged, replayed.report()
    assert replayed.run.status == "interrupted" and replayed.run.next == ("review",)


def test_parallel_nodes_replay_in_the_recorded_completion_order(flows, production):
    record = read_record(production["records"]["fanout"].path)
    # Production finishes the three in any order; the search finds each of the six
    # within 64 schedules (a sync graph's driver off the event loop, its pool's locks
    # quiet: 1 to 64), past the default budget (48) for two of them.
    assert not flows.replay(record, flight_lg_graphs.fanout, schedules=150).diverged
    # As if production's pool had finished the three the other way round: the search
    # rebuilds that order as a schedule (one the scheduler produced from LangGraph's own
    # pool threads and their equal waits).
    finishes = [
        n
        for n, e in enumerate(record.entries)
        if e.get("kind") == "method.finished" and e["method"] != "join"
    ]
    recorded = [record.entries[n] for n in finishes]
    for n, entry in zip(finishes, reversed(recorded), strict=True):
        record.entries[n] = entry
    wanted = [e["method"] for e in reversed(recorded)]

    # (up to 64 schedules find it today: the default budget, 48, may stop short)
    replayed = flows.replay(record, flight_lg_graphs.fanout, schedules=150)

    assert not replayed.diverged, replayed.report()
    finished = [e.name for e in replayed.replayed_trace if e.kind == "method.finished"]
    assert finished == [*wanted, "join"]
    assert replayed.schedule is not None, replayed.interleaving


def test_streamed_replies_are_recorded_chunk_by_chunk(production):
    record = production["records"]["teller"]
    chunks = {}
    for entry in record.of_kind("llm.chunk"):
        chunks.setdefault(entry["method"], []).append(entry["chunk"])
    replies = {e["method"]: e["response"] for e in record.of_kind("llm.response")}
    # the loopback server streams ten characters a chunk; what the consumer got, in order
    assert set(chunks) == {"tell", "sum_up"}
    for method, pieces in chunks.items():
        assert "".join(pieces) == replies[method]
        assert len(pieces) > 1 and all(len(p) <= 10 for p in pieces)
    assert [(node, text) for node, text in production["outputs"]["tokens"]] == [
        (e["method"], e["chunk"]) for e in record.of_kind("llm.chunk")
    ]


def test_a_streamed_run_replays_with_the_same_chunks(flows, production, fake_llm):
    record = production["records"]["teller"]
    recorded = [e["chunk"] for e in record.of_kind("llm.chunk") if e["method"] == "tell"]

    replayed = flows.replay(record.path, flight_lg_graphs.teller)

    assert not replayed.diverged, replayed.report()  # a chunk that differs is a divergence
    assert replayed.run.values["pieces"] == len(recorded)  # the node got each chunk
    assert replayed.run.values["story"] == "".join(recorded)
    assert "chunks=" in " ".join(line for line in replayed.run.trace.lines() if "llm call" in line)


def test_today_s_code_gets_the_chunks_the_record_has(flows, production):
    record = read_record(production["records"]["teller"].path)
    chunks = [e for e in record.entries if e.get("kind") == "llm.chunk" and e["method"] == "tell"]
    first, second = chunks[0], chunks[1]
    first["chunk"] += second["chunk"]  # as if the provider had sent these two as one
    record.entries.remove(second)

    replayed = flows.replay(record, flight_lg_graphs.teller)

    assert replayed.run.values["pieces"] == len(chunks) - 1
    assert not any(d.kind == "stream" for d in replayed.divergences), replayed.report()


def test_a_reply_no_longer_streamed_is_a_stream_divergence(flows, production):
    record = read_record(production["records"]["teller"].path)
    assert record.run_kwargs["stream_mode"] == "messages"  # how production consumed it
    del record.header["run_kwargs"]["stream_mode"]  # replayed as invoke() would run it

    replayed = flows.replay(record, flight_lg_graphs.teller)

    (diverged,) = [d for d in replayed.divergences if d.kind == "stream"]
    assert diverged.where == "streamed reply 1 of method sum_up"  # tell streams itself
    assert "streamed 0 chunk(s)" in diverged.message


def test_flows_replay_collects_a_directory_of_records(pytester, production):
    directory = production["records"]["writer"].path.parent
    result = pytester.runpytest_inprocess(
        f"--flows-replay={directory}", "--flows-replay-allow=flight_lg_graphs", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=4)

    refused = pytester.runpytest_inprocess(f"--flows-replay={directory}", "-p", "no:randomly")
    refused.assert_outcomes(failed=4)
    refused.stdout.fnmatch_lines(["*--flows-replay-allow=flight_lg_graphs*"])


def test_the_production_key_reaches_no_record(production):
    for record in production["records"].values():
        text = gzip.decompress(record.path.read_bytes()).decode("utf-8")
        assert KEY not in text


def test_the_recorder_part_imports_no_pytest() -> None:
    code = (
        "import sys; import pytest_flows.recorder._langgraph; "
        "print(sorted(m for m in ('pytest', '_pytest', 'pytest_flows.plugin', "
        "'pytest_flows._internal.session') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_stopping_the_recorder_takes_its_hook_out(tmp_path: Path) -> None:
    hooks = langchain_core.tracers.context._configure_hooks
    before = len(hooks)
    record_flows(tmp_path, frameworks=["langgraph"])
    try:
        assert len(hooks) == before + 1
        flight_lg_graphs.fanout.invoke({"notes": []})
    finally:
        recorder = stop_recording()
    assert len(hooks) == before
    assert recorder is not None and len(recorder.written) == 1
    flight_lg_graphs.fanout.invoke({"notes": []})  # not recorded: the recorder is off
    assert len(list(tmp_path.glob("*.flight.jsonl.gz"))) == 1


def test_what_the_recorder_reaches_into_is_declared_and_checked() -> None:
    from pytest_flows.langgraph._seams import RECORDER_SEAMS, check_patch_points

    targets = {seam.target for seam in RECORDER_SEAMS}
    assert "langchain_core.tracers.context:_configure_hooks" in targets
    assert "langgraph.pregel.main:Pregel.stream" in targets
    assert set(RECORDER_SEAMS) <= set(pytest_flows.langgraph._adapter.ADAPTER.seams())
    check_patch_points()  # each still where it was declared, in the installed versions
