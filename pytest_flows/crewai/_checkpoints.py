"""crewai checkpoints (``checkpoint=True`` / ``CheckpointConfig``) kept in ``flow_store``.

While a ``flow_store`` is installed, ``JsonProvider`` and ``SqliteProvider``
read and write through :class:`CheckpointRouter` (see
``store_patches.routed_checkpoints``): crewai still builds every checkpoint document
itself (``RuntimeState.model_dump(mode="json")`` then ``json.dumps``), so what
the store holds is byte for byte what the provider would have written; only
the file (or database row) is replaced by a record in memory. Locations follow
the real providers' formats (``<dir>/<branch>/<ts>_<id8>_p-<parent>.json``,
``<db>#<id>``), so ``CheckpointConfig(restore_from=record.location)``,
``Flow.from_checkpoint`` and ``Flow.fork`` work unchanged.

:class:`CheckpointTracer` turns crewai's checkpoint events into trace lines and
turns a checkpoint crewai failed to write (it only logs a warning) into a
teardown failure that names the field and its type.
"""

from __future__ import annotations

import json
import os
from typing import Any

from crewai.events.types.checkpoint_events import (
    CheckpointCompletedEvent,
    CheckpointFailedEvent,
    CheckpointForkCompletedEvent,
    CheckpointPrunedEvent,
    CheckpointRestoreCompletedEvent,
    CheckpointRestoreFailedEvent,
)
from pydantic_core import to_jsonable_python

from pytest_flows.adapters import (
    CheckpointNotFoundError,
    FlowStore,
    NotACheckpointError,
    decode_stored,
    find_unserializable,
    render_value,
)
from pytest_flows.crewai import _store_patches as store_patches

__all__ = ["CheckpointRouter", "CheckpointTracer", "not_a_checkpoint"]

FRAMEWORK = "crewai"


def _summary(data: str) -> tuple[str | None, dict[str, Any] | None, tuple[str, ...]]:
    """(trigger, flow state, completed methods) of a checkpoint document."""
    try:
        payload = json.loads(data)
    except ValueError:
        return None, None, ()
    if not isinstance(payload, dict):
        return None, None, ()
    trigger = payload.get("trigger")
    entities = payload.get("entities") or ()
    flows = [e for e in entities if isinstance(e, dict) and e.get("entity_type") == "flow"]
    if not flows:
        return trigger, None, ()
    # A context's RuntimeState lists every flow crewai saw in it, oldest first
    # (after Flow.fork: the restored entity, then the flow that runs): the
    # newest one is the flow this checkpoint is about.
    entity = flows[-1]
    state = entity.get("checkpoint_state")
    completed = tuple(sorted(str(m) for m in entity.get("checkpoint_completed_methods") or ()))
    return trigger, state if isinstance(state, dict) else None, completed


def _checkpoint_shape(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"it is a JSON {type(value).__name__}, not a checkpoint document"
    if not isinstance(value.get("entities"), list):
        return "it has no 'entities' list (the flows and crews it checkpointed)"
    return None


class CheckpointRouter:
    """What ``JsonProvider``/``SqliteProvider`` read and write during a flow_store test."""

    def __init__(self, store: FlowStore) -> None:
        self.store = store

    def write(self, kind: str, data: str, location: str, parent_id: str | None, branch: str) -> str:
        if kind == "sqlite":
            checkpoint_id = store_patches.sqlite_checkpoint_id()
            where = f"{location}#{checkpoint_id}"
        else:
            where = store_patches.json_checkpoint_location(location, branch, parent_id)
            stem = os.path.basename(where).removesuffix(".json")
            checkpoint_id = stem.split("_p-", 1)[0]
        trigger, state, completed = _summary(data)
        self.store.add_checkpoint(
            id=checkpoint_id,
            location=where,
            parent_id=parent_id,
            branch=branch,
            trigger=trigger,
            raw=data,
            framework=FRAMEWORK,
            kind=kind,
            base=str(location),
            state=state,
            completed=completed,
        )
        return where

    def read(self, location: str) -> str | None:
        record = self.store.find_checkpoint(str(location))
        if record is None:
            return None
        what = f"checkpoint {record.n} ({record.id}, at {record.location})"
        decode_stored(record.raw, what, need=_checkpoint_shape)
        return record.raw

    def missing(self, location: str) -> None:
        path = str(location).split("#", 1)[0]
        if os.path.isfile(path):
            return None  # a real checkpoint (say, a committed golden one): read it
        known = ", ".join(c.location for c in self.store.checkpoints()[-3:]) or "none yet"
        raise CheckpointNotFoundError(
            f"flow_store has no checkpoint at {location!r} and there is no such file "
            f"(latest checkpoints: {known}). Restore from a location listed by "
            "flow_store.checkpoints(), e.g. CheckpointConfig(restore_from="
            "flow_store.checkpoints()[0].location)."
        )

    def prune(self, location: str, max_keep: int, branch: str) -> int:
        return self.store.prune_checkpoints(str(location), branch, max_keep)

    def kind_of(self, location: str) -> str | None:
        record = self.store.find_checkpoint(location)
        return None if record is None else record.kind


def not_a_checkpoint(location: str, error: Any) -> NotACheckpointError:
    """crewai could not read what is at ``location`` as a checkpoint (``error``: pydantic's).

    pydantic's own message quotes the input, that is the file (or record): a
    stray file holding a secret would land in the test log. Only where and how
    the document fails is told.
    """
    from pytest_flows.crewai._persistence import current_backend

    document = getattr(error, "title", "") == "RuntimeState"
    problems = []
    for problem in error.errors()[:3]:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in problem["loc"])
        where = f"document{path}" if document else path.lstrip(".") or "<state>"
        problems.append(f"{where} ({problem.get('type', 'invalid')})")
    more = len(error.errors()) - len(problems)
    fails = ", ".join(problems) + (f" and {more} more" if more > 0 else "")
    detail = (
        f"the document fails at {fails}"
        if document
        else f"the flow state it holds does not fit the state model at {fails}"
    )
    record = current_backend().store.find_checkpoint(location)
    if record is not None:
        return NotACheckpointError(
            f"flow_store: checkpoint {record.n} ({record.id}, at {record.location}) no longer "
            f"reads as a crewai checkpoint: {detail}. It was changed after it "
            "was written (flow_store.tamper?). Nothing else in the store is affected: discard "
            "it with flow_store.discard(...) or restore from another checkpoint."
        )
    return NotACheckpointError(
        f"{location!r} is not a crewai checkpoint: {detail} (the file's "
        "contents are not shown). Restore from a file crewai's JsonProvider wrote, or from "
        "a location listed by flow_store.checkpoints()."
    )


