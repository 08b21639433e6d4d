"""Production runs of SupportFlow, recorded by ``production.py`` (no pytest there),
replayed here on today's code: every LLM call and tool answered from the record, offline."""

from __future__ import annotations

from pathlib import Path

import pytest
import support_flow
from support_flow import SupportFlow

from pytest_flows.recorder import read_record

RECORDINGS = sorted((Path(__file__).parent / "recordings").glob("*.flight.jsonl.gz"))


@pytest.mark.parametrize("record", RECORDINGS, ids=lambda path: path.name.split("-")[-1][:12])
def test_every_recorded_run_replays_unchanged(flows, record):
    result = flows.replay(record, SupportFlow)
    result.check()  # the same prompts, routes, method order and outcome as in production


def test_the_refund_incident_fails_the_same_way(flows):
    (incident,) = [path for path in RECORDINGS if read_record(path).outcome == "failed"]
    result = flows.replay(incident, SupportFlow)
    assert isinstance(result.run.error, ValueError)
    assert "refunds need a human" in str(result.run.error)


def test_a_prompt_change_is_reported_at_its_request(flows, monkeypatch):
    monkeypatch.setattr(support_flow, "CLASSIFY_PROMPT", "Is this ticket billing or technical?")
    result = flows.replay(RECORDINGS[0], SupportFlow)
    assert result.first is not None and result.first.kind == "prompt"
    assert result.first.where == "LLM call 1 of method classify"
    print(result.report())


def test_the_tool_is_answered_from_the_record(flows, monkeypatch):
    (technical,) = [path for path in RECORDINGS if read_record(path).of_kind("tool.started")]
    record = read_record(technical)
    assert record.of_kind("tool.started")[0]["args"] == {"service": "login"}

    def offline(service: str) -> str:
        raise AssertionError("the replay must not call the real status page")

    monkeypatch.setattr(support_flow, "check_status", offline)
    result = flows.replay(technical, SupportFlow)
    result.check()
    assert "login: degraded since 09:00" in result.run.output
