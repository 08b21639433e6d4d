"""crewai's side of ``flow_store``: ``@persist`` and pending feedback, in memory.

``@persist()`` with no argument calls crewai's ``default_flow_persistence()``
when the user's flow module is *imported*. The adapter's ``configure()``
therefore registers :func:`routed_persistence` as crewai's persistence factory
as soon as crewai is imported: what ``@persist()`` binds is a
:class:`FlowStorePersistence`, a router that sends every call to

* the test's ``flow_store`` while one is installed;
* else, inside any other flows test, a fresh in-memory store for that test;
* else (outside flows tests) one process-local in-memory store.

It never touches the disk. Every save is encoded exactly as
``SQLiteFlowPersistence`` encodes it (``model_dump(mode="json")`` with its
fallback, then ``json.dumps(default=_json_default)``), so a state that crashes
the real backend crashes here too, with the field and type named, and loads
return what the real backend would return.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from crewai.flow.flow import Flow
from crewai.flow.persistence.base import FlowPersistence
from pydantic import BaseModel, Field, ValidationError

from pytest_flows.adapters import (
    FieldChange,
    FlowStore,
    PendingFeedback,
    Scheduler,
    StateCodecError,
    StateSave,
    StoreCorruptedError,
    active_scheduler,
    differences,
    find_unserializable,
)
from pytest_flows.crewai import _store_patches as patches
from pytest_flows.crewai._compat import SQLITE_ENCODE_CALL, add_stream_sink, reset_stream_sinks

if TYPE_CHECKING:
    from crewai.flow.async_feedback.types import PendingFeedbackContext

    from pytest_flows.adapters import FlowsSession

__all__ = [
    "CrewAIStoreBackend",
    "FlowStorePersistence",
    "current_backend",
    "install",
    "routed_persistence",
]

FRAMEWORK = "crewai"


class FlowStorePersistence(FlowPersistence):
    """A crewai ``FlowPersistence`` whose storage is the current test's ``flow_store``.

    All instances route the same way, so one bound at import time by
    ``@persist()`` and one restored from a checkpoint (crewai rebuilds it by
    its ``persistence_type``) reach the same store.
    """

    persistence_type: str = Field(default="FlowStorePersistence")

    def init_db(self) -> None:
        return None

    def save_state(
        self, flow_uuid: str, method_name: str, state_data: dict[str, Any] | BaseModel
    ) -> None:
        current_backend().save_state(flow_uuid, method_name, state_data)

    def load_state(self, flow_uuid: str) -> dict[str, Any] | None:
        return current_backend().load_state(flow_uuid, intent=patches.restore_intent(flow_uuid))

    def save_pending_feedback(
        self,
        flow_uuid: str,
        context: PendingFeedbackContext,
        state_data: dict[str, Any] | BaseModel,
    ) -> None:
        current_backend().save_pending_feedback(flow_uuid, context, state_data)

    def load_pending_feedback(
        self, flow_uuid: str
    ) -> tuple[dict[str, Any], PendingFeedbackContext] | None:
        return current_backend().load_pending_feedback(flow_uuid)

    def clear_pending_feedback(self, flow_uuid: str) -> None:
        current_backend().clear_pending_feedback(flow_uuid)


_ROUTER = FlowStorePersistence()


def routed_persistence() -> FlowPersistence:
    """crewai's persistence factory while pytest-flows is loaded (see module doc)."""
    return _ROUTER


# -- which store the router uses --------------------------------------------------------
_lock = threading.Lock()
_installed: list[CrewAIStoreBackend] = []  # flow_store fixtures, innermost last
_implicit: tuple[Scheduler, CrewAIStoreBackend] | None = None
_process_default: CrewAIStoreBackend | None = None
#: The flows test running now: a test that persists without requesting flow_store
#: still gets its store events (``state saved``, ``state not_found``) in its trace.
_implicit_session: FlowsSession | None = None


