"""flow_store applies the rules of the storage each workflow was built with."""

from __future__ import annotations

import af_workflows as wf
import pytest
from agent_framework import FileCheckpointStorage, InMemoryCheckpointStorage

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import (
    CheckpointRefusedError,
    FlowsCheckpointStorage,
    checkpoint_storage,
)


def test_an_in_memory_workflow_gets_in_memory_rules(flows, flow_store):
    # Joined is not allowlisted anywhere: InMemoryCheckpointStorage never asks.
    run = flows.run(wf.build_diamond(InMemoryCheckpointStorage()), "hello")

    assert not run.failed
    assert checkpoint_storage(flow_store).rules == "memory"
    assert [c.id for c in flow_store.checkpoints()] == run.checkpoints
    assert len(run.checkpoints) == 5
    assert run.trace.of_kind("checkpoint.refused") == []
    flow_store.verify()


def test_in_memory_rules_keep_what_the_codec_would_change(flows, flow_store):
    # The checkpoint after superstep 3 holds Joined in flight: a deep copy, as
    # InMemoryCheckpointStorage keeps it, restores it as it was.
    first = flows.run(wf.build_diamond(InMemoryCheckpointStorage()), "hello")
    resumed = flows.run(
        wf.build_diamond(InMemoryCheckpointStorage()), checkpoint_id=first.checkpoints[3]
    )

    assert resumed.outputs == first.outputs == ["SHORT:HELLO|olleh"]


def test_a_file_storage_workflow_gets_file_rules_and_is_told_why(flows, flow_store, tmp_path):
    with pytest.raises(CheckpointRefusedError) as raised:
        flows.run(wf.build_diamond(FileCheckpointStorage(tmp_path)), "hello")

    assert raised.value.blocked_type == "af_workflows:Joined"
    assert "because the workflow was built with FileCheckpointStorage" in str(raised.value)
    assert checkpoint_storage(flow_store).rules == "file"
    assert list(tmp_path.iterdir()) == []  # flow_store stood in: nothing on disk


def test_a_workflow_without_storage_gets_file_rules(flows, flow_store):
    with pytest.raises(CheckpointRefusedError, match="built without checkpoint storage"):
        flows.run(wf.build_diamond(), "hello")


def test_the_test_can_choose_the_strict_file_rules(flows, flow_store):
    checkpoint_storage(flow_store, rules="file")

    with pytest.raises(CheckpointRefusedError, match="because the test chose them"):
        flows.run(wf.build_diamond(InMemoryCheckpointStorage()), "hello")


def test_rules_follow_each_run_not_the_first(flows, flow_store, tmp_path):
    flows.run(wf.build_diamond(InMemoryCheckpointStorage()), "hello")
    assert checkpoint_storage(flow_store).rules == "memory"

    run = flows.run(
        wf.build_diamond(FileCheckpointStorage(tmp_path)), "hello", raise_on_error=False
    )

    assert isinstance(run.error, CheckpointRefusedError)
    assert checkpoint_storage(flow_store).rules == "file"


def test_the_refusal_fails_the_test_once(flows, flow_store, tmp_path):
    run = flows.run(wf.build_diamond(), "hello", raise_on_error=False)

    assert isinstance(run.error, CheckpointRefusedError)
    assert "crewai" not in str(run.error)
    flow_store.verify()  # the teardown check has nothing to repeat


def test_a_tampered_in_memory_checkpoint_is_what_the_restore_loads(flows, flow_store):
    first = flows.run(wf.build_counter(InMemoryCheckpointStorage(), limit=3), 1)
    flow_store.tamper(first.checkpoints[2], lambda raw: raw.replace('"last": 1', '"last": 7'))

    loaded = checkpoint_storage(flow_store)
    import asyncio

    checkpoint = asyncio.run(loaded.load(first.checkpoints[2]))
    assert checkpoint.state["last"] == 7
    untouched = asyncio.run(loaded.load(first.checkpoints[1]))
    assert untouched.state["last"] == 1


def test_unknown_rules_are_a_usage_error(flows, flow_store):
    with pytest.raises(FlowsUsageError, match="rules='file'"):
        checkpoint_storage(flow_store, rules="disk")  # type: ignore[arg-type]
    with pytest.raises(FlowsUsageError, match="rules='memory'"):
        FlowsCheckpointStorage(rules="json")  # type: ignore[arg-type]


def test_a_standalone_storage_says_where_its_rules_come_from(flows):
    storage = FlowsCheckpointStorage()

    with pytest.raises(CheckpointRefusedError, match=r"FlowsCheckpointStorage\(\) applies them"):
        flows.run(wf.build_diamond(storage), "hello")
    assert FlowsCheckpointStorage(rules="memory").rules == "memory"
