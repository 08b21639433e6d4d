"""How many schedules a complete search costs (issue 42): independent work costs none,
and a real race costs at most the distinct orders of its accesses."""

from __future__ import annotations

import pytest
from reduction_flows import LostUpdateJoined, OwnFieldsJoined

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration import outcome_key

_ID = "tests::reduction"


def test_an_and_joins_sources_ending_in_any_order_cost_little() -> None:
    # Three listeners on their own fields, joined by an and_: one outcome. The sources'
    # looks at the and_ commute (each adds its own end), only the one that fires it
    # reads them all, so which source ends last is the only order left: 5 schedules
    # (26 while every look was a write of one key, all orders of the three ends).
    with FlowsSession(test_id=_ID) as session:
        found = explore(session, OwnFieldsJoined, max_schedules=50)
    assert found.complete, found.caveat
    assert [o.output for o in found] == ["111"]
    assert found.schedules_run <= 5
    assert found.conflicts == []


@pytest.mark.long
def test_three_read_sleep_write_listeners_on_one_counter_complete() -> None:
    # Their reads and writes have at most 6!/(2!2!2!) = 90 orders (each listener reads
    # before it writes); up to reads commuting with reads, 3! write orders times 1*2*3
    # places for the reads = 36 behaviours, times the 3 sources that can end last for
    # the and_. The search completes in 2,954 schedules (not complete in 20,000 before).
    with FlowsSession(test_id=_ID) as session:
        found = explore(session, LostUpdateJoined, max_schedules=4_000)
    reached = set()
    for seed in range(32):
        with FlowsSession(seed=seed, test_id=_ID) as seeded:
            reached.add(outcome_key(seeded.run(LostUpdateJoined)))
    assert found.complete, found.caveat
    assert sorted(o.output for o in found) == [1, 2, 3]
    assert reached <= set(found.texts)
