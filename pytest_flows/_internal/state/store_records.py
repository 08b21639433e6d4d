"""The records ``flow_store`` keeps (saves, pending feedback, checkpoints), its errors,
crash points, and the :class:`StoreBackend` contract a framework adapter plugs in.

Framework-neutral, and free of the store itself, so the state properties
(:mod:`pytest_flows._internal.state.state_properties`) use them without importing the store.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_flows._internal.errors import FlowsError, FlowsUsageError
from pytest_flows._internal.state.codec import FieldChange

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.state.property_runs import Operations

__all__ = [
    "CheckpointNotFoundError",
    "CheckpointRecord",
    "CrashPoint",
    "InvalidStateIdError",
    "NotACheckpointError",
    "PendingFeedback",
    "SimulatedCrash",
    "StateCodecError",
    "StateSave",
    "StoreBackend",
    "StoreCorruptedError",
    "StoreError",
    "decode_stored",
]


# -- errors ------------------------------------------------------------------------
class StoreError(FlowsError):
    """Base class of the errors ``flow_store`` raises."""


class StoreCorruptedError(StoreError, ValueError):
    """A stored state or checkpoint no longer decodes (tampered, truncated, foreign)."""


class NotACheckpointError(StoreCorruptedError):
    """A restore location whose document crewai cannot read as a checkpoint."""


class InvalidStateIdError(StoreError, ValueError):
    """A state id that would be unsafe as a storage key (path characters)."""


class StateCodecError(StoreError, TypeError):
    """The production codec cannot encode a state (or, in strict mode, loses part of it)."""

    def __init__(self, message: str, *, field: str = "", type_name: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.type_name = type_name


class CheckpointNotFoundError(StoreError, FileNotFoundError):
    """A checkpoint location the store never wrote (and that is not a file either)."""


class SimulatedCrash(BaseException):
    """Raised by the store to stop a run as a crash would (after or before a save).

    A ``BaseException`` on purpose: the runtime's ``except Exception`` handlers
    (failure events, error wrapping) do not run, as they would not in a
    process that died.
    """

    def __init__(self, point: CrashPoint, state_id: str = "") -> None:
        super().__init__(f"simulated crash {point} (state id {state_id!r})")
        self.point = point
        self.state_id = state_id


# -- records -----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class CrashPoint:
    """Where to stop a run: right ``after`` (or just ``before``) its ``save``-th save."""

    save: int
    when: Literal["after", "before"] = "after"

    def __post_init__(self) -> None:
        if not isinstance(self.save, int) or isinstance(self.save, bool) or self.save < 1:
            raise FlowsUsageError(
                f"CrashPoint(save={self.save!r}): save counts the run's persisted saves from 1; "
                "pass a whole number >= 1, e.g. CrashPoint(save=2)."
            )
        if self.when not in ("after", "before"):
            raise FlowsUsageError(
                f"CrashPoint(when={self.when!r}): use 'after' (the save landed) or 'before' "
                "(the method ran but its state was never saved)."
            )

    def __str__(self) -> str:
        return f"{self.when} save {self.save}"


def decode_stored(raw: str, what: str, *, need: Callable[[Any], str | None] | None = None) -> Any:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise StoreCorruptedError(
            f"flow_store: {what} is not valid JSON ({exc}); it was changed after it was "
            f"written (flow_store.tamper?) or truncated. Nothing else in the store is affected: "
            f"discard this record with flow_store.discard(...) or write a new one."
        ) from None
    problem = need(value) if need is not None else None
    if problem:
        raise StoreCorruptedError(
            f"flow_store: {what} decodes, but {problem}; it was changed after it was written "
            "(flow_store.tamper?). Nothing else in the store is affected: discard this record "
            "with flow_store.discard(...) or write a new one."
        )
    return value


def _json_object(raw: str, what: str) -> dict[str, Any]:
    result: dict[str, Any] = decode_stored(
        raw, what, need=lambda v: None if isinstance(v, dict) else "it is not a JSON object"
    )
    return result


def _stored_state(raw: str, what: str, state_id: str) -> dict[str, Any]:
    result: dict[str, Any] = decode_stored(
        raw, what, need=lambda value: _state_shape(value, state_id)
    )
    return result


def _state_shape(value: Any, state_id: str | None = None) -> str | None:
    if not isinstance(value, dict):
        return f"it is a JSON {type(value).__name__}, not an object of state fields"
    if not value.get("id"):
        return "it has no 'id' field (every stored flow state has one)"
    if state_id is not None and str(value["id"]) != state_id:
        # A load would resume under the other id (the stored value is not shown)
        return f"its 'id' field is not {state_id!r}, the id it is stored under"
    return None


@dataclasses.dataclass(frozen=True)
class StateSave:
    """One save of a flow state: what the backend stored, in its encoded form."""

    state_id: str
    index: int  # 1-based position in this id's history
    method: str  # the method whose completion was persisted
    raw: str  # the encoded text, as a production backend would have stored it
    framework: str = ""
    lossy: tuple[FieldChange, ...] = ()  # fields the round trip does not give back
    value: Any = dataclasses.field(default=None, compare=False, repr=False)  # state as saved

    @property
    def snapshot(self) -> dict[str, Any]:
        """The stored state, decoded (what a load returns)."""
        what = f"the save {self.index} of state id {self.state_id!r} (after {self.method!r})"
        return _stored_state(self.raw, what, self.state_id)

    def __repr__(self) -> str:
        return f"<StateSave {self.state_id!r} #{self.index} after {self.method!r}>"


@dataclasses.dataclass(frozen=True)
class PendingFeedback:
    """A flow paused for human feedback: the context and the state it paused in."""

    state_id: str
    method: str
    raw_context: str
    raw_state: str
    framework: str = ""

    @property
    def context(self) -> dict[str, Any]:
        return _json_object(
            self.raw_context, f"the pending-feedback context of state id {self.state_id!r}"
        )

    @property
    def snapshot(self) -> dict[str, Any]:
        what = f"the pending-feedback state of state id {self.state_id!r}"
        return _stored_state(self.raw_state, what, self.state_id)


@dataclasses.dataclass(frozen=True)
class CheckpointRecord:
    """One checkpoint: where it lives, its lineage and the encoded runtime state."""

    n: int  # 1-based write order in this store
    id: str
    location: str
    parent_id: str | None
    branch: str
    trigger: str | None
    raw: str
    framework: str = ""
    kind: str = "json"  # which provider format the location follows
    base: str = ""  # the location the provider was given (directory, db path)
    state: dict[str, Any] | None = dataclasses.field(default=None, compare=False)
    completed: tuple[str, ...] = ()  # methods completed when it was written

    @property
    def payload(self) -> dict[str, Any]:
        """The decoded checkpoint document."""
        return _json_object(self.raw, f"checkpoint {self.n} ({self.id}, at {self.location})")

    def __repr__(self) -> str:
        parent = self.parent_id or "none"
        return f"<Checkpoint {self.n} {self.id} branch={self.branch} parent={parent}>"


class StoreBackend(Protocol):
    """What a framework adapter plugs into a :class:`FlowStore` (from its ``bind_store``,
    with :meth:`FlowStore.register_backend`)."""

    framework: str

    def operations(self, flows: FlowsSession) -> Operations:
        """The framework work the state properties run (see ``strategies.Operations``)."""

    def accepts(self, target: object) -> bool:
        """Whether ``target`` (a flow class/instance, a state, a run) is this framework's."""

    def round_trip(self, state: Any) -> list[FieldChange]:
        """Encode and decode ``state`` with the production codec; what changed."""

    def state_id(self, state: Any) -> str | None:
        """The persistence key of a flow state."""
