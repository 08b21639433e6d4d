"""Thread races and deadlocks in a flow's sync steps, caught offline and reproducibly."""

from __future__ import annotations

import pytest
from reservation_flow import Handover, ReserveStock, SafeReserveStock, Stuck

from pytest_flows import FlowsDeadlockError, FlowsSession


def test_the_lost_update_shows_at_the_default_seed(flows):
    # Seed 0 is what a real thread pool usually does: all three steps read 0.
    run = flows.run(ReserveStock)
    assert run.output == 1  # the bug: three reservations, one counted


@pytest.mark.parametrize("seed", range(8))
def test_the_lock_counts_every_reservation_on_every_seed(seed):
    with FlowsSession(seed=seed, test_id="inventory") as flows:
        assert flows.run(SafeReserveStock).output == 3


def test_other_seeds_show_the_other_outcomes_of_the_race():
    def reserved(seed: int) -> int:
        with FlowsSession(seed=seed, test_id="inventory") as flows:
            return flows.run(ReserveStock).output

    assert {reserved(seed) for seed in range(13)} == {1, 2, 3}


def test_steps_that_wait_for_each_other_finish_and_their_sleeps_overlap(flows):
    run = flows.run(Handover)
    assert run.output == "shipped"
    assert flows.clock.monotonic() == 30  # two 30 s steps side by side


def test_a_deadlock_fails_at_once_with_both_stacks(flows):
    with pytest.raises(FlowsDeadlockError) as stuck:
        flows.run(Stuck)
    assert "in restock" in str(stuck.value) and "in audit" in str(stuck.value)
