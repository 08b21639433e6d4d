"""Translate crewai's emitted events into the framework-neutral trace.

The recorder is a crewai *stream sink*: it runs synchronously inside
``emit()``, in true emission order, scoped to a ContextVar (so to one test).
It records through ``session.record``, which files each event under the run
whose context emitted it.
"""

from __future__ import annotations

from typing import Any

from crewai.events.types.flow_events import (
    FlowFinishedEvent,
    FlowPausedEvent,
    FlowStartedEvent,
    MethodExecutionFailedEvent,
    MethodExecutionFinishedEvent,
    MethodExecutionPausedEvent,
    MethodExecutionStartedEvent,
)

from pytest_flows.adapters import TraceEvent, internal_lock, record_access, render_value
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai import _graph as graph
from pytest_flows.crewai import _patches as patches
from pytest_flows.crewai._compat import FlowFailedEvent

__all__ = ["CrewAITraceRecorder"]

#: What the lines an ``or_`` race's result is read from touch, for exploration: the
#: order of its listeners' ``via`` lines, and whether one came before the race's last
#: ending, are part of an outcome (``races(run)``), so two such lines (or a line and an
#: ending) in the other order are another outcome, and their appends race.
RACE_LINES = "trace:or-race"


def flow_failed(flow_name: str, error: Any) -> TraceEvent:
    """The ``flow failed`` line, as a FlowFailedEvent is traced."""
    return TraceEvent(kind="flow.failed", name=flow_name, fields=(("error", _error(error)),))


def _error(error: Any) -> str:
    if isinstance(error, BaseException):
        return render_value(f"{type(error).__name__}: {error}")
    return render_value(str(error))


class _Race(patches.RaceRecorder):
    def __init__(self, recorder: CrewAITraceRecorder, racers: list[str]) -> None:
        self._recorder = recorder
        self._won = False
        self._racers = racers

    def finished(self, name: str) -> None:
        record_access(RACE_LINES, write=True)
        kind = "race.lost" if self._won else "race.won"
        self._won = True
        self._recorder.emit(TraceEvent(kind=kind, name=name))

    def failed(self, name: str, error: BaseException) -> None:
        record_access(RACE_LINES, write=True)
        fields = (("error", _error(error)),)
        self._recorder.emit(TraceEvent(kind="race.failed", name=name, fields=fields))

    def cancelled(self, name: str) -> None:
        record_access(RACE_LINES, write=True)
        self._recorder.emit(TraceEvent(kind="race.cancelled", name=name))


class CrewAITraceRecorder:
    """Receives ``(source, event)`` from crewai and records trace events."""

    def __init__(self, record: Any) -> None:
        self._record = record
        self._lock = internal_lock()
        # event_id of a MethodExecutionFinishedEvent -> (method, result, is_router)
        self._finished: dict[str, tuple[str, Any, bool]] = {}
        # per flow instance: router label -> the router that chose it last
        # (conditional starts re-run by a router cycle carry no causal event id
        # of their own); per flow, so flows run side by side do not mix
        self._labels: dict[int, dict[str, str]] = {}

    def emit(self, event: TraceEvent) -> None:
        self._record(event)

    def race(self, flow: Any, racers: list[str]) -> _Race:
        self.emit(
            TraceEvent(
                kind="race.started",
                name=f"or({', '.join(racers)})",
                fields=(("racers", "[" + ", ".join(racers) + "]"),),
            )
        )
        return _Race(self, racers)

    def __call__(self, source: Any, event: Any) -> None:
        # A sink must never raise: it runs inside crewai's emit().
        try:
            self._handle(source, event)
        except Exception as exc:  # pragma: no cover - reported, never raised
            self.emit(
                TraceEvent(
                    kind="trace.error", name=type(event).__name__, fields=(("error", _error(exc)),)
                )
            )

    def _handle(self, source: Any, event: Any) -> None:
        if compat.is_crewai_internal(source):
            return
        if isinstance(event, FlowStartedEvent):
            with self._lock:
                self._labels[id(source)] = {}
            graph.note_started(source, event.flow_name)  # coverage: which class this run is
            fields = (("inputs", render_value(event.inputs)),) if event.inputs else ()
            self.emit(TraceEvent(kind="flow.started", name=event.flow_name, fields=fields))
        elif isinstance(event, FlowFinishedEvent):
            self._line("flow.finished", event.flow_name, ("output", render_value(event.result)))
        elif isinstance(event, FlowFailedEvent):
            failed: Any = event  # a stand-in class on crewai < 1.15 (see compat.py)
            self.emit(flow_failed(failed.flow_name, failed.error))
        elif isinstance(event, FlowPausedEvent):
            self._line(
                "flow.paused",
                event.flow_name,
                ("method", event.method_name),
                ("message", render_value(event.message)),
            )
        elif isinstance(event, MethodExecutionStartedEvent):
            trigger = self._trigger(source, event)
            if " via " in trigger:  # a line an or_ race's result may list (races(run))
                record_access(RACE_LINES, write=True)
            self._line("method.started", event.method_name, ("trigger", trigger))
        elif isinstance(event, MethodExecutionFinishedEvent):
            router = patches.is_router(source, event.method_name)
            with self._lock:
                self._finished[event.event_id] = (event.method_name, event.result, router)
            output = ("output", render_value(event.result))
            self._line("method.finished", event.method_name, output)
            if router and event.result is not None:
                label = getattr(event.result, "value", event.result)
                with self._lock:
                    self._labels.setdefault(id(source), {})[str(label)] = event.method_name
                self._line("router.chose", event.method_name, ("label", str(label)))
        elif isinstance(event, MethodExecutionFailedEvent):
            self._line("method.failed", event.method_name, ("error", _error(event.error)))
        elif isinstance(event, MethodExecutionPausedEvent):
            message = ("message", render_value(event.message))
            self._line("method.paused", event.method_name, message)

    def _line(self, kind: str, name: str, *fields: tuple[str, str]) -> None:
        self.emit(TraceEvent(kind=kind, name=name, fields=fields))

    def _start_trigger(self, flow: Any, method: str) -> str:
        labels = patches.condition_leaves(patches.start_condition(flow, method))
        with self._lock:
            chosen = self._labels.get(id(flow), {})
            fired = [f"{chosen[label]}:{label}" for label in labels if label in chosen]
        return fired[0] if fired else "start"

    def _trigger(self, flow: Any, event: MethodExecutionStartedEvent) -> str:
        with self._lock:
            cause = self._finished.get(event.triggered_by_event_id or "")
        condition = patches.listen_condition(flow, event.method_name)
        if cause is None and condition is not None and patches.is_resuming(flow):
            # Restored from a checkpoint or pending feedback: crewai re-triggers
            # the listeners of completed methods without a triggering event.
            return f"{patches.render_condition(condition)} (resumed)"
        if cause is None:
            return self._start_trigger(flow, event.method_name)
        method, result, router = cause
        fired = method
        if router and condition != method:
            fired = f"{method}:{getattr(result, 'value', result)}"
        if condition is None or isinstance(condition, str):
            return fired
        return f"{patches.render_condition(condition)} via {fired}"
