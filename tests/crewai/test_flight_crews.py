"""The flight recorder on crew-based flows, shaped like crewAI-examples: a router loop
with two crews (agents with role, goal and backstory, a tool, a structured crew output)
and a crew followed by three listeners side by side. Recorded in a plain Python process
(no pytest) with crewAI's real ``LLM`` calling a loopback OpenAI-compatible server;
replayed with ``flows.replay`` and ``--flows-replay``, the crews running on the harness
with their agents' LLM calls answered from the record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import crew_flight_flows
import pytest
from crew_flight_flows import ResearchFlow, WriterFlow
from loopback_openai import LoopbackOpenAI

from pytest_flows._internal.errors import FlowsWarning
from pytest_flows.recorder import read_record

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("crew-recordings")
    with LoopbackOpenAI() as server:
        done = subprocess.run(
            [sys.executable, str(HERE / "crew_flight_production.py"), str(out), server.base_url],
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
        topic = (record.run_kwargs.get("inputs") or {}).get("topic")
        records[{"provider-500": "error", "malformed-reply": "malformed"}.get(topic, topic)] = (
            record
        )
    report["records"] = records
    return report


def test_the_production_runs_were_recorded_as_they_happened(production):
    assert production["test_modules"] == []
    assert sorted(production["records"]) == ["coral reefs", "error", "malformed", "tides"]
    results = production["results"]
    assert results["writer"].startswith("published after 2 attempts: ")
    assert results["error"].startswith("openai.InternalServerError: Error code: 500")
    assert results["malformed"].startswith("json.decoder.JSONDecodeError: Expecting value")


def test_every_llm_call_inside_a_crew_names_its_agent_and_task(production):
    record = production["records"]["tides"]
    requests = record.of_kind("llm.request")
    assert [(r["method"], r["agent"]) for r in requests] == [
        ("write", "Writer"),
        ("write", "Writer"),
        ("review", "Reviewer"),
        ("write", "Writer"),
        ("write", "Writer"),
        ("review", "Reviewer"),
    ]
    assert requests[0]["task"] == "lookup: facts about tides (attempt 1)"
    assert requests[3]["task"] == "lookup: facts about tides (attempt 2)"
    # The tool as the provider was sent it, not crewAI's tool object.
    (schema,) = requests[0]["tool_schemas"]
    assert schema["type"] == "function" and schema["function"]["name"] == "lookup"
    assert schema["function"]["parameters"]["properties"]["query"]["type"] == "string"
    research = production["records"]["coral reefs"].of_kind("llm.request")
    assert sorted((r["method"], r["agent"]) for r in research) == [
        ("headline", None),  # a direct LLM call in a listener: no agent
        ("research", "Researcher"),
        ("summarize", "Summarizer"),
    ]


def test_show_prints_each_calls_agent_and_task(production):
    record = production["records"]["tides"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_flows.recorder", "show", str(record.path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert (
        "llm.request write agent=Writer task='lookup: facts about tides (attempt 1)'" in done.stdout
    )
    assert "crew.started review crew=review" in done.stdout
    assert "tool.started write agent=Writer tool=lookup" in done.stdout


@pytest.mark.parametrize("name", ["tides", "coral reefs"])
def test_unchanged_code_replays_with_no_divergence(flows, production, name):
    record = production["records"][name]
    target = WriterFlow if name == "tides" else ResearchFlow
    replayed = flows.replay(record.path, target)
    assert not replayed.diverged, replayed.report()
    assert not replayed.notes  # every crew ran: nothing was left uncompared
    if name == "tides":
        assert replayed.run.output == production["results"]["writer"]
        # The crews ran on the harness: their agents' calls were the fake LLM's.
        calls = [e for e in replayed.run.trace.events if e.kind == "llm.call"]
        assert len(calls) == 6
    else:
        assert replayed.run.output == production["results"]["research"]


@pytest.mark.parametrize(
    ("key", "new", "where", "old_line", "new_line"),
    [
        (
            "writer_backstory",
            "A writer who never checks.",
            "LLM call 1 of method write (agent 'Writer', task 'lookup: facts about tides "
            "(attempt 1)')",
            "-  You are Writer. A writer who checks facts with the lookup tool.",
            "+  You are Writer. A writer who never checks.",
        ),
        (
            "reviewer_goal",
            "Reject everything",
            "LLM call 1 of method review (agent 'Reviewer', task \"Review this post about "
            "tides: 33 words, starting 'Current...\")",
            "-  Your personal goal is: Judge whether a post is ready",
            "+  Your personal goal is: Reject everything",
        ),
        (
            "draft_task",
            "lookup: lies about {topic} (attempt {attempt})",
            "LLM call 1 of method write (agent 'Writer', task 'lookup: facts about tides "
            "(attempt 1)')",
            "-  Current Task: lookup: facts about tides (attempt 1)",
            "+  Current Task: lookup: lies about tides (attempt 1)",
        ),
    ],
    ids=["backstory", "goal", "task-description"],
)
def test_a_changed_agent_or_task_is_reported_at_the_agents_call(
    flows, production, monkeypatch, key, new, where, old_line, new_line
):
    monkeypatch.setitem(crew_flight_flows.TEXTS, key, new)
    replayed = flows.replay(production["records"]["tides"].path, WriterFlow)
    first = replayed.first
    assert first is not None and first.kind == "prompt", replayed.report()
    assert first.where == where
    assert old_line in first.diff.splitlines()
    assert new_line in first.diff.splitlines()


def test_a_changed_backstory_in_a_crew_before_parallel_listeners_is_reported(
    flows, production, monkeypatch
):
    monkeypatch.setitem(crew_flight_flows.TEXTS, "researcher_backstory", "A skimmer.")
    replayed = flows.replay(production["records"]["coral reefs"].path, ResearchFlow)
    first = replayed.first
    assert first is not None and first.kind == "prompt"
    assert (
        first.where
        == "LLM call 1 of method research (agent 'Researcher', task 'Research coral reefs')"
    )
    assert "+  You are Researcher. A skimmer." in first.diff.splitlines()


#: A run recorded on a loaded machine (load average ~9): after ``research``, the
#: summary crew took 0.15 s of CPU to set up before its request, whose reply was quick,
#: and ``headline``'s slower reply came back in the meantime; headline finished first,
#: summarize last (its output is the run's). Each entry: kind, method, seconds after
#: ``research`` finished.
_LOADED_TAIL = [
    ("method.started", "summarize", 0.0),
    ("method.started", "headline", 0.129),
    ("crew.started", "summarize", 0.167),
    ("llm.request", "headline", 0.175),
    ("method.started", "count", 0.176),
    ("llm.request", "summarize", 0.32),
    ("llm.response", "summarize", 0.329),
    ("method.finished", "count", 0.354),
    ("crew.finished", "summarize", 0.363),
    ("llm.response", "headline", 0.364),
    ("method.finished", "headline", 0.365),
    ("method.finished", "summarize", 0.3651),
    ("flow.finished", None, 0.367),
]


def test_an_order_production_cpu_time_decided_comes_back(flows, production):
    """The harness runs code in no virtual time: the summary crew's setup took none, its
    quick reply came back long before headline's (0.18 s, more than a thread is held
    back), and no schedule could let headline finish first. The replay then also waits,
    before each reply, the time its method spent before the request in production."""
    record = read_record(production["records"]["coral reefs"].path)
    entries = record.entries
    done = next(
        i
        for i, e in enumerate(entries)
        if e["kind"] == "method.finished" and e["method"] == "research"
    )
    head, t0 = entries[: done + 1], entries[done]["t"]
    tail = {(e["kind"], e.get("method")): e for e in entries[done + 1 :]}
    record.entries = [*head, *(dict(tail[k, m], t=t0 + dt) for k, m, dt in _LOADED_TAIL)]
    for seq, entry in enumerate(record.entries, 1):
        entry["seq"] = seq
    summary = tail["method.finished", "summarize"]
    record.entries[-1]["rendered"] = record.end["rendered"] = summary["rendered"]
    record.end["output"] = summary["output"]
    replayed = flows.replay(record, ResearchFlow)
    assert not replayed.diverged, replayed.report()
    assert replayed.run.output == summary["output"]
    assert "also waiting the time its method spent before the request" in replayed.interleaving


def test_a_changed_crew_input_is_reported(flows, production):
    record = read_record(production["records"]["tides"].path)
    record.of_kind("crew.started")[0]["inputs"]["topic"] = "waves"
    divergences = flows.replay(record, WriterFlow).divergences
    (crew,) = [d for d in divergences if d.kind == "crew"]
    assert crew.where == "kickoff 1 of crew 'writing' in method write"
    assert '"topic": "waves"' in crew.message and '"topic": "tides"' in crew.message


@pytest.mark.parametrize(
    ("name", "module", "type_name"),
    [("error", "openai", "InternalServerError"), ("malformed", "json", "JSONDecodeError")],
)
def test_a_provider_failure_inside_a_crew_reproduces_as_its_recorded_type(
    flows, production, name, module, type_name
):
    record = production["records"][name]
    assert record.outcome == "failed"
    (failed,) = [e for e in record.of_kind("llm.failed") if e.get("exception")][:1]
    assert failed["exception"]["type"] == type_name
    replayed = flows.replay(record.path, WriterFlow)
    assert not replayed.diverged, replayed.report()
    error = replayed.run.error
    expected = getattr(sys.modules[module], type_name)
    assert isinstance(error, expected), repr(error)
    assert str(error) == record.end["error"]["message"]
    if name == "error":
        assert error.status_code == 500


def test_a_crew_the_record_has_no_llm_calls_for_is_said_not_passed_silently(flows, production):
    record = read_record(production["records"]["coral reefs"].path)
    # As a record of a crew answered by a non-crewAI model would be: the crew's kickoff
    # and result, none of its agents' calls.
    inside = {
        e["call_id"]
        for e in record.of_kind("llm.request")
        if e["method"] == "summarize" and e.get("agent")
    }
    record.entries = [e for e in record.entries if e.get("call_id") not in inside]
    with pytest.warns(FlowsWarning, match="crew 'summary' in method summarize was answered"):
        replayed = flows.replay(record, ResearchFlow)
    assert replayed.notes == [
        "crew 'summary' in method summarize was answered whole from the record (it has "
        "none of its agents' LLM calls): its agents' prompts and tools were not compared"
    ]
    assert "not compared: crew 'summary'" in replayed.report()


def test_flows_replay_dir_replays_the_crew_records_reading_each_once(
    pytester, production, monkeypatch
):
    directory = production["records"]["tides"].path.parent
    pytester.makeconftest(
        """
        import pytest_flows._internal.flight.format as format_module

        real = format_module._lines
        read = []

        def counting(*args, **kwargs):
            for item in real(*args, **kwargs):
                read.append(args[0].name)
                yield item

        format_module._lines = counting

        def pytest_sessionfinish(session):
            print("lines read:", len(read))
        """
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), str(ROOT)]))
    result = pytester.runpytest_subprocess(
        f"--flows-replay={directory}",
        "--flows-replay-allow=crew_flight_flows",
        "-p",
        "no:randomly",
        "-s",
    )
    result.assert_outcomes(passed=4)
    # Collection reads each record's header line; its test reads it whole, once.
    lines = sum(1 + len(r.entries) + 1 for r in production["records"].values())
    result.stdout.fnmatch_lines([f"*lines read: {lines + len(production['records'])}"])
