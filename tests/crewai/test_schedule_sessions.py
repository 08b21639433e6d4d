"""A schedule explore() found gives its outcome in any session, nested or not, and in
another process: crewAI flows with sleeps, pool threads, timers and an or_ race (issue 44).

The nested sessions used to take other turns: a FlowsSession made while the test's
scheduler runs built its virtual clock's lock as a scheduled lock, so every clock move
was one more switch point there (the reader that sleeps then reads a loader's data saw
"loaded" where the exploring session saw "nothing").
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("crewai")

from schedule_everywhere import assert_schedules_replay_everywhere
from soundness_flows import SleepOrdered, SlowOutput, TimerAndThread

from pytest_flows import FlowsSession, explore

HERE = Path(__file__).parent


@pytest.mark.parametrize("flow", [SleepOrdered, TimerAndThread, SlowOutput])
def test_a_schedule_replays_in_any_session_and_process(flows: FlowsSession, flow: type) -> None:
    found = explore(flows, flow, max_schedules=200)

    assert_schedules_replay_everywhere(
        flows, found, lambda: flow, where=(HERE, "soundness_flows", flow.__name__, False)
    )


def test_the_reader_sees_nothing_in_a_nested_session_too(flows: FlowsSession) -> None:
    found = explore(flows, SleepOrdered, max_schedules=100)
    nothing = next(o for o in found.outcomes if o.state.seen == "nothing")

    with FlowsSession(test_id="tests/other.py::test_compare", seed=5) as other:
        again = other.run(SleepOrdered, schedule=nothing.schedule)

    assert again.state.seen == "nothing"
    assert again.schedule == nothing.schedule