_OUTPUTS = "checkpoint_method_outputs"


def describe_failure(trigger: str | None) -> str | None:
    """Which field of which flow made the checkpoint document unserializable."""
    from crewai.events.event_bus import crewai_event_bus

    state = crewai_event_bus.runtime_state
    for entity in getattr(state, "root", None) or ():
        try:
            entity.model_dump(mode="json")
            continue
        except Exception:
            pass
        owner = type(entity).__name__
        for name in type(entity).model_fields:
            try:
                entity.model_dump(mode="json", include={name})
                continue
            except Exception:
                value = getattr(entity, name, None)
            if name == _OUTPUTS and isinstance(value, list):
                for entry in value:
                    output = entry.get("output") if isinstance(entry, dict) else entry
                    method = entry.get("method", "?") if isinstance(entry, dict) else "?"
                    where = find_unserializable(output, to_jsonable_python, root="output")
                    if where is not None:
                        return f"{owner}: the output of method {method!r}: {where.describe()}"
            root = "state" if name == "checkpoint_state" else name
            where = find_unserializable(value, to_jsonable_python, root=root)
            if where is not None:
                return f"{owner}: {where.describe()}"
    return None


class CheckpointTracer:
    """A crewai stream sink: checkpoint events -> trace lines and store failures."""

    def __init__(self, store: FlowStore) -> None:
        self.store = store

    def __call__(self, source: Any, event: Any) -> None:
        from pytest_flows.crewai._persistence import current_backend

        try:  # a sink must never raise inside crewai's emit()
            # Only the innermost store traces: a golden replay installs its own over
            # the test's, which knows nothing of the replayed checkpoints.
            if current_backend().store is self.store:
                self._handle(event)
        except Exception as exc:  # pragma: no cover - reported, never raised
            self.store.record("trace.error", type(event).__name__, error=render_value(str(exc)))

    def _n(self, checkpoint_id: str | None) -> str:
        if not checkpoint_id:
            return "none"
        for record in self.store.checkpoints():
            if record.id == checkpoint_id:
                return str(record.n)
        return checkpoint_id

    def _handle(self, event: Any) -> None:
        store = self.store
        if isinstance(event, CheckpointCompletedEvent):
            store.record(
                "checkpoint.saved",
                event.trigger or "",
                n=self._n(event.checkpoint_id),
                branch=event.branch or "main",
                parent=self._n(event.parent_id),
            )
        elif isinstance(event, CheckpointFailedEvent):
            where = describe_failure(event.trigger)
            reason = f"{where} ({event.error})" if where else event.error
            store.note_checkpoint_failure(f"checkpoint on {event.trigger or 'demand'}: {reason}")
            store.record("checkpoint.failed", event.trigger or "", error=render_value(reason))
        elif isinstance(event, CheckpointRestoreCompletedEvent):
            store.record(
                "checkpoint.restored",
                "",
                n=self._n(event.checkpoint_id),
                branch=event.branch or "main",
            )
        elif isinstance(event, CheckpointRestoreFailedEvent):
            store.record("checkpoint.restore_failed", "", error=render_value(event.error))
        elif isinstance(event, CheckpointForkCompletedEvent):
            store.record(
                "checkpoint.forked", event.branch, parent=self._n(event.parent_checkpoint_id)
            )
        elif isinstance(event, CheckpointPrunedEvent):
            store.record(
                "checkpoint.pruned",
                "",
                branch=event.branch or "main",
                removed=str(event.removed_count),
            )
