"""Checkpoints through the production codec: refusals, lineage, latest, time travel."""

from __future__ import annotations

import logging

import af_workflows as wf
import pytest
from agent_framework import (
    FileCheckpointStorage,
    InMemoryCheckpointStorage,
    WorkflowCheckpointException,
    register_checkpoint_type,
)
from agent_framework._workflows import _checkpoint_encoding

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import (
    CheckpointRefusedError,
    FlowsCheckpointStorage,
    checkpoint_storage,
)


def test_a_checkpoint_the_file_storage_refuses_fails_the_run(flows):
    storage = FlowsCheckpointStorage()  # af_workflows.Joined is not allowlisted

    with pytest.raises(CheckpointRefusedError) as raised:
        flows.run(wf.build_diamond(storage), "hello")

    error = raised.value
    assert error.blocked_type == "af_workflows:Joined"
    assert error.iteration == 3  # the Joined message is in flight after superstep 3
    message = str(error)
    assert "allowed_checkpoint_types=['af_workflows:Joined']" in message
    assert "register_checkpoint_type(Joined)" in message
    assert [r.blocked_type for r in storage.refused] == ["af_workflows:Joined"]
    assert [i.superstep for i in storage.history()] == [0, 1, 2, 4]


def test_the_refusal_is_in_the_trace_and_the_run_keeps_its_outputs(flows):
    storage = FlowsCheckpointStorage()

    run = flows.run(wf.build_diamond(storage), "hello", raise_on_error=False)

    assert isinstance(run.error, CheckpointRefusedError)
    assert run.outputs == ["SHORT:HELLO|olleh"]  # as in production: the run goes on
    refused = run.trace.of_kind("checkpoint.refused")
    assert [(e.get("superstep"), e.get("blocked")) for e in refused] == [
        ("3", "af_workflows:Joined")
    ]


def test_production_file_storage_refuses_the_same_checkpoint(flows, tmp_path, caplog):
    # The parity the in-memory storage keeps: FileCheckpointStorage writes the
    # same checkpoints and (only logging it) skips the same one.
    caplog.set_level(logging.WARNING, logger="agent_framework")
    files = FileCheckpointStorage(tmp_path)
    run = flows.run(wf.build_diamond(files), "hello", raise_on_error=False)
    ours = FlowsCheckpointStorage()
    flows.run(wf.build_diamond(ours), "hello", raise_on_error=False)

    assert len(list(tmp_path.glob("*.json"))) == len(ours) == 4
    assert "refusing to save" in caplog.text
    assert isinstance(run.error, CheckpointRefusedError)  # the harness flags it for files too
    assert run.error.blocked_type == "af_workflows:Joined"


def test_stock_in_memory_storage_hides_the_problem(flows):
    stock = InMemoryCheckpointStorage()

    run = flows.run(wf.build_diamond(stock), "hello")

    assert not run.failed
    assert len(run.checkpoints) == 5  # all "saved": only deep-copied, never encoded


def test_allowing_the_type_lets_every_checkpoint_through(flows):
    storage = FlowsCheckpointStorage(allowed_types=["af_workflows:Joined"])

    run = flows.run(wf.build_diamond(storage), "hello")

    assert len(storage) == 5
    assert storage.refused == []
    assert run.checkpoints == storage.ids("diamond")


def test_registered_checkpoint_types_are_allowed_as_in_production(flows):
    register_checkpoint_type(wf.Joined)
    try:
        run = flows.run(wf.build_diamond(FlowsCheckpointStorage()), "hello")
    finally:
        _checkpoint_encoding._REGISTERED_CHECKPOINT_TYPE_KEYS.discard("af_workflows:Joined")
    assert not run.failed


def test_the_allowlist_of_the_workflows_file_storage_carries_over(flows, flow_store, tmp_path):
    files = FileCheckpointStorage(tmp_path, allowed_checkpoint_types=["af_workflows:Joined"])

    run = flows.run(wf.build_diamond(files), "hello")  # flow_store: every run's storage

    assert not run.failed
    assert len(checkpoint_storage(flow_store)) == len(flow_store.checkpoints()) == 5
    assert list(tmp_path.iterdir()) == []  # the in-memory store replaced the file storage


