"""A loop whose executor keeps state: restores, seeds and the trace."""

from __future__ import annotations

import pytest
from af_number_search import ALLOWED_CHECKPOINT_TYPES, Hint, build_workflow

from pytest_flows.agent_framework import (
    FlowsCheckpointStorage,
    check_restore_equivalence,
    explore_seeds,
)


def storage() -> FlowsCheckpointStorage:
    return FlowsCheckpointStorage(allowed_types=ALLOWED_CHECKPOINT_TYPES)


def test_the_search_bisects_to_the_target(flows):
    run = flows.run(build_workflow(30), Hint.INIT)

    assert run.outputs == ["found it between 30 and 30"]
    assert run.state["guesses"] == [50, 25, 37, 31, 28, 29, 30]


def test_every_checkpoint_restores_to_the_same_search(flows):
    checks = check_restore_equivalence(flows, build_workflow, Hint.INIT, storage=storage())

    assert len(checks) == 16  # one before the first superstep, one after each


def test_an_executor_that_does_not_save_its_range_is_caught(flows):
    with pytest.raises(AssertionError, match="on_checkpoint_save"):
        check_restore_equivalence(
            flows,
            lambda: build_workflow(saves_state=False),
            Hint.INIT,
            storage=storage(),
            after_superstep=4,
        )


def test_no_seed_changes_the_search(flows):
    explore_seeds(flows, build_workflow, Hint.INIT, seeds=range(8)).assert_deterministic()


def test_the_trace_of_the_search(flows, snapshot):
    run = flows.run(build_workflow(7), Hint.INIT)

    assert run.trace.render() == snapshot  # the same text under every --flows-seed
