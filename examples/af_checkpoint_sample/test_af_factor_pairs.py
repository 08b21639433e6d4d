"""The tests a user writes for Agent Framework's checkpoint sample (see af_factor_pairs.py).

The sample keeps ``dict[int, list[tuple[int, int]]]`` in executor state. Its
production storage, ``InMemoryCheckpointStorage``, deep-copies, so a resume
gives the same result; a storage that writes JSON (``FileCheckpointStorage``,
or any durable one) gives the int keys back as str keys, and a resumed run
outputs ``{'1': [], ...}`` instead of ``{1: [], ...}``.
"""

from __future__ import annotations

import asyncio

import pytest
from af_factor_pairs import ComputeTask, build_fixed_workflow, build_workflow, main
from agent_framework import FileCheckpointStorage

from pytest_flows.agent_framework import (
    CheckpointRefusedError,
    FlowsCheckpointStorage,
    check_restore_equivalence,
    checkpoint_storage,
)

UP_TO_SIX = {
    1: [],
    2: [(1, 2)],
    3: [(1, 3)],
    4: [(1, 4), (2, 2)],
    5: [(1, 5)],
    6: [(1, 6), (2, 3), (3, 2)],
}


def test_the_sample_factors_each_number(flows):
    run = flows.run(build_workflow(), 6)

    assert run.outputs == [UP_TO_SIX]
    assert len(run.checkpoints) == 8  # the entry checkpoint + one per superstep


def test_the_samples_own_stop_and_resume_loop():
    assert asyncio.run(main(6, stop_after=3)) == UP_TO_SIX


def test_flow_store_follows_the_samples_in_memory_storage(flows, flow_store):
    # ComputeTask is allowlisted nowhere: InMemoryCheckpointStorage never asks,
    # so flow_store (following it) refuses nothing either.
    run = flows.run(build_workflow(), 6)

    assert not run.failed
    assert checkpoint_storage(flow_store).rules == "memory"
    assert [c.trigger for c in flow_store.checkpoints()] == [f"superstep {n}" for n in range(8)]


def test_interrupted_and_resumed_like_the_sample(flows, flow_store):
    # The sample stops after a superstep and resumes a fresh workflow from the
    # latest checkpoint; in memory the executor state comes back as it was.
    first = flows.run(build_workflow(), 6)
    after_three = checkpoint_storage(flow_store).at_superstep(3, "factor_pairs")[0]

    resumed = flows.run(build_workflow(), checkpoint_id=after_three)

    assert resumed.outputs == first.outputs == [UP_TO_SIX]


def test_the_strict_file_rules_refuse_the_unlisted_task(flows, flow_store):
    checkpoint_storage(flow_store, rules="file")

    with pytest.raises(CheckpointRefusedError, match="af_factor_pairs:ComputeTask"):
        flows.run(build_workflow(), 6)


def test_a_file_storage_resume_turns_the_int_keys_into_str(flows, tmp_path):
    # The real production codec, on disk: the sample's latent bug.
    def files() -> FileCheckpointStorage:
        return FileCheckpointStorage(
            tmp_path, allowed_checkpoint_types=["af_factor_pairs:ComputeTask"]
        )

    first = flows.run(build_workflow(files()), 6)
    resumed = flows.run(build_workflow(files()), checkpoint_id=first.checkpoints[3])

    assert first.outputs == [UP_TO_SIX]
    assert list(resumed.output) == ["1", "2", 3, 4, 5, 6]  # saved before the stop: str keys


def test_restore_equivalence_catches_the_int_keys(flows):
    storage = FlowsCheckpointStorage(allowed_types=[ComputeTask])  # FileCheckpointStorage's rules

    with pytest.raises(AssertionError) as raised:
        check_restore_equivalence(flows, build_workflow, 6, storage=storage)

    message = str(raised.value)
    assert "from checkpoint" in message and "saved after superstep 2" in message
    assert "outputs[0][1] (key): int came back as str (1 -> '1')" in message


def test_the_fixed_worker_restores_from_every_checkpoint(flows):
    storage = FlowsCheckpointStorage(allowed_types=[ComputeTask])

    checks = check_restore_equivalence(flows, build_fixed_workflow, 6, storage=storage)

    assert len(checks) == 8
    assert all(c.run.outputs == [UP_TO_SIX] for c in checks[:-1])