def test_get_latest_is_the_last_saved_not_a_timestamp_tie(flows):
    stock = InMemoryCheckpointStorage()
    ours = FlowsCheckpointStorage(allowed_types=[wf.Joined])
    flows.run(wf.build_diamond(stock), "hello")
    run = flows.run(wf.build_diamond(ours), "hello")

    async def latest(storage):
        return await storage.get_latest(workflow_name="diamond")

    import asyncio

    stock_latest = asyncio.run(latest(stock))
    our_latest = asyncio.run(latest(ours))
    # The clock is frozen (virtual), so every timestamp ties: the stock storage
    # returns the first checkpoint; ours returns the one saved last.
    assert stock_latest.iteration_count == 0
    assert our_latest.checkpoint_id == run.last_checkpoint
    assert our_latest.iteration_count == 4


def test_lineage_chains_the_run_and_branches_after_time_travel(flows):
    storage = FlowsCheckpointStorage()
    first = flows.run(wf.build_counter(storage, limit=4), 1)
    middle = storage.at_superstep(3)[0]

    second = flows.run(wf.build_counter(storage, limit=4), checkpoint_id=middle)

    assert storage.lineage(first.last_checkpoint) == first.checkpoints
    assert storage.lineage(second.last_checkpoint) == [
        *first.checkpoints[:4],
        *second.checkpoints,
    ]
    assert len(storage.children(middle)) == 2
    assert storage.latest_id("counter") == second.last_checkpoint
    assert second.outputs == first.outputs[1:]  # supersteps 4.. again: same outputs


def test_restore_from_any_checkpoint_on_a_fresh_workflow(flows):
    storage = FlowsCheckpointStorage()
    full = flows.run(wf.build_counter(storage, limit=3), 1)

    for info in storage.history("counter")[:-1]:
        resumed = flows.run(wf.build_counter(storage, limit=3), checkpoint_id=info.checkpoint_id)
        assert resumed.outputs[-1] == full.outputs[-1] == "done at 3 after 3 visits"
        assert resumed.state == full.state


def test_a_changed_graph_gets_the_frameworks_signature_error(flows):
    storage = FlowsCheckpointStorage(allowed_types=[wf.Joined])
    run = flows.run(wf.build_diamond(storage), "hello")

    with pytest.raises(WorkflowCheckpointException, match="graph has changed"):
        flows.run(wf.build_diamond(storage, extra_edge=True), checkpoint_id=run.checkpoints[1])


def test_loading_an_unknown_checkpoint_names_the_stored_ones(flows):
    storage = FlowsCheckpointStorage(allowed_types=[wf.Joined])
    flows.run(wf.build_diamond(storage), "hello")

    with pytest.raises(WorkflowCheckpointException, match=r"No checkpoint found with ID nope"):
        flows.run(wf.build_diamond(storage), checkpoint_id="nope")


def test_restoring_without_any_storage_is_a_usage_error(flows):
    with pytest.raises(FlowsUsageError, match="has no storage to restore from"):
        flows.run(wf.build_diamond(), checkpoint_id="some-id")


def test_raw_is_the_json_the_file_storage_writes(flows):
    storage = FlowsCheckpointStorage(allowed_types=[wf.Joined])
    run = flows.run(wf.build_diamond(storage), "hello")

    raw = storage.raw(run.checkpoints[3])  # after superstep 3: a Joined in flight
    assert raw["iteration_count"] == 3
    assert raw["workflow_name"] == "diamond"
    (message,) = raw["messages"]["join"]
    assert message["__type__"].endswith(":WorkflowMessage")
    assert set(message) == {"__pickled__", "__type__"}


def test_round_trip_helpers(flows):
    storage = FlowsCheckpointStorage()
    storage.assert_round_trip({"n": 1, "tags": ["a"]})
    with pytest.raises(AssertionError, match=r"came back as"):
        storage.assert_round_trip({1: "int keys become strings"})
    with pytest.raises(CheckpointRefusedError, match="af_workflows:Ticket"):
        storage.round_trip({"ticket": wf.Ticket("hi")})
    storage.allow(wf.Ticket)
    back, changes = storage.round_trip({"ticket": wf.Ticket("hi")})
    assert back == {"ticket": wf.Ticket("hi")} and changes == []


# -- flow_store ------------------------------------------------------------------------


@pytest.fixture
def store(flow_store):
    checkpoint_storage(flow_store).allow(wf.Joined, wf.ReviewRequest)
    return flow_store


