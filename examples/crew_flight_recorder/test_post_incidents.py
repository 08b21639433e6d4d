"""Production runs of PostFlow, recorded by ``production.py`` (no pytest there), replayed
here on today's code: the crews run on the harness, each agent's LLM call answered
from the record and its prompt compared, offline."""

from __future__ import annotations

from pathlib import Path

import openai
import post_flow
from post_flow import PostFlow

from pytest_flows.recorder import read_record

RECORDINGS = sorted((Path(__file__).parent / "recordings").glob("*.flight.jsonl.gz"))


def _recorded(outcome: str) -> Path:
    (path,) = [path for path in RECORDINGS if read_record(path).outcome == outcome]
    return path


def test_the_published_run_replays_unchanged(flows):
    result = flows.replay(_recorded("finished"), PostFlow)
    result.check()  # the same agents' prompts, routes, method order and output
    assert result.run.output.endswith("(2 drafts)")


def test_a_changed_backstory_is_reported_at_the_agents_call(flows, monkeypatch):
    monkeypatch.setattr(post_flow, "WRITER_BACKSTORY", "A poet who rhymes.")
    result = flows.replay(_recorded("finished"), PostFlow)
    first = result.first
    assert first is not None and first.kind == "prompt"
    assert first.where == "LLM call 1 of method write (agent 'Writer', task 'Write about tides')"
    assert "-  You are Writer. A columnist who writes plainly." in first.diff
    assert "+  You are Writer. A poet who rhymes." in first.diff
    print(result.report())


def test_the_provider_outage_fails_the_same_way(flows):
    result = flows.replay(_recorded("failed"), PostFlow)
    result.check()  # no divergence: it failed as it did in production
    assert isinstance(result.run.error, openai.InternalServerError)
    assert result.run.error.status_code == 500