@contextlib.contextmanager
def implicit_store_for(session: FlowsSession) -> Iterator[None]:
    """While ``session`` runs, the store a test without ``flow_store`` writes to traces
    into it (called by the adapter's ``activate``)."""
    global _implicit_session, _implicit
    with _lock:
        previous, _implicit_session = _implicit_session, session
    try:
        yield
    finally:
        with _lock:
            _implicit_session = previous
            if _implicit is not None and _implicit[1].session is session:
                _implicit = None


def current_backend() -> CrewAIStoreBackend:
    """The backend the router writes to right now (see module doc)."""
    global _implicit, _process_default
    with _lock:
        if _installed:
            return _installed[-1]
        scheduler = active_scheduler()
        if scheduler is not None:
            if _implicit is None or _implicit[0] is not scheduler:
                session = _implicit_session
                if session is not None and session.scheduler is not scheduler:
                    session = None
                _implicit = (scheduler, CrewAIStoreBackend(FlowStore(session), session))
            return _implicit[1]
        if _process_default is None:
            _process_default = CrewAIStoreBackend(FlowStore())
        return _process_default


# -- the codec -----------------------------------------------------------------------
def _encode(value: Any, *, what: str) -> str:
    """``json.dumps`` as ``SQLiteFlowPersistence`` does it, failing with the field named."""
    _, json_default = patches.sqlite_codec()
    try:
        return json.dumps(value, default=json_default)
    except (TypeError, ValueError, RecursionError) as exc:
        where = find_unserializable(
            value, lambda v: json.dumps(v, default=json_default), root="state"
        )
        detail = where.describe() if where is not None else f"{type(exc).__name__}: {exc}"
        raise StateCodecError(
            f"flow_store: {what} cannot be saved: {detail}. The production backend "
            f"(SQLiteFlowPersistence: {SQLITE_ENCODE_CALL}) fails the same "
            f"way ({type(exc).__name__}: {exc}). Use JSON-compatible values (str keys, no "
            "reference cycles), or a pydantic state model with serializable field types.",
            field=where.path if where is not None else "",
            type_name=type(where.value).__qualname__ if where is not None else "",
        ) from exc


def encode_state(state_data: Any, *, what: str = "the state") -> str:
    """A state (pydantic model or dict) encoded as SQLite persistence stores it."""
    to_state_dict, _ = patches.sqlite_codec()
    try:
        state_dict = to_state_dict(state_data)
    except ValueError as exc:
        raise StateCodecError(
            f"flow_store: {what} cannot be saved: {exc}. crewai persists pydantic models "
            "and dicts only."
        ) from exc
    return _encode(state_dict, what=what)


def round_trip_changes(state_data: Any, raw: str) -> list[FieldChange]:
    """What a resume would get back differently from ``state_data`` after this save."""
    decoded = json.loads(raw)
    if isinstance(state_data, BaseModel):
        try:
            restored = type(state_data).model_validate(decoded)
        except ValidationError as exc:
            return [
                FieldChange(
                    path=".".join(str(part) for part in error["loc"]) or "<root>",
                    before=_dig(state_data, error["loc"]),
                    after=error.get("input"),
                )
                for error in exc.errors()
            ]
        return differences(state_data, restored)
    return differences(state_data, decoded)