def test_flow_store_holds_the_encoded_checkpoints(flows, store):
    run = flows.run(wf.build_diamond(), "hello")

    records = store.checkpoints()
    assert [r.id for r in records] == run.checkpoints
    assert {r.framework for r in records} == {"agent_framework"}
    assert [r.trigger for r in records] == [f"superstep {n}" for n in range(5)]
    assert [r.id for r in store.lineage(run.last_checkpoint)] == run.checkpoints
    assert records[1].state == {"text": "hello"}
    assert store.branches() == ["diamond"]


def test_flow_store_branches_after_time_travel(flows, store):
    first = flows.run(wf.build_counter(limit=3), 1)
    flows.run(wf.build_counter(limit=3), checkpoint_id=first.checkpoints[2])

    assert store.branches() == ["counter", "counter~2"]


def test_a_tampered_checkpoint_fails_the_restore(flows, store):
    run = flows.run(wf.build_counter(limit=3), 1)
    store.tamper(
        run.checkpoints[2], lambda raw: raw.replace('"__pickled__": "', '"__pickled__": "x')
    )

    with pytest.raises(WorkflowCheckpointException):
        flows.run(wf.build_counter(limit=3), checkpoint_id=run.checkpoints[2])


def test_a_discarded_checkpoint_is_gone(flows, store):
    run = flows.run(wf.build_counter(limit=3), 1)
    store.discard(run.checkpoints[1])

    assert checkpoint_storage(store).ids() == [
        c for c in run.checkpoints if c != run.checkpoints[1]
    ]
    with pytest.raises(WorkflowCheckpointException, match="No checkpoint found"):
        flows.run(wf.build_counter(limit=3), checkpoint_id=run.checkpoints[1])


def test_a_refusal_in_a_run_is_reported_once_by_the_run(flows, store):
    from pytest_flows._internal.state.store import FlowStore

    fresh = FlowStore(flows)  # no allowlist
    storage = FlowsCheckpointStorage(store=fresh)
    run = flows.run(wf.build_diamond(storage), "hello", raise_on_error=False)

    assert isinstance(run.error, CheckpointRefusedError)
    fresh.verify()  # no teardown error repeating what the run already failed with
    assert fresh.checkpoint_failures() == []


def test_a_refusal_outside_flows_run_still_reaches_flow_store(flows, store):
    import asyncio

    from agent_framework import WorkflowCheckpoint

    from pytest_flows._internal.state.store import FlowStore

    fresh = FlowStore(flows)
    storage = FlowsCheckpointStorage(store=fresh)
    checkpoint = WorkflowCheckpoint(workflow_name="diamond", graph_signature_hash="x")
    checkpoint.state = {"joined": wf.Joined(["a"])}

    with pytest.raises(WorkflowCheckpointException, match="refusing to save"):
        asyncio.run(storage.save(checkpoint))

    with pytest.raises(AssertionError, match="1 checkpoint"):
        fresh.verify()
    assert len(fresh.checkpoint_failures()) == 1


def test_the_checkpoint_storage_protocol(flows):
    import asyncio

    from agent_framework import CheckpointStorage, WorkflowCheckpoint

    storage = FlowsCheckpointStorage()
    typed: CheckpointStorage = storage  # satisfies the framework's protocol
    run = flows.run(wf.build_counter(storage, limit=2), 1)

    async def exercise() -> None:
        ids = await typed.list_checkpoint_ids(workflow_name="counter")
        assert ids == run.checkpoints
        listed = await typed.list_checkpoints(workflow_name="counter")
        assert [c.checkpoint_id for c in listed] == ids
        assert [c.iteration_count for c in listed] == [0, 1, 2, 3]
        assert await typed.list_checkpoint_ids(workflow_name="other") == []
        loaded = await typed.load(ids[1])
        assert loaded.state["last"] == 1 and loaded is not await typed.load(ids[1])
        assert await typed.delete(ids[1]) is True
        assert await typed.delete(ids[1]) is False
        assert await typed.list_checkpoint_ids(workflow_name="counter") == [ids[0], *ids[2:]]
        bad = WorkflowCheckpoint(workflow_name="counter", graph_signature_hash="x")
        bad.checkpoint_id = "../../etc/passwd"
        with pytest.raises(WorkflowCheckpointException, match="refusing to save"):
            await typed.save(bad)
        assert storage.refused[-1].checkpoint_id == "../../etc/passwd"

    asyncio.run(exercise())
