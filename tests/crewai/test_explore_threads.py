"""An exploration does not pile up threads: each schedule's idle pool workers end when
the next schedule starts (they are never reused across schedules, see submit)."""

from __future__ import annotations

import threading

from scheduler_flows import LostUpdate

from pytest_flows import FlowsSession, explore


def test_an_exploration_leaves_no_parked_workers_behind(flows: FlowsSession) -> None:
    flows.run(LostUpdate)  # the pool's first workers, reused by plain runs
    before = threading.active_count()
    found = explore(flows, LostUpdate, max_schedules=20)
    assert found.schedules_run == 20
    # Three listeners take three workers a schedule: 60 threads were they kept. The
    # last schedule's workers stay idle, and the previous one's may still be ending.
    assert threading.active_count() <= before + 6
