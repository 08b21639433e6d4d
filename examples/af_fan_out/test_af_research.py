"""The tests a user writes for a fan-out / fan-in / switch-case workflow."""

from __future__ import annotations

import pytest
from af_research import Findings, Note, build_workflow, production_storage

from pytest_flows.agent_framework import (
    CheckpointRefusedError,
    FlowsCheckpointStorage,
    check_restore_equivalence,
    explore_seeds,
)

LAUNCH = "Should we launch the market API?"


def test_consensus_publishes(flows):
    run = flows.run(build_workflow(), LAUNCH)

    assert run.outputs == ["PUBLISH (100% agree): Should we launch the market API?"]
    assert run.status == "IDLE"


def test_dissent_escalates(flows):
    run = flows.run(build_workflow(), "Should we rewrite the market site?")

    assert run.outputs == ["ESCALATE (dissent: tech, risk): Should we rewrite the market site?"]
    assert run.trace.names("executor.invoked")[-1] == "escalate"


def test_the_superstep_trace(flows, snapshot):
    run = flows.run(build_workflow(), LAUNCH)

    assert run.trace.render() == snapshot


def test_the_analysts_order_does_not_matter(flows):
    # Every seed starts the three analysts in another order; the runs are equal.
    explore_seeds(flows, build_workflow, LAUNCH, seeds=range(12)).assert_deterministic()


def test_every_checkpoint_restores_to_the_same_run(flows, tmp_path):
    storage = FlowsCheckpointStorage(allowed_types=[Note, Findings])

    checks = check_restore_equivalence(flows, build_workflow, LAUNCH, storage=storage)

    assert len(checks) == 5  # entry + 4 supersteps


def test_production_checkpoints_need_the_allowlist(flows):
    # Without af_research's types allowed, FileCheckpointStorage refuses the
    # checkpoints that hold a Note in flight (production only logs that).
    with pytest.raises(CheckpointRefusedError, match="af_research:Note"):
        flows.run(build_workflow(FlowsCheckpointStorage()), LAUNCH)


def test_flow_store_stands_in_for_the_production_storage(flows, flow_store, tmp_path):
    # The workflow is built as in production; flow_store keeps its checkpoints in
    # memory (through the same codec and the same allowlist).
    run = flows.run(build_workflow(production_storage(tmp_path)), LAUNCH)

    assert [c.trigger for c in flow_store.checkpoints()] == [f"superstep {n}" for n in range(5)]
    assert [c.id for c in flow_store.lineage(run.last_checkpoint)] == run.checkpoints
    assert list(tmp_path.iterdir()) == []