def _dig(value: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        try:
            value = value[part] if isinstance(value, dict | list) else getattr(value, str(part))
        except (KeyError, IndexError, AttributeError, TypeError):
            return None
    return value


def _copy(state_data: Any) -> Any:
    try:
        if isinstance(state_data, BaseModel):
            return state_data.model_copy(deep=True)
        return copy.deepcopy(state_data)
    except Exception:
        return None


_KICKOFF = Flow.kickoff_async.__code__


def _loading_flow() -> Any:
    """The flow whose kickoff is loading a state right now (crewai does not pass it)."""
    frame = sys._getframe(1)
    for _ in range(10):
        if frame is None:
            return None
        if frame.f_code is _KICKOFF:
            return frame.f_locals.get("self")
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _check_fits_state(snapshot: dict[str, Any], save: StateSave) -> None:
    """A load that crewai's ``_restore_state`` would fail with a bare ValidationError."""
    flow = _loading_flow()
    state = getattr(flow, "_state", None)
    unwrap = getattr(state, "_unwrap", None)
    if callable(unwrap):
        state = unwrap()
    if not isinstance(state, BaseModel):
        return
    try:
        type(state).model_validate(snapshot)
    except ValidationError as exc:
        from pytest_flows.crewai._kickoff_args import declared_model

        # loc and type only: pydantic's message would quote the stored values
        fields = ", ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '<root>'} ({error['type']})"
            for error in exc.errors()[:5]
        )
        model = declared_model(type(state)).__name__
        what = f"the save {save.index} of state id {save.state_id!r} (after {save.method!r})"
        if save.lossy:
            cause = (
                "The save itself was lossy ("
                + "; ".join(change.path for change in save.lossy)
                + " did not survive the codec): use JSON-native or pydantic-validated "
                "field types, or turn on flow_store.strict to fail at the save."
            )
        else:
            cause = (
                "It was changed after it was written (flow_store.tamper?). Nothing else in "
                "the store is affected: discard it with flow_store.discard(...)."
            )
        raise StoreCorruptedError(
            f"flow_store: {what} does not fit the state model {model}: {fields}. {cause}"
        ) from None


def state_id_of(state: Any) -> str | None:
    if state is None:
        return None
    unwrap = getattr(state, "_unwrap", None)
    if callable(unwrap):
        state = unwrap()
    value = state.get("id") if isinstance(state, dict) else getattr(state, "id", None)
    return None if value is None else str(value)


# -- the backend -----------------------------------------------------------------------
class CrewAIStoreBackend:
    """Routes crewai persistence and checkpoints into one :class:`FlowStore`."""

    framework = FRAMEWORK

    def __init__(self, store: FlowStore, session: FlowsSession | None = None) -> None:
        self.store = store
        self.session = session
        from pytest_flows.crewai._checkpoints import CheckpointRouter

        self.checkpoints = CheckpointRouter(store)

    @property
    def persistence(self) -> FlowStorePersistence:
        """A ``FlowPersistence`` for ``Flow(persistence=...)`` (routes to this test's store)."""
        return _ROUTER

    # -- FlowPersistence, through the production codec ------------------------------
    def save_state(self, flow_uuid: Any, method_name: str, state_data: Any) -> None:
        key = self.store.check_id(flow_uuid)
        what = f"the state of id {key!r} after {method_name!r}"
        raw = encode_state(state_data, what=what)
        lossy = round_trip_changes(state_data, raw)
        if lossy and self.store.strict:
            raise StateCodecError(
                f"flow_store (strict): {what} does not survive save -> load: "
                + "; ".join(change.describe() for change in lossy)
                + ". SQLite persistence would store it silently and a resume would get the "
                "changed values. Use JSON-native or pydantic-validated field types.",
                field=lossy[0].path,
                type_name=type(lossy[0].before).__qualname__,
            )
        self.store.append_save(
            key, method_name, raw, framework=FRAMEWORK, lossy=lossy, value=_copy(state_data)
        )

    def load_state(self, flow_uuid: Any, *, intent: str = "load") -> dict[str, Any] | None:
        key = self.store.check_id(flow_uuid)
        save = self.store.latest(key)
        if save is None:
            self.store.record(
                "state.not_found", "", mode=intent, id=key, fallback=_FALLBACK[intent]
            )
            return None
        snapshot = save.snapshot  # a corrupted record raises StoreCorruptedError here
        _check_fits_state(snapshot, save)
        self.store.record("state.restored", save.method, mode=intent, id=key, n=str(save.index))
        return snapshot

    def save_pending_feedback(self, flow_uuid: Any, context: Any, state_data: Any) -> None:
        key = self.store.check_id(flow_uuid)
        method = str(getattr(context, "method_name", ""))
        what = f"the state of id {key!r} paused at {method!r}"
        raw_state = encode_state(state_data, what=what)
        raw_context = _encode(context.to_dict(), what=f"the feedback context of id {key!r}")
        self.store.append_save(
            key,
            method,
            raw_state,
            framework=FRAMEWORK,
            lossy=round_trip_changes(state_data, raw_state),
            value=_copy(state_data),
        )
        self.store.put_pending(PendingFeedback(key, method, raw_context, raw_state, FRAMEWORK))

    def load_pending_feedback(self, flow_uuid: Any) -> tuple[dict[str, Any], Any] | None:
        from crewai.flow.async_feedback.types import PendingFeedbackContext

        key = self.store.check_id(flow_uuid)
        pending = self.store.pending(key)
        if pending is None:
            self.store.record("feedback.not_found", "", id=key)
            return None
        result = (pending.snapshot, PendingFeedbackContext.from_dict(pending.context))
        self.store.record("feedback.loaded", pending.method, id=key)
        return result

    def clear_pending_feedback(self, flow_uuid: Any) -> None:
        self.store.clear_pending(flow_uuid)

    # -- StoreBackend -------------------------------------------------------------------
    def accepts(self, target: object) -> bool:
        from crewai.flow.flow import Flow

        from pytest_flows.adapters import FlowRun

        if isinstance(target, FlowRun):
            return isinstance(target.flow, Flow)
        if isinstance(target, Flow) or (isinstance(target, type) and issubclass(target, Flow)):
            return True
        return isinstance(target, BaseModel | dict)

    def round_trip(self, state: Any) -> list[FieldChange]:
        unwrap = getattr(state, "_unwrap", None)
        if callable(unwrap):
            state = unwrap()
        return round_trip_changes(state, encode_state(state))

    def state_id(self, state: Any) -> str | None:
        return state_id_of(state)

    def operations(self, flows: FlowsSession) -> Any:
        """What the property helpers (pytest_flows._internal.state.strategies) run a crewai flow
        with."""
        from pytest_flows.crewai._properties import CrewAIOperations

        return CrewAIOperations(flows, self.store)


