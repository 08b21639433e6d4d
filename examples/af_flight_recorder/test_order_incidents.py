"""Production runs of the order desk, recorded by ``production.py`` (no pytest there),
replayed here on today's code: every LLM call and tool answered from the record, offline."""

from __future__ import annotations

from pathlib import Path

import order_desk
import pytest
from agent_framework import tool
from order_desk import build_workflow

from pytest_flows.recorder import read_record

RECORDINGS = sorted((Path(__file__).parent / "recordings").glob("*.flight.jsonl.gz"))


@pytest.mark.parametrize("record", RECORDINGS, ids=lambda path: path.name.split("-")[-1][:12])
def test_every_recorded_run_replays_unchanged(flows, record):
    result = flows.replay(record, build_workflow)
    result.check()  # the same prompts, tool calls, executor order and outcome


def test_the_lost_parcel_incident_fails_the_same_way(flows, monkeypatch):
    (incident,) = [path for path in RECORDINGS if read_record(path).outcome == "failed"]

    def offline(order: str) -> str:
        raise AssertionError("the replay must not ask the real order system")

    monkeypatch.setattr(order_desk, "order_system", offline)
    result = flows.replay(incident, build_workflow)
    result.check()
    assert isinstance(result.run.error, RuntimeError)
    assert "lost-parcel" in str(result.run.error)


def test_a_renamed_tool_is_reported_at_the_request_that_offered_it(flows, monkeypatch):
    @tool
    def find_order(order: str) -> str:
        """Find an order by its number (today's name of the lookup)."""
        return order_desk.order_system(order)

    monkeypatch.setattr(order_desk, "lookup_order", find_order)
    result = flows.replay(RECORDINGS[0], build_workflow)
    assert result.first is not None and result.first.kind == "prompt"
    assert result.first.where == "LLM call 1 of method clerk"
    assert result.first.message == "tools offered were ['lookup_order'], now ['find_order']"
    print(result.report())
