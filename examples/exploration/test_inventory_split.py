"""One exploration split into parts by its first choice, one test each: under
``pytest -n 2`` the parts run on different workers, and their outcomes together
are the whole search's."""

from __future__ import annotations

import pytest
from inventory_flow import Reservations

from pytest_flows import FlowsSession, explore


@pytest.mark.parametrize("first", range(2))  # the options of the first choice point
def test_each_part_of_the_search(flows: FlowsSession, first: int) -> None:
    part = explore(flows, Reservations, prefix=f"s{first}", max_schedules=500)
    assert part.complete
    # Every part's outcomes are outcomes of the whole flow: one sale, or the oversell.
    assert {o.run.state.left for o in part.outcomes} <= {0, -1}
