"""Snapshot assertions for flows: ``assert run.trace == snapshot``.

A syrupy extension (:class:`FlowsSnapshotExtension`) writes pytest-flows values
into ordinary amber (``.ambr``) files as readable text: a trace is one event a
line; a run, a state history, a checkpoint round trip and race outcomes are a
header line with their fields below it, sorted by key, one field a line. Ids
(UUIDs) become ``<uuid:N>`` in first-seen order and ISO timestamps ``<ts>``, so
the text is the same on every machine, under any ``PYTHONHASHSEED`` and on any
pytest-xdist worker.

The plugin makes it syrupy's default extension unless the project chose
another one (``--snapshot-default-extension``) or sets the ini option
``flows_snapshots = false``. Every other value is serialized exactly as amber
serializes it, so existing snapshots keep matching. With another default
extension, opt in per assertion: ``snapshot.use_extension(FlowsSnapshotExtension)``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.identity import Normalizer
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.state.store import FlowStore
from pytest_flows._internal.state.store_records import CheckpointRecord, PendingFeedback, StateSave
from pytest_flows._internal.trace import (
    Trace,
    TraceEvent,
    cycle_mark,
    model_values,
    stable_repr,
    without_addresses,
)

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.syrupy_extension import FlowsAmberSerializer, FlowsSnapshotExtension

__all__ = [
    "CheckpointRoundTrip",
    "FlowsAmberSerializer",
    "FlowsSnapshotExtension",
    "checkpoint_round_trip",
    "normalized",
    "snapshot_text",
]

_INDENT = "  "


def __getattr__(name: str) -> Any:
    # The extension's home is syrupy_extension, which renders through this module:
    # an alias resolved on use, like pytest_flows' own exports, not an import edge.
    if name in ("FlowsAmberSerializer", "FlowsSnapshotExtension"):
        return getattr(importlib.import_module("pytest_flows._internal.syrupy_extension"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- normalizing values ----------------------------------------------------------------
def normalized(value: Any, normalizer: Normalizer | None = None) -> Any:
    """``value`` as plain JSON data with ids and times replaced by placeholders.

    Pydantic models become their JSON dump, mappings get string keys (sorted
    when rendered), sets become sorted lists, and every string goes through
    the :class:`~pytest_flows._internal.identity.Normalizer` (UUIDs -> ``<uuid:N>``, ISO
    timestamps -> ``<ts>``). Bytes become their repr (``"b'\\xff'"``), plain
    objects ``"Thing(field=...)"`` (never a memory address), and a value that
    contains itself shows ``"[...]"`` / ``"{...}"`` where it recurs, as in a
    trace. Pass one ``normalizer`` to number the ids of
    several values consistently. Use it to snapshot any other data:
    ``assert normalized(record.payload) == snapshot``.
    """
    return _as_data(value, normalizer or Normalizer())


def _as_data(value: Any, normalizer: Normalizer, seen: frozenset[int] = frozenset()) -> Any:
    unwrap = getattr(value, "_unwrap", None)  # crewai's state proxy
    if callable(unwrap) and not isinstance(value, type):
        value = unwrap()
    if isinstance(value, BaseModel | Mapping | list | tuple | set | frozenset) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        if id(value) in seen:
            return cycle_mark(value)  # it contains itself: show where, as a trace does
        seen = seen | {id(value)}
    if isinstance(value, BaseModel):
        # Python mode keeps sets as sets (JSON mode lists them in hash order).
        value = model_values(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return normalizer.text(value)
    if isinstance(value, bytes | bytearray):
        return normalizer.text(repr(value))  # lossless: b'\xff' and b'\xfe' differ
    if isinstance(value, Mapping):
        # Keys in their natural order first: first-seen id numbering must not
        # depend on insertion order either.
        items = sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0])
        return {normalizer.text(k): _as_data(v, normalizer, seen) for k, v in items}
    if isinstance(value, set | frozenset):
        plain = [_as_data(v, Normalizer(), seen) for v in value]
        order = sorted(range(len(plain)), key=lambda i: _json(plain[i]))
        items = list(value)
        return [_as_data(items[i], normalizer, seen) for i in order]
    if isinstance(value, list | tuple):
        return [_as_data(v, normalizer, seen) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _as_data(
            {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, normalizer, seen
        )
    try:
        jsonable = to_jsonable_python(value)  # datetimes, enums, UUIDs, paths, decimals...
    except Exception:
        jsonable = None
    if isinstance(jsonable, str | int | float | bool):
        return _as_data(jsonable, normalizer, seen)
    # Plain objects as Type(field=...), never with their memory address.
    return normalizer.text(stable_repr(value, seen))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def _field_lines(value: Any, normalizer: Normalizer) -> list[str]:
    """One ``key: <json>`` line per top-level field (sorted), or the JSON of a non-mapping."""
    plain = _as_data(value, normalizer)
    if isinstance(plain, dict):
        if not plain:
            return ["(empty)"]
        return [f"{key}: {_json(plain[key])}" for key in sorted(plain)]
    return [_json(plain)]


# -- what each pytest-flows value looks like in a snapshot ----------------------------------
@dataclasses.dataclass
class _Block:
    """A header line and the lines below it (nested blocks are indented)."""

    header: str
    body: list[str | _Block] = dataclasses.field(default_factory=list)

    def lines(self, depth: int = 0) -> list[str]:
        out = [_INDENT * depth + self.header]
        for item in self.body:
            if isinstance(item, _Block):
                out.extend(item.lines(depth + 1))
            else:
                out.append(_INDENT * (depth + 1) + item)
        return out


def _trace_block(trace: Trace, header: str = "Trace") -> _Block:
    lines: list[str | _Block] = list(trace.lines())
    return _Block(header, lines or ["(no events)"])


def _fields_block(header: str, value: Any, normalizer: Normalizer) -> _Block:
    return _Block(header, list(_field_lines(value, normalizer)))


def _set_fields(state: Any) -> frozenset[str]:
    """The top-level fields of ``state`` (a model or dict, as a flow holds it) that are sets."""
    unwrap = getattr(state, "_unwrap", None)
    if callable(unwrap):
        state = unwrap()
    fields = state.model_dump() if isinstance(state, BaseModel) else state
    if not isinstance(fields, Mapping):
        return frozenset()
    return frozenset(str(k) for k, v in fields.items() if isinstance(v, set | frozenset))


def _sorted_sets(stored: Any, set_fields: frozenset[str]) -> Any:
    """``stored`` (decoded JSON) with the lists that were ``set`` fields sorted.

    A codec stores a ``set`` as a list in iteration order, which for strings
    changes with ``PYTHONHASHSEED``.
    """
    if not set_fields or not isinstance(stored, dict):
        return stored
    return {
        key: sorted(value, key=_json) if key in set_fields and isinstance(value, list) else value
        for key, value in stored.items()
    }


def _save_block(save: StateSave, normalizer: Normalizer) -> _Block:
    header = f"save {save.index} after {save.method}"
    block = _fields_block(header, _sorted_sets(save.snapshot, _set_fields(save.value)), normalizer)
    for change in save.lossy:
        block.body.append(f"lossy {normalizer.text(change.describe())}")
    return block


def _history_block(saves: Sequence[StateSave], normalizer: Normalizer) -> _Block:
    ids = sorted({save.state_id for save in saves})
    header = "StateHistory " + ", ".join(normalizer.text(i) for i in ids)
    return _Block(header, [_save_block(save, normalizer) for save in saves])


def _checkpoint_header(record: CheckpointRecord, number: Callable[[str | None], str]) -> str:
    completed = ", ".join(record.completed)
    return (
        f"checkpoint {record.n} trigger={record.trigger or 'none'} branch={record.branch} "
        f"parent={number(record.parent_id)} completed=[{completed}]"
    )


def _checkpoint_block(
    record: CheckpointRecord,
    normalizer: Normalizer,
    number: Callable[[str | None], str] | None = None,
    set_fields: frozenset[str] = frozenset(),
) -> _Block:
    def own(parent: str | None) -> str:
        return "none" if parent is None else normalizer.text(parent)

    state = _sorted_sets(record.state if record.state is not None else {}, set_fields)
    return _fields_block(_checkpoint_header(record, number or own), state, normalizer)


def _checkpoints_block(records: Sequence[CheckpointRecord], normalizer: Normalizer) -> _Block:
    numbers = {record.id: str(record.n) for record in records}

    def number(parent: str | None) -> str:
        if parent is None:
            return "none"
        return numbers.get(parent) or normalizer.text(parent)

    return _Block(
        "Checkpoints", [_checkpoint_block(record, normalizer, number) for record in records]
    )


def _pending_block(pending: PendingFeedback, normalizer: Normalizer) -> _Block:
    return _Block(
        f"PendingFeedback {normalizer.text(pending.state_id)} at {pending.method}",
        [
            _fields_block("context", pending.context, normalizer),
            _fields_block("state", pending.snapshot, normalizer),
        ],
    )


def _error_text(error: BaseException, normalizer: Normalizer) -> str:
    text = without_addresses(f"{type(error).__name__}: {error}")
    return normalizer.text(text).replace("\n", "\\n")


def _run_block(run: FlowRun, normalizer: Normalizer) -> _Block:
    flow = run.flow
    name = getattr(flow, "name", None) or type(flow).__name__
    block = _Block(f"FlowRun {name}")
    if run.error is not None:
        block.body.append(f"error: {_error_text(run.error, normalizer)}")
    else:
        block.body.append(f"output: {_json(_as_data(run.output, normalizer))}")
    block.body.append(_fields_block("state:", run.state, normalizer))
    block.body.append(_trace_block(run.trace, "trace:"))
    return block


def _block_of(data: Any) -> _Block | None:
    """The snapshot block of a pytest-flows value, or None for anything else."""
    from pytest_flows._internal.exploration.races import RaceOutcomes, RaceResult

    normalizer = Normalizer()
    if isinstance(data, Trace):
        return _trace_block(data)
    if isinstance(data, TraceEvent):
        return _Block("TraceEvent", [data.render()])
    if isinstance(data, FlowRun):
        return _run_block(data, normalizer)
    if isinstance(data, CheckpointRoundTrip):
        return data._block()
    if isinstance(data, RaceOutcomes):
        return _Block(data.header(), list[str | _Block](sorted(data.outcomes)))
    if isinstance(data, RaceResult):
        return _Block("Race", [data.render()])
    snapshot_lines = getattr(data, "snapshot_lines", None)
    if callable(snapshot_lines):  # an Exploration (which needs nothing of this module)
        header, body = snapshot_lines()
        return _Block(header, list[str | _Block](body))
    if isinstance(data, StateSave):
        return _save_block(data, normalizer)
    if isinstance(data, PendingFeedback):
        return _pending_block(data, normalizer)
    if isinstance(data, CheckpointRecord):
        return _checkpoint_block(data, normalizer)
    if isinstance(data, list) and data:
        if all(isinstance(item, StateSave) for item in data):
            return _history_block(data, normalizer)
        if all(isinstance(item, CheckpointRecord) for item in data):
            return _checkpoints_block(data, normalizer)
        if all(isinstance(item, RaceResult) for item in data):
            return _Block("Races", [item.render() for item in data])
    return None


def snapshot_text(data: Any) -> str:
    """The text a pytest-flows value is stored as in a snapshot (without amber's indent).

    Raises :class:`~pytest_flows._internal.errors.FlowsUsageError` for values the
    extension does not handle itself (those are serialized by plain amber).
    """
    block = _block_of(data)
    if block is None:
        raise FlowsUsageError(
            f"snapshot_text() renders pytest-flows values (Trace, FlowRun, state saves, "
            f"checkpoints, race outcomes), got {type(data).__qualname__}; wrap other data "
            "in normalized(...) and compare it with the snapshot directly."
        )
    return "\n".join(block.lines())


# -- checkpoint round trips --------------------------------------------------------------------
@dataclasses.dataclass
class CheckpointRoundTrip:
    """A checkpoint of an uninterrupted run, and what restoring it and running on did.

    ``assert checkpoint_round_trip(...) == snapshot`` stores the checkpoint
    (trigger, lineage, completed methods, the flow state it holds), the trace
    of the restored run, its final state and output, and whether those match
    the uninterrupted run's.
    """

    flow: str
    index: int
    checkpoints: list[CheckpointRecord]
    restored_trace: Trace
    restored_state: Any
    restored_output: Any
    restored_error: BaseException | None
    same_state: bool
    same_output: bool
    set_fields: frozenset[str] = frozenset()

    @property
    def checkpoint(self) -> CheckpointRecord:
        return self.checkpoints[self.index]

    def _block(self) -> _Block:
        normalizer = Normalizer()
        numbers = {record.id: str(record.n) for record in self.checkpoints}

        def number(parent: str | None) -> str:
            if parent is None:
                return "none"
            return numbers.get(parent) or normalizer.text(parent)

        block = _Block(
            f"CheckpointRoundTrip {self.flow} checkpoint {self.index + 1} of "
            f"{len(self.checkpoints)}"
        )
        block.body.append(_checkpoint_block(self.checkpoint, normalizer, number, self.set_fields))
        block.body.append(_trace_block(self.restored_trace, "restored run:"))
        if self.restored_error is not None:
            block.body.append(f"error: {_error_text(self.restored_error, normalizer)}")
        else:
            block.body.append(f"output: {_json(_as_data(self.restored_output, normalizer))}")
        final = _sorted_sets(self.restored_state, self.set_fields)
        block.body.append(_fields_block("final state:", final, normalizer))
        same = [
            f"state {'same' if self.same_state else 'DIFFERENT'}",
            f"output {'same' if self.same_output else 'DIFFERENT'}",
        ]
        block.body.append("vs uninterrupted run: " + ", ".join(same))
        return block

    def render(self) -> str:
        return "\n".join(self._block().lines())


def checkpoint_round_trip(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    checkpoint: int,
    *,
    inputs: dict[str, Any] | None = None,
) -> CheckpointRoundTrip:
    """Run ``flow`` with checkpoints, restore its ``checkpoint``-th (0-based), run on.

    ``flow`` is a flow class or a zero-argument factory (each run needs a fresh
    instance); without a checkpoint config of its own, a crewai flow
    checkpoints after every method. Returns a :class:`CheckpointRoundTrip`
    to compare with ``snapshot``.
    """
    from pytest_flows._internal.state.property_runs import operations_for

    if not isinstance(checkpoint, int) or isinstance(checkpoint, bool):
        raise FlowsUsageError(
            f"checkpoint_round_trip(..., checkpoint={checkpoint!r}): pass the 0-based "
            "index of the checkpoint to restore, e.g. checkpoint=1."
        )
    ops = operations_for(flows, flow_store, flow)
    baseline = ops.run_with_checkpoints(flow, inputs)
    if baseline.error is not None:
        raise FlowsUsageError(
            f"checkpoint_round_trip: the uninterrupted run of {ops.describe(flow)} failed "
            f"({type(baseline.error).__name__}: {baseline.error}); fix the flow or its fakes "
            "first."
        ) from baseline.error
    written = list(baseline.checkpoints)
    if not written:
        raise FlowsUsageError(
            f"{ops.describe(flow)} wrote no checkpoint: give it checkpoint=CheckpointConfig("
            "on_events=['method_execution_finished']) (or pass a factory that does)."
        )
    if not 0 <= checkpoint < len(written):
        raise FlowsUsageError(
            f"checkpoint_round_trip(checkpoint={checkpoint}): the run wrote {len(written)} "
            f"checkpoint(s); pass 0..{len(written) - 1}."
        )
    restored = ops.restore(flow, written[checkpoint])
    set_fields = _flow_set_fields(ops, flow)
    return CheckpointRoundTrip(
        flow=ops.describe(flow),
        index=checkpoint,
        checkpoints=written,
        restored_trace=restored.trace,
        restored_state=restored.state,
        restored_output=restored.output,
        restored_error=restored.error,
        same_state=normalized(_sorted_sets(restored.state, set_fields))
        == normalized(_sorted_sets(baseline.state, set_fields)),
        same_output=normalized(restored.output) == normalized(baseline.output),
        set_fields=set_fields,
    )


def _flow_set_fields(ops: Any, flow: Any) -> frozenset[str]:
    """The set fields of a fresh instance's state (runs outlive the sets they stored as lists)."""
    instance = getattr(ops, "instance", None)
    if not callable(instance):
        return frozenset()
    try:
        sample = contextvars.copy_context().run(instance, flow)
        return _set_fields(getattr(sample, "state", None))
    except Exception:
        return frozenset()
