"""``flow_store``: one in-memory store behind a flow framework's persistence and checkpoints.

The store is framework-neutral: it keeps, per state id, the ordered history
of saves (each in its *encoded* form, exactly as a production backend would
have written it), pending human-feedback records, and checkpoints with their
lineage. A framework adapter plugs a backend in from its ``bind_store``
hook (:class:`~pytest_flows._internal.state.store_records.StoreBackend`); the backend routes the
framework's persistence and checkpoint calls here, encodes through the framework's
production codec, and tells the store how to read its records back.

Everything happens in memory: nothing is written to disk.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.state.codec import FieldChange, diff_snapshots
from pytest_flows._internal.state.store_records import (
    CheckpointNotFoundError,
    CheckpointRecord,
    CrashPoint,
    InvalidStateIdError,
    PendingFeedback,
    SimulatedCrash,
    StateSave,
)
from pytest_flows._internal.trace import TraceEvent

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["CheckpointRef", "FlowStore", "StateRef"]


_UNSAFE_ID = re.compile(r"[/\\\x00]")

StateRef = str | StateSave
CheckpointRef = str | int | CheckpointRecord


class FlowStore:
    """The ``flow_store`` fixture: an in-memory, codec-faithful flow state store.

    Read it in assertions: :meth:`history`, :meth:`latest`, :meth:`pending`,
    :meth:`checkpoints`, :meth:`lineage`, :meth:`diff`. Everything the flow
    saved, loaded, forked or checkpointed also appears in the trace.
    """

    def __init__(self, session: FlowsSession | None = None, *, strict: bool = False) -> None:
        self._session = session
        #: Strict mode: a save that the production codec would silently change
        #: (``datetime`` -> ``str`` in a dict state, an object -> its ``str()``)
        #: fails like a save that crashes the codec.
        self.strict = strict
        self._lock = threading.RLock()
        self._saves: dict[str, list[StateSave]] = {}
        self._pending: dict[str, PendingFeedback] = {}
        self._checkpoints: list[CheckpointRecord] = []
        self._backends: dict[str, Any] = {}
        self._crash: CrashPoint | None = None
        self._crash_count = 0
        self._checkpoint_failures: list[str] = []
        self._failures_seen = 0

    # -- backends ----------------------------------------------------------------
    def register_backend(self, backend: Any) -> None:
        """Called by a framework adapter when it binds this store."""
        with self._lock:
            self._backends[backend.framework] = backend

    def backend(self, framework: str) -> Any:
        """The backend of ``framework`` (``"crewai"``), activating its adapter if needed."""
        backend = self._backends.get(framework)
        if backend is None and self._session is not None and framework in sys.modules:
            self._session.ensure(framework)
            backend = self._backends.get(framework)
        if backend is None:
            raise FlowsUsageError(
                f"flow_store has no {framework} backend: {framework} is not imported in this "
                f"test yet. Import your flow module (it imports {framework}) before using "
                "flow_store's framework helpers."
            )
        return backend

    def backend_for(self, target: object) -> Any:
        """The backend that handles ``target`` (a flow, a state, a run)."""
        for backend in list(self._backends.values()):
            if backend.accepts(target):
                return backend
        if self._session is not None:
            self._activate_imported()
            for backend in list(self._backends.values()):
                if backend.accepts(target):
                    return backend
        raise FlowsUsageError(
            f"flow_store cannot handle {type(target).__qualname__} values: pass a flow state "
            "(a pydantic model or dict), a FlowRun, or a flow class/instance of a supported "
            "framework."
        )

    def _activate_imported(self) -> None:
        """Activate the adapters of imported frameworks (each binds a backend here)."""
        from pytest_flows._internal.contract.adapters import adapter_specs

        assert self._session is not None
        for spec in adapter_specs():
            if spec.framework in sys.modules and spec.framework not in self._backends:
                self._session.ensure(spec.framework)

    @property
    def persistence(self) -> Any:
        """The store as the framework's persistence object, for ``MyFlow(persistence=...)``.

        crewai: a ``FlowPersistence``, needed for flows with method-level
        ``@persist`` only (crewai leaves ``flow.persistence`` unset for them, so
        resume and fork silently do nothing unless a persistence is passed).
        """
        if self._session is not None:
            self._activate_imported()
        with self._lock:
            offering = [b for b in self._backends.values() if hasattr(b, "persistence")]
        if len(offering) != 1:
            names = ", ".join(b.framework for b in offering) or "none"
            raise FlowsUsageError(
                f"flow_store.persistence: the frameworks with a persistence object here are: "
                f"{names}. Import your flow module (it imports its framework) first"
                + (", or use flow_store.backend(framework).persistence." if offering else ".")
            )
        return offering[0].persistence

    # -- writes (called by backends) -------------------------------------------------
    @staticmethod
    def check_id(state_id: Any, *, what: str = "state id") -> str:
        """``state_id`` as a storage key, or :class:`InvalidStateIdError`."""
        key = str(state_id) if state_id is not None else ""
        problem = None
        if not key:
            problem = "it is empty"
        else:
            bad = _UNSAFE_ID.search(key)
            if bad is not None:
                problem = f"it contains the path character {bad.group()!r}"
            elif key in (".", "..") or key.startswith(".."):
                problem = "it is a relative path component"
        if problem:
            raise InvalidStateIdError(
                f"flow_store refuses {what} {key!r}: {problem}. An id becomes a storage key (a "
                "file or directory name in file-based backends), so path characters could "
                "reach outside the store. Use an opaque id such as a UUID or 'order-42'."
            )
        return key

    def record(self, kind: str, name: str = "", **fields: str) -> None:
        """Append a store event to the test's trace (if the store belongs to one)."""
        if self._session is not None:
            self._session.record(TraceEvent(kind=kind, name=name, fields=tuple(fields.items())))

    def append_save(
        self,
        state_id: str,
        method: str,
        raw: str,
        *,
        framework: str = "",
        lossy: Sequence[FieldChange] = (),
        value: Any = None,
    ) -> StateSave:
        """Store one encoded save (honouring an armed :meth:`crash_at`)."""
        key = self.check_id(state_id)
        with self._lock:
            crash = self._tick_crash()
            if crash is not None and crash.when == "before":
                self.record("store.crashed", method, id=key, point=str(crash))
                raise SimulatedCrash(crash, key)
            history = self._saves.setdefault(key, [])
            save = StateSave(
                state_id=key,
                index=len(history) + 1,
                method=method,
                raw=raw,
                framework=framework,
                lossy=tuple(lossy),
                value=value,
            )
            history.append(save)
        fields = {"id": key, "n": str(save.index)}
        if save.lossy:
            fields["lossy"] = ", ".join(change.path for change in save.lossy)
        self.record("state.saved", method, **fields)
        if crash is not None:
            self.record("store.crashed", method, id=key, point=str(crash))
            raise SimulatedCrash(crash, key)
        return save

    def _tick_crash(self) -> CrashPoint | None:
        if self._crash is None:
            return None
        self._crash_count += 1
        if self._crash_count == self._crash.save:
            point, self._crash = self._crash, None
            return point
        return None

    def put_pending(self, pending: PendingFeedback) -> None:
        with self._lock:
            self._pending[self.check_id(pending.state_id)] = pending
        self.record("feedback.saved", pending.method, id=pending.state_id)

    def clear_pending(self, state_id: str) -> None:
        key = self.check_id(state_id)
        with self._lock:
            removed = self._pending.pop(key, None)
        if removed is not None:
            self.record("feedback.cleared", removed.method, id=key)

    def add_checkpoint(self, **fields: Any) -> CheckpointRecord:
        """Store one checkpoint (fields as :class:`CheckpointRecord`, without ``n``)."""
        with self._lock:
            record = CheckpointRecord(n=len(self._checkpoints) + 1, **fields)
            self._checkpoints.append(record)
            return record

    def prune_checkpoints(self, base: str, branch: str, keep: int) -> int:
        """Drop the oldest checkpoints of ``branch`` under ``base`` beyond ``keep``."""
        with self._lock:
            mine = [c for c in self._checkpoints if c.base == base and c.branch == branch]
            doomed = mine if keep == 0 else mine[:-keep] if keep > 0 else []
            for record in doomed:
                self._checkpoints.remove(record)
            return len(doomed)

    def note_checkpoint_failure(self, message: str) -> None:
        """A checkpoint the framework could not write (it only logs these)."""
        with self._lock:
            self._checkpoint_failures.append(message)

    # -- reads ---------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """Every state id with at least one save, in first-save order."""
        with self._lock:
            return list(self._saves)

    def history(self, state_id: Any) -> list[StateSave]:
        """The saves of ``state_id``, oldest first (empty if none)."""
        key = self.check_id(state_id)
        with self._lock:
            return list(self._saves.get(key, ()))

    def latest(self, state_id: Any) -> StateSave | None:
        """The newest save of ``state_id`` (what a resume or a fork loads), or None."""
        history = self.history(state_id)
        return history[-1] if history else None

    def methods(self, state_id: Any) -> list[str]:
        """The methods whose completion was saved under ``state_id``, in order."""
        return [save.method for save in self.history(state_id)]

    def snapshots(self, state_id: Any) -> list[dict[str, Any]]:
        """The decoded snapshots of ``state_id``, oldest first."""
        return [save.snapshot for save in self.history(state_id)]

    def pending(self, state_id: Any) -> PendingFeedback | None:
        """The pending human-feedback record of ``state_id``, or None."""
        key = self.check_id(state_id)
        with self._lock:
            return self._pending.get(key)

    @property
    def pending_ids(self) -> list[str]:
        with self._lock:
            return list(self._pending)

    def checkpoints(self, branch: str | None = None) -> list[CheckpointRecord]:
        """Checkpoints in write order, optionally of one ``branch``."""
        with self._lock:
            return [c for c in self._checkpoints if branch is None or c.branch == branch]

    def checkpoint(self, ref: CheckpointRef) -> CheckpointRecord:
        """A checkpoint by write number (1-based), id or location."""
        if isinstance(ref, CheckpointRecord):
            return ref
        with self._lock:
            for record in self._checkpoints:
                if ref in (record.n, record.id, record.location):
                    return record
            known = ", ".join(f"{c.n}: {c.id}" for c in self._checkpoints) or "none written yet"
        raise CheckpointNotFoundError(
            f"flow_store has no checkpoint {ref!r} (checkpoints: {known}). Enable checkpointing "
            "on the flow (checkpoint=True or CheckpointConfig(on_events=[...])) and refer to a "
            "checkpoint by number, id or location from flow_store.checkpoints()."
        )

    def find_checkpoint(self, location: str) -> CheckpointRecord | None:
        with self._lock:
            return next((c for c in self._checkpoints if c.location == location), None)

    def lineage(self, ref: CheckpointRef) -> list[CheckpointRecord]:
        """The chain of checkpoints from the root to ``ref`` (following parent ids)."""
        record: CheckpointRecord | None = self.checkpoint(ref)
        chain: list[CheckpointRecord] = []
        seen: set[str] = set()
        with self._lock:
            by_id = {c.id: c for c in self._checkpoints}
        while record is not None and record.id not in seen:
            chain.append(record)
            seen.add(record.id)
            record = by_id.get(record.parent_id) if record.parent_id else None
        return chain[::-1]

    def branches(self) -> list[str]:
        """Branch labels in first-write order."""
        with self._lock:
            return list(dict.fromkeys(c.branch for c in self._checkpoints))

    def checkpoint_failures(self) -> list[str]:
        """Checkpoints the framework failed to write (and only logged); marks them seen.

        An unseen failure fails the test at teardown: in production the flow
        runs on without the checkpoint you think you have.
        """
        with self._lock:
            self._failures_seen = len(self._checkpoint_failures)
            return list(self._checkpoint_failures)

    def _failure_mark(self) -> int:
        with self._lock:
            return len(self._checkpoint_failures)

    def _failures_since(self, mark: int) -> list[str]:
        """The checkpoint failures after ``mark``, now reported (so seen)."""
        with self._lock:
            self._failures_seen = len(self._checkpoint_failures)
            return self._checkpoint_failures[mark:]

    def diff(self, before: Any, after: Any, *, ignore: tuple[str, ...] = ()) -> str:
        """A readable diff of two snapshots (saves, checkpoints, states, runs, dicts)."""
        return diff_snapshots(_as_snapshot(before), _as_snapshot(after), ignore=ignore)

    # -- test-side manipulation ------------------------------------------------------
    def tamper(self, ref: StateRef | CheckpointRef, edit: Callable[[str], str] | str) -> None:
        """Replace a stored record's encoded text, as corruption on disk would.

        ``ref`` is a state id (its latest save), a :class:`StateSave`, or a
        checkpoint (number, id, location, record); ``edit`` maps the old text to
        the new one, or is the new text.
        """
        change: Callable[[str], str] = edit if callable(edit) else (lambda _old: str(edit))
        with self._lock:
            if isinstance(ref, StateSave) or (isinstance(ref, str) and ref in self._saves):
                save = ref if isinstance(ref, StateSave) else self._saves[ref][-1]
                history = self._saves[save.state_id]
                position = history.index(save)
                history[position] = dataclasses.replace(save, raw=change(save.raw))
                return
            try:
                record = self.checkpoint(ref)
            except CheckpointNotFoundError:
                raise FlowsUsageError(
                    f"flow_store.tamper({ref!r}, ...): no state id or checkpoint {ref!r} in the "
                    f"store (ids: {', '.join(self._saves) or 'none'}; checkpoints: "
                    f"{len(self._checkpoints)})."
                ) from None
            position = self._checkpoints.index(record)
            self._checkpoints[position] = dataclasses.replace(record, raw=change(record.raw))

    def discard(self, ref: StateSave | CheckpointRef) -> None:
        """Remove one save or checkpoint (say, a corrupted one) and nothing else."""
        with self._lock:
            if isinstance(ref, StateSave):
                self._saves[ref.state_id].remove(ref)
                if not self._saves[ref.state_id]:
                    del self._saves[ref.state_id]
                return
            self._checkpoints.remove(self.checkpoint(ref))

    @contextlib.contextmanager
    def crash_at(self, point: CrashPoint) -> Iterator[CrashPoint]:
        """Stop the next run at ``point`` by raising :class:`SimulatedCrash` from the store."""
        with self._lock:
            self._crash, self._crash_count = point, 0
        try:
            yield point
        finally:
            with self._lock:
                self._crash, self._crash_count = None, 0

    # -- assertions ------------------------------------------------------------------
    def assert_round_trip(
        self,
        value: Any,
        *,
        flows: FlowsSession | None = None,
        inputs: dict[str, Any] | None = None,
        crash: CrashPoint | None = None,
        checkpoint: int | None = None,
    ) -> None:
        """Assert that a state survives the store, or that a flow survives an interruption.

        With a state - a flow state (pydantic model or dict), a
        :class:`StateSave`, or a ``FlowRun`` (every save of its state id) -
        saving and loading it must give an equal state; the failure names each
        field that changed and how (``when: datetime.datetime came back as str``).

        With a flow class (or factory) and ``flows``: restore -> continue must
        match the uninterrupted run. ``checkpoint=k`` restores its k-th
        checkpoint (0-based) and compares final state, output and trace;
        ``crash=CrashPoint(...)`` crashes there and resumes with ``inputs["id"]``
        (final state and output); with neither, every "after save k" point is
        checked.
        """
        if flows is not None:
            self._assert_continuation(flows, value, inputs, crash, checkpoint)
            return
        checks: list[tuple[str, Sequence[FieldChange]]] = []
        if isinstance(value, StateSave):
            checks.append((repr(value), value.lossy))
        elif _is_run(value):
            backend = self.backend_for(value.flow)
            state_id = backend.state_id(value.state)
            saves = self.history(state_id) if state_id else []
            if not saves:
                raise AssertionError(
                    f"flow_store.assert_round_trip: nothing was saved under state id "
                    f"{state_id!r} (a crewai flow saves only if it, or a method, has @persist)."
                )
            checks.extend((repr(save), save.lossy) for save in saves)
        else:
            backend = self.backend_for(value)
            checks.append((f"{type(value).__qualname__} state", backend.round_trip(value)))
        problems = [(where, changes) for where, changes in checks if changes]
        if problems:
            lines = ["save -> load does not give the state back:"]
            for where, changes in problems:
                lines.append(f"  {where}:")
                lines.extend(f"    {change.describe()}" for change in changes)
            lines.append(
                "Use JSON-native field types, or a pydantic state model whose fields "
                "validate back from JSON (datetime, UUID, set[...] fields, ...)."
            )
            raise AssertionError("\n".join(lines))

    def _assert_continuation(
        self,
        flows: FlowsSession,
        flow: Any,
        inputs: dict[str, Any] | None,
        crash: CrashPoint | None,
        checkpoint: int | None,
    ) -> None:
        from pytest_flows._internal.state.state_properties import (
            assert_crash_resume,
            assert_time_travel,
        )

        if checkpoint is not None:
            assert_time_travel(flows, self, flow, checkpoint, inputs=inputs)
            return
        if crash is not None:
            assert_crash_resume(flows, self, flow, crash, inputs=inputs)
            return
        baseline = self.backend_for(flow).operations(flows).run(flow, inputs)
        saves = baseline.save_count(self)
        if saves == 0:
            raise FlowsUsageError(
                "flow_store.assert_round_trip(flow, flows=...): the flow saved nothing; "
                "decorate it (or its methods) with @persist, or pass checkpoint=k to check "
                "its checkpoints instead."
            )
        for save in range(1, saves + 1):
            assert_crash_resume(flows, self, flow, CrashPoint(save), inputs=inputs)

    def verify(self) -> None:
        """Teardown check: every checkpoint failure was looked at."""
        with self._lock:
            unseen = self._checkpoint_failures[self._failures_seen :]
        if unseen:
            raise AssertionError(
                f"flow_store: {len(unseen)} checkpoint(s) could not be written; crewai only "
                "logs this ('Auto-checkpoint failed') and the flow runs on without them:\n"
                + "".join(f"  - {message}\n" for message in unseen)
                + "Make those fields JSON-serializable, or, if the test expects the failure, "
                "read them with flow_store.checkpoint_failures()."
            )

    def __repr__(self) -> str:
        with self._lock:
            saves = sum(len(h) for h in self._saves.values())
            return (
                f"<FlowStore ids={len(self._saves)} saves={saves} "
                f"pending={len(self._pending)} checkpoints={len(self._checkpoints)}>"
            )


def _is_run(value: Any) -> bool:
    from pytest_flows._internal.run import FlowRun

    return isinstance(value, FlowRun)


def _as_snapshot(value: Any) -> Any:
    if isinstance(value, StateSave | PendingFeedback):
        return value.snapshot
    if isinstance(value, CheckpointRecord):
        return value.state if value.state is not None else value.payload
    if _is_run(value):
        value = value.state
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    raise FlowsUsageError(
        f"flow_store.diff() compares saves, checkpoints, runs and states; got "
        f"{type(value).__qualname__}."
    )
