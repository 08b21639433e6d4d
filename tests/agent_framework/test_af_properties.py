"""Properties: restore-from-any-checkpoint equivalence, seeds that reveal races."""

from __future__ import annotations

import af_workflows as wf
import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import (
    FlowsCheckpointStorage,
    check_restore_equivalence,
    explore_seeds,
    seeded,
)
from pytest_flows.agent_framework._patches import check_patch_points


def allowing() -> FlowsCheckpointStorage:
    return FlowsCheckpointStorage(allowed_types=[wf.Joined, wf.Ticket, wf.ReviewRequest])


# -- restore equivalence -----------------------------------------------------------------


def test_restoring_any_checkpoint_of_a_loop_continues_like_the_full_run(flows):
    checks = check_restore_equivalence(flows, lambda: wf.build_counter(limit=4), 1)

    assert [c.superstep for c in checks] == list(range(8))
    assert all(c.equivalent for c in checks)
    assert checks[3].run.outputs == ["tick 3", "tick 4", "done at 4 after 4 visits"]


def test_restoring_any_checkpoint_of_the_diamond_continues_like_the_full_run(flows):
    checks = check_restore_equivalence(flows, wf.build_diamond, "hello world", storage=allowing())

    assert len(checks) == 5
    assert {c.run.outputs[-1] for c in checks[:-1]} == {"LONG:HELLO WORLD|dlrow olleh"}


def test_restore_equivalence_holds_for_a_paused_approval(flows):
    checks = check_restore_equivalence(
        flows, lambda: wf.build_approval(reviewers=2), "owls", storage=allowing()
    )

    assert all(c.run.status == "IDLE_WITH_PENDING_REQUESTS" for c in checks)


def test_an_executor_that_does_not_save_its_state_is_caught(flows):
    with pytest.raises(AssertionError) as raised:
        check_restore_equivalence(flows, lambda: wf.build_counter(limit=3, saves_state=False), 1)

    message = str(raised.value)
    assert "checkpoint after superstep 1" in message
    assert "on_checkpoint_save()" in message
    assert "-workflow output counter data='done at 3 after 3 visits'" in message
    assert "+workflow output counter data='done at 3 after 2 visits'" in message


def test_restore_equivalence_needs_a_factory(flows):
    with pytest.raises(FlowsUsageError, match="returns a fresh workflow"):
        check_restore_equivalence(flows, wf.build_counter(), 1)


# -- seeds and races ---------------------------------------------------------------------


def test_seeds_reveal_a_last_writer_wins_race(flows):
    exploration = explore_seeds(flows, lambda: wf.build_race(racy=True), "go", seeds=range(16))

    assert exploration.distinct > 1
    winners = {run.state["winner"] for run in exploration.runs.values()}
    assert winners == {"a", "b", "c"}
    with pytest.raises(AssertionError) as raised:
        exploration.assert_deterministic()
    message = str(raised.value)
    assert "different runs across seeds" in message
    assert "@pytest.mark.flows(seed=" in message
    assert "state committed winner" in message


@pytest.mark.flows(seed=0)  # whatever --flows-seed the suite runs under
def test_the_default_seed_keeps_the_runtimes_order(flows):
    run = flows.run(wf.build_race(racy=True), "go")

    # seed 0: a, b, c start in the order the runtime created them; c writes last
    assert run.state == {"winner": "c"}
    assert run.outputs == ["winner=c reports=['a saw None', 'b saw a', 'c saw b']"]


def test_a_seed_reproduces_its_interleaving(flows):
    with seeded(flows, 3):
        first = flows.run(wf.build_race(racy=True), "go")
    with seeded(flows, 3):
        again = flows.run(wf.build_race(racy=True), "go")

    assert first.trace.render() == again.trace.render()
    assert first.state == again.state


def test_a_correct_workflow_gives_one_run_under_many_seeds(flows):
    exploration = explore_seeds(flows, lambda: wf.build_race(racy=False), "go", seeds=range(24))

    exploration.assert_deterministic()
    (seeds,) = exploration.outcomes.values()
    assert seeds == list(range(24))


@pytest.mark.parametrize(
    "seed", [pytest.param(s, marks=pytest.mark.flows(seed=s)) for s in range(6)]
)
def test_votes_under_the_seed_of_the_test(flows, seed):
    run = flows.run(wf.build_race(racy=False), "go")

    assert flows.seed == seed
    assert run.outputs == ["winner=None reports=['a=3', 'b=3', 'c=3']"]
    assert run.state == {"vote_a": 3, "vote_b": 3, "vote_c": 3}


@pytest.mark.flows(seed=7)
def test_a_nonzero_seed_changes_the_start_order_not_the_trace(flows):
    started: list[str] = []

    run = flows.run(wf.build_wide(started), "x")

    assert sorted(started) == list("abcdef")
    assert started != list("abcdef")  # seed 7 permutes the start order...
    assert run.trace.names("executor.invoked")[1:7] == list("abcdef")  # ...the trace is canonical


def test_patch_points_are_where_the_adapter_expects_them():
    check_patch_points()
