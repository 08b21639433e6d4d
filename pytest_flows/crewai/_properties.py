"""The crewai work behind the property helpers of :mod:`pytest_flows._internal.state.strategies`.

Every run gets a fresh flow instance (a reused crewai ``Flow`` instance keeps
its completed methods, so a second kickoff on it replays stale outputs instead
of running), and every run goes through ``flows.run`` on the deterministic loop.
"""

from __future__ import annotations

import contextvars
import copy
import uuid
from typing import Any

from crewai.events.event_bus import crewai_event_bus
from crewai.events.types.flow_events import FlowStartedEvent
from crewai.flow.flow import Flow
from pydantic import BaseModel

from pytest_flows.adapters import (
    CheckpointRecord,
    CrashPoint,
    FlowRun,
    FlowsSession,
    FlowStore,
    FlowsUsageError,
    Outcome,
    SimulatedCrash,
)
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._compat import add_stream_sink, reset_stream_sinks
from pytest_flows.crewai._persistence import state_id_of

__all__ = ["DEFAULT_CHECKPOINT_EVENTS", "CrewAIOperations"]

#: What the helpers checkpoint on when the flow has no checkpoint config.
DEFAULT_CHECKPOINT_EVENTS: tuple[Any, ...] = ("method_execution_finished",)


def _unwrapped(state: Any) -> Any:
    unwrap = getattr(state, "_unwrap", None)
    return unwrap() if callable(unwrap) else state


def _json_state(state: Any) -> dict[str, Any] | None:
    state = _unwrapped(state)
    if isinstance(state, BaseModel):
        try:
            return state.model_dump(mode="json")
        except Exception:
            return state.model_dump()
    if isinstance(state, dict):
        return dict(state)
    return None


def _copy_state(state: Any) -> Any:
    state = _unwrapped(state)
    try:
        if isinstance(state, BaseModel):
            return state.model_copy(deep=True)
        return copy.deepcopy(state)
    except Exception:
        return None


def _typed_fields(state: Any) -> dict[str, Any] | None:
    """The state's fields with their Python types (crewai builds a new state class per
    flow instance, so the models themselves never share a type)."""
    copied = _copy_state(state)
    if isinstance(copied, BaseModel):
        return {name: getattr(copied, name) for name in type(copied).model_fields}
    return dict(copied) if isinstance(copied, dict) else None


class _StartCapture:
    """A stream sink that keeps the state a flow run started with (after any restore)."""

    def __init__(self) -> None:
        self.state: Any = None
        self.state_id: str | None = None

    def __call__(self, source: Any, event: Any) -> None:
        if (
            self.state_id is None
            and isinstance(event, FlowStartedEvent)
            and isinstance(source, Flow)
            and not compat.is_crewai_internal(source)
        ):
            self.state = _copy_state(source.state)
            self.state_id = state_id_of(source.state)


class CrewAIOperations:
    """Runs, crashes, resumes, forks and restores a crewai flow for the property helpers."""

    def __init__(self, flows: FlowsSession, store: FlowStore) -> None:
        self.flows = flows
        self.store = store

    def describe(self, flow: Any) -> str:
        if isinstance(flow, type):
            return flow.__qualname__
        name = getattr(flow, "__name__", "")
        if name and name != "<lambda>":
            return str(getattr(flow, "__qualname__", name))
        try:
            made = contextvars.copy_context().run(flow)
        except Exception:
            return repr(flow)
        return f"<factory of {type(made).__qualname__}>"

    def instance(self, flow: Any) -> Any:
        if isinstance(flow, Flow):
            raise FlowsUsageError(
                f"pass the flow class {type(flow).__name__} (or a factory such as "
                f"lambda: {type(flow).__name__}(...)), not an instance: every run of a property "
                "needs a fresh instance (a reused crewai Flow skips the methods it completed)."
            )
        if isinstance(flow, type):
            if not issubclass(flow, Flow):
                raise FlowsUsageError(f"{flow.__qualname__} is not a crewai Flow class.")
            return flow()
        if callable(flow):
            made = flow()
            if not isinstance(made, Flow):
                raise FlowsUsageError(
                    f"the flow factory {self.describe(flow)} returned "
                    f"{type(made).__qualname__}, not a crewai Flow."
                )
            return made
        raise FlowsUsageError(
            f"expected a crewai Flow class or a zero-argument factory, got {flow!r}."
        )

    def _outcome(self, run: FlowRun, **extra: Any) -> Outcome:
        return Outcome(
            state=_json_state(run.state),
            typed_state=_typed_fields(run.state),
            output=run.output,
            trace=run.trace,
            state_id=state_id_of(run.state),
            error=run.error,
            **extra,
        )

    def _run(self, flow: Any, **kwargs: Any) -> FlowRun:
        """Build a fresh instance and run it, both in a context of their own.

        crewai attaches every flow it sees to one ``RuntimeState`` per context
        (checkpoints hold all of them, lineage runs on across flows); a
        property's runs must not see each other, so each gets a fresh one.
        """

        def isolated() -> FlowRun:
            crewai_event_bus.reset_runtime_state()
            return self.flows.run(self.instance(flow), raise_on_error=False, **kwargs)

        return contextvars.copy_context().run(isolated)

    def run(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome:
        return self._outcome(self._run(flow, inputs=_copy_inputs(inputs)))

    def crash(self, flow: Any, inputs: dict[str, Any] | None, point: CrashPoint) -> str | None:
        with self.store.crash_at(point):
            try:
                self._run(flow, inputs=_copy_inputs(inputs))
            except SimulatedCrash as crash:
                return crash.state_id
        return None

    def resume(self, flow: Any, inputs: dict[str, Any] | None, state_id: str) -> Outcome:
        resumed = {**(_copy_inputs(inputs) or {}), "id": state_id}
        return self._outcome(self._run(flow, inputs=resumed))

    def fork(
        self, flow: Any, inputs: dict[str, Any] | None, source: str, pin: str | None
    ) -> Outcome:
        fork_inputs = _copy_inputs(inputs)
        if pin is not None:
            fork_inputs = {**(fork_inputs or {}), "id": pin}
        capture = _StartCapture()
        token = add_stream_sink(capture)
        try:
            run = self._run(flow, inputs=fork_inputs, restore_from_state_id=source)
        finally:
            reset_stream_sinks(token)
        return self._outcome(run, start_state=capture.state, start_id=capture.state_id)

    def run_with_checkpoints(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome:
        mark = len(self.store.checkpoints())
        run = self._run(_checkpointed(self, flow), inputs=_copy_inputs(inputs))
        written = self.store.checkpoints()[mark:]
        return self._outcome(run, checkpoints=written)

    def restore(self, flow: Any, checkpoint: CheckpointRecord) -> Outcome:
        build = _checkpointed(self, flow)
        config = contextvars.copy_context().run(lambda: build().checkpoint)
        restore = config.model_copy(update={"restore_from": checkpoint.location})
        return self._outcome(self._run(build, from_checkpoint=restore))

    def new_id(self) -> str:
        return str(uuid.uuid4())


def _checkpointed(ops: CrewAIOperations, flow: Any) -> Any:
    """A factory of ``flow`` instances that checkpoint (after every method by default)."""
    from crewai.state.checkpoint_config import CheckpointConfig

    def build() -> Any:
        instance = ops.instance(flow)
        if not isinstance(instance.checkpoint, CheckpointConfig):
            instance.checkpoint = CheckpointConfig(on_events=list(DEFAULT_CHECKPOINT_EVENTS))
        return instance

    return build


def _copy_inputs(inputs: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if inputs is None else copy.deepcopy(inputs)
