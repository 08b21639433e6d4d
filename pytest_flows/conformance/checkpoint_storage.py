"""The conformance suite for Agent Framework ``CheckpointStorage`` backends.

What a workflow relies on when it checkpoints and restores, checked against
any storage: a checkpoint comes back field for field through the storage's
codec (datetimes, UUIDs, sets, messages, pending requests), listing and
``get_latest`` are per workflow name, ``previous_checkpoint_id`` lineage
survives, concurrent saves are all kept, ``delete`` reports what it did, and a
missing, corrupt or disallowed record raises ``WorkflowCheckpointException``
instead of loading.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

__all__ = ["CheckpointStorageSuite", "NotAllowlisted"]

T = TypeVar("T")


@dataclasses.dataclass
class NotAllowlisted:
    """A user type no storage allow-list names: it must not be restored silently."""

    value: int = 1


def _run(coro: Coroutine[Any, Any, T]) -> T:
    # The suite's checks are sync tests: they run under any async plugin (or none).
    return asyncio.run(coro)


def _stamp(n: int) -> str:
    return (dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=n)).isoformat()


def _checkpoint(workflow: str, n: int, previous: str | None = None, **fields: Any) -> Any:
    from agent_framework import WorkflowCheckpoint

    return WorkflowCheckpoint(
        workflow_name=workflow,
        graph_signature_hash=f"sig-{workflow}",
        checkpoint_id=f"{workflow}-{n:03d}",
        previous_checkpoint_id=previous,
        timestamp=_stamp(n),
        iteration_count=n,
        **fields,
    )


class CheckpointStorageSuite:
    """Checks for an Agent Framework ``CheckpointStorage``; subclass it in a ``Test*`` class.

    Provide a ``storage`` fixture that returns a fresh, empty storage. Override
    :meth:`corrupt_checkpoint` to run the corrupt-record check (skipped
    otherwise). Set ``enforces_allowlist = False`` for a storage that keeps
    live objects (like ``InMemoryCheckpointStorage``) rather than serializing.
    """

    enforces_allowlist: bool = True
    concurrent_saves: int = 16

    def corrupt_checkpoint(self, storage: Any, checkpoint_id: str) -> None:
        """Damage the stored checkpoint ``checkpoint_id`` (as a bad disk write would)."""
        pytest.skip(
            f"{type(self).__name__} does not override corrupt_checkpoint(storage, "
            "checkpoint_id); write a damaged record there to run this check"
        )

    # -- round trips through the codec ------------------------------------------------
    def test_round_trip_keeps_every_field(self, storage: Any) -> None:
        from agent_framework import WorkflowMessage

        message = WorkflowMessage(data={"text": "hi", "n": 1}, source_id="a", target_id="b")
        original = _checkpoint(
            "rt",
            1,
            previous="rt-000",
            messages={"a": [message]},
            state={
                "count": 3,
                "when": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
                "ref": uuid.UUID(int=9),
                "tags": {"x", "y"},
                "pair": (1, "two"),
                "nested": {"deep": [1.5, None, "ü"]},
            },
            metadata={"superstep": 1, "note": "kept"},
        )
        saved_id = _run(storage.save(original))
        assert saved_id == original.checkpoint_id
        loaded = _run(storage.load(saved_id))
        for name in (
            "workflow_name",
            "graph_signature_hash",
            "checkpoint_id",
            "previous_checkpoint_id",
            "timestamp",
            "state",
            "iteration_count",
            "metadata",
            "version",
        ):
            assert getattr(loaded, name) == getattr(original, name), (
                f"{name} did not survive save -> load: {getattr(original, name)!r} came back "
                f"as {getattr(loaded, name)!r}"
            )
        (back,) = loaded.messages["a"]
        assert (back.data, back.source_id, back.target_id) == ({"text": "hi", "n": 1}, "a", "b")

    def test_loads_are_independent_copies(self, storage: Any) -> None:
        checkpoint = _checkpoint("copy", 1, state={"log": ["a"]})
        _run(storage.save(checkpoint))
        checkpoint.state["log"].append("changed after the save")
        first = _run(storage.load(checkpoint.checkpoint_id))
        first.state["log"].append("changed after a load")
        assert _run(storage.load(checkpoint.checkpoint_id)).state["log"] == ["a"]

    def test_pending_requests_round_trip(self, storage: Any) -> None:
        from agent_framework import WorkflowEvent

        event = WorkflowEvent.request_info(
            request_id="req-1",
            source_executor_id="reviewer",
            request_data={"question": "ok?"},
            response_type=str,
        )
        _run(storage.save(_checkpoint("hitl", 1, pending_request_info_events={"req-1": event})))
        loaded = _run(storage.load("hitl-001"))
        assert list(loaded.pending_request_info_events) == ["req-1"]
        back = loaded.pending_request_info_events["req-1"]
        assert (back.request_id, back.source_executor_id, back.data) == (
            "req-1",
            "reviewer",
            {"question": "ok?"},
        )

    # -- listing, latest, lineage -------------------------------------------------------------
    def test_listing_is_per_workflow(self, storage: Any) -> None:
        for n in (1, 2, 3):
            _run(storage.save(_checkpoint("left", n)))
        _run(storage.save(_checkpoint("right", 1)))
        assert sorted(_run(storage.list_checkpoint_ids(workflow_name="left"))) == [
            "left-001",
            "left-002",
            "left-003",
        ]
        listed = _run(storage.list_checkpoints(workflow_name="right"))
        assert [c.checkpoint_id for c in listed] == ["right-001"]
        assert _run(storage.list_checkpoint_ids(workflow_name="nobody")) == []

    def test_latest_is_the_newest(self, storage: Any) -> None:
        assert _run(storage.get_latest(workflow_name="lat")) is None
        previous = None
        for n in (1, 2, 3):
            _run(storage.save(_checkpoint("lat", n, previous=previous)))
            previous = f"lat-{n:03d}"
        _run(storage.save(_checkpoint("other", 9)))
        latest = _run(storage.get_latest(workflow_name="lat"))
        assert latest is not None and latest.checkpoint_id == "lat-003"

    def test_lineage_survives(self, storage: Any) -> None:
        previous = None
        for n in (1, 2, 3):
            _run(storage.save(_checkpoint("chain", n, previous=previous)))
            previous = f"chain-{n:03d}"
        # a branch from the first checkpoint (time travel)
        _run(storage.save(_checkpoint("chain", 4, previous="chain-001")))
        walked, at = [], "chain-003"
        while at is not None:
            walked.append(at)
            at = _run(storage.load(at)).previous_checkpoint_id
        assert walked == ["chain-003", "chain-002", "chain-001"]
        branch = _run(storage.load("chain-004"))
        assert branch.previous_checkpoint_id == "chain-001"

    # -- concurrency ----------------------------------------------------------------------------
    def test_concurrent_saves_are_all_kept(self, storage: Any) -> None:
        count = self.concurrent_saves

        async def save_all() -> None:
            await asyncio.gather(
                *(storage.save(_checkpoint("busy", n, state={"n": n})) for n in range(count))
            )

        _run(save_all())
        ids = sorted(_run(storage.list_checkpoint_ids(workflow_name="busy")))
        assert ids == [f"busy-{n:03d}" for n in range(count)]
        for n in (0, count - 1):
            assert _run(storage.load(f"busy-{n:03d}")).state == {"n": n}

    # -- delete, missing, corrupt, disallowed ------------------------------------------
    def test_delete_reports_what_it_did(self, storage: Any) -> None:
        from agent_framework import WorkflowCheckpointException

        _run(storage.save(_checkpoint("del", 1)))
        _run(storage.save(_checkpoint("del", 2)))
        assert _run(storage.delete("del-001")) is True
        assert _run(storage.delete("del-001")) is False
        assert _run(storage.list_checkpoint_ids(workflow_name="del")) == ["del-002"]
        with pytest.raises(WorkflowCheckpointException):
            _run(storage.load("del-001"))

    def test_missing_checkpoint_raises(self, storage: Any) -> None:
        from agent_framework import WorkflowCheckpointException

        with pytest.raises(WorkflowCheckpointException):
            _run(storage.load("never-saved"))

    def test_corrupt_checkpoint_raises(self, storage: Any) -> None:
        from agent_framework import WorkflowCheckpointException

        _run(storage.save(_checkpoint("bad", 1)))
        self.corrupt_checkpoint(storage, "bad-001")
        # The runtime reports WorkflowCheckpointException as "cannot restore";
        # anything else escapes as a crash of the restore.
        with pytest.raises(WorkflowCheckpointException):
            _run(storage.load("bad-001"))

    def test_disallowed_type_is_not_restored(self, storage: Any) -> None:
        from agent_framework import WorkflowCheckpointException

        if not self.enforces_allowlist:
            pytest.skip("enforces_allowlist = False")
        checkpoint = _checkpoint("allow", 1, state={"obj": NotAllowlisted(3)})
        # Refusing the save (FlowsCheckpointStorage) or the load (FileCheckpointStorage)
        # both keep an unvetted class from being rebuilt.
        with pytest.raises(WorkflowCheckpointException):
            _run(storage.save(checkpoint))
            _run(storage.load("allow-001"))
