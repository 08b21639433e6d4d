"""check_restore_equivalence(after_superstep=...) and checkpoints=...: which to restore."""

from __future__ import annotations

import af_workflows as wf
import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import (
    FlowsCheckpointStorage,
    RestoreCheck,
    check_restore_equivalence,
)


def build() -> object:
    return wf.build_counter(limit=3)


def test_after_superstep_restores_only_that_checkpoint(flows):
    (check,) = check_restore_equivalence(flows, build, 1, after_superstep=2)

    assert isinstance(check, RestoreCheck)
    assert (check.superstep, check.equivalent) == (2, True)


def test_after_superstep_takes_a_list(flows):
    checks = check_restore_equivalence(flows, build, 1, after_superstep=[0, 3])

    assert [c.superstep for c in checks] == [0, 3]


def test_a_superstep_without_a_checkpoint_says_which_have_one(flows):
    with pytest.raises(FlowsUsageError, match=r"no checkpoint after superstep 40; .* 0, 1, 2"):
        check_restore_equivalence(flows, build, 1, after_superstep=40)


def test_after_superstep_is_a_number(flows):
    with pytest.raises(FlowsUsageError, match="pass a superstep number"):
        check_restore_equivalence(flows, build, 1, after_superstep="2")


def test_checkpoint_ids_come_from_the_storage(flows):
    storage = FlowsCheckpointStorage()
    earlier = flows.run(build(), 1, checkpoint_storage=storage)

    checks = check_restore_equivalence(
        flows, build, 1, storage=storage, checkpoints=earlier.checkpoints[1:2]
    )

    assert [(c.checkpoint_id, c.superstep) for c in checks] == [(earlier.checkpoints[1], 1)]


def test_an_id_of_another_run_is_explained(flows):
    other = flows.run(build(), 1, checkpoint_storage=FlowsCheckpointStorage())

    with pytest.raises(FlowsUsageError, match="after_superstep=N"):
        check_restore_equivalence(flows, build, 1, checkpoints=other.checkpoints[:1])


def test_checkpoints_and_after_superstep_do_not_mix(flows):
    with pytest.raises(FlowsUsageError, match="not both"):
        check_restore_equivalence(flows, build, 1, checkpoints=[], after_superstep=1)
