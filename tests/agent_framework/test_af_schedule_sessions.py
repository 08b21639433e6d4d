"""A schedule explore() found gives its outcome in any session, nested or not, and in
another process: Agent Framework workflows with a pool thread that sleeps, a timer and a
fan-in whose delivery order races (issue 44; the crewAI side and the cause are in
tests/crewai/test_schedule_sessions.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

import af_schedule_flows
from schedule_everywhere import assert_schedules_replay_everywhere

from pytest_flows import FlowsSession, explore

HERE = Path(__file__).parent


@pytest.mark.parametrize("name", ["build_sleepy", "build_racy"])
def test_a_schedule_replays_in_any_session_and_process(flows: FlowsSession, name: str) -> None:
    make = getattr(af_schedule_flows, name)
    found = explore(flows, make, "go", max_schedules=200)

    assert_schedules_replay_everywhere(
        flows, found, make, "go", where=(HERE, "af_schedule_flows", name, True)
    )