_FALLBACK = {
    "resume": "runs fresh under this id",
    "fork": "runs fresh with a new id",
    "load": "none",
}


@contextlib.contextmanager
def install(session: FlowsSession, store: FlowStore) -> Iterator[None]:
    """The ``"store"`` binder: route crewai persistence and checkpoints into ``store``."""
    from crewai.events.base_events import reset_emission_counter
    from crewai.events.event_bus import crewai_event_bus
    from crewai.events.event_context import (
        reset_last_event_id,
        restore_event_scope,
        set_triggering_event_id,
    )

    from pytest_flows.crewai._checkpoints import CheckpointTracer

    backend = CrewAIStoreBackend(store, session)
    store.register_backend(backend)
    # crewai keeps one RuntimeState per context, and every flow built or run in
    # it joins (checkpoints hold them all, lineage runs on across them). One
    # left in the test thread's context by an earlier test (a flow built in the
    # test body, Flow.from_checkpoint()/fork() called there) must not leak in.
    crewai_event_bus.reset_runtime_state()
    # A flow built in the test body emits in this thread: the sequence numbers and
    # event ids a checkpoint's event record chains from must not be an earlier test's.
    reset_emission_counter()
    reset_last_event_id()
    set_triggering_event_id(None)
    restore_event_scope(())  # a flow started in the test body and never finished
    with _lock:
        _installed.append(backend)
    try:
        with (
            patches.routed_checkpoints(backend.checkpoints),
            patches.routed_sqlite_persistence(_ROUTER),
        ):
            token = add_stream_sink(CheckpointTracer(store))
            try:
                yield
            finally:
                reset_stream_sinks(token)
    finally:
        with _lock:
            _installed.remove(backend)
        # ...nor leak out to the next test.
        crewai_event_bus.reset_runtime_state()
