"""Every outcome of the reservations flow, a replayable oversell, and the race that causes it."""

from __future__ import annotations

import pytest
from inventory_flow import LockedReservations, Reservations

from pytest_flows import FlowsSession, explore


def test_every_schedule_is_explored_and_one_oversells(flows: FlowsSession) -> None:
    found = explore(flows, Reservations, max_schedules=500)
    assert found.complete  # these are all the outcomes the flow can have
    stock = {o.run.state.left for o in found.outcomes}
    assert -1 in stock  # sold twice: an oversell some schedule reaches
    oversell = next(o for o in found.outcomes if o.run.state.left == -1)
    # The schedule string replays that run exactly, here or with --flows-schedule.
    again = flows.run(Reservations, schedule=oversell.schedule)
    assert again.state.left == -1
    assert {c.field for c in found.conflicts} >= {"state.left"}


def test_the_locked_flow_never_oversells(flows: FlowsSession) -> None:
    found = explore(flows, LockedReservations, max_schedules=500)
    assert found.complete
    assert {o.run.state.left for o in found.outcomes} == {0}
    assert found.conflicts == []


@pytest.mark.flows(races="fail")
def test_the_locked_flow_has_no_state_race(flows: FlowsSession) -> None:
    assert flows.run(LockedReservations).state.left == 0
