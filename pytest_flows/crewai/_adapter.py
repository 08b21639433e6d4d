"""Runs CrewAI Flows under the harness: process-wide isolation, per-test patches."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from crewai.flow.flow import Flow

from pytest_flows.adapters import (
    AdapterBase,
    Binding,
    FlowRun,
    FlowsUsageError,
    NoMethodRanWarning,
    declared_seams,
)
from pytest_flows.crewai import _callers as callers
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai import _own_work as own_work
from pytest_flows.crewai import _patches as patches
from pytest_flows.crewai._bus_handlers import scoped_handlers
from pytest_flows.crewai._compat import add_stream_sink, reset_stream_sinks
from pytest_flows.crewai._kickoff_args import (
    check_kickoff_args,
    check_state_inputs,
    declared_model,
)
from pytest_flows.crewai._memory import memory_storage, per_test_memory
from pytest_flows.crewai._seams import SEAMS
from pytest_flows.crewai._tracing import CrewAITraceRecorder, flow_failed

if TYPE_CHECKING:
    from pytest_flows.adapters import (
        FakeCrews,
        FakeTools,
        FlowGraph,
        FlowsSession,
        FlowStore,
        GoldenAdapter,
        LLMScript,
        ScriptedHuman,
    )

__all__ = ["ADAPTER", "CrewAIAdapter"]


class CrewAIAdapter(AdapterBase):
    name = "crewai"

    def __init__(self) -> None:
        self._configured = False

    def configure(self) -> None:
        if self._configured:
            return
        self._configured = True
        from crewai.memory.storage.factory import set_memory_storage_factory

        # The default memory store imports lancedb (seconds) and writes to disk; a
        # flows test's Memory that chose no storage gets the test's in-memory store
        # (same behaviour), other tests and chosen storages crewai's own.
        set_memory_storage_factory(memory_storage)
        # Registered lazily by crewai; doing it now keeps checkpointing alive
        # whatever handler scopes a test opens.
        from crewai.state.checkpoint_listener import _ensure_handlers_registered

        _ensure_handlers_registered()
        # The bus starts a background loop on first use; starting it here,
        # outside any test, keeps that loop an ordinary one (see loop.py).
        patches.start_event_bus()
        # @persist() with no argument builds its backend when the user's flow
        # module is imported: make that the in-memory flow_store router.
        from crewai.flow.persistence.factory import set_flow_persistence_factory

        from pytest_flows.crewai._persistence import routed_persistence

        set_flow_persistence_factory(routed_persistence)

    def accepts(self, target: object) -> bool:
        return isinstance(target, Flow) or (isinstance(target, type) and issubclass(target, Flow))

    @contextlib.contextmanager
    def activate(self, session: FlowsSession) -> Iterator[None]:
        from crewai.events.event_bus import crewai_event_bus

        recorder = CrewAITraceRecorder(self.trace_sink(session))
        # crewai keeps one RuntimeState per context that every flow joins; one
        # left by an earlier test must not leak into this one, nor this one out.
        crewai_event_bus.reset_runtime_state()
        with contextlib.ExitStack() as stack:
            # First in, last out: handlers registered anywhere in the test go.
            stack.enter_context(scoped_handlers())
            stack.callback(crewai_event_bus.reset_runtime_state)
            stack.enter_context(per_test_memory())
            stack.enter_context(patches.inline_event_bus())
            stack.enter_context(patches.settled_async_handlers())
            stack.enter_context(patches.ordered_races(session.scheduler.order, recorder.race))
            stack.enter_context(patches.recorded_triggers())
            stack.enter_context(own_work.quiet_event_record())
            stack.enter_context(patches.state_switch_points())
            # Real (recorded or replayed) LLM calls count in run.usage too.
            stack.enter_context(callers.tracking())
            stack.enter_context(callers.llm_uses())
            from pytest_flows.crewai._persistence import implicit_store_for

            stack.enter_context(implicit_store_for(session))
            if not session.console:
                stack.enter_context(_quiet_console())
            token = add_stream_sink(recorder)
            stack.callback(reset_stream_sinks, token)
            yield

    # -- the fakes (each binder's module is imported on first use) -----------------
    def bind_llm(self, session: FlowsSession, fake: LLMScript) -> Binding:
        from pytest_flows.crewai._llm import install

        return install(session, fake)

    def bind_human(self, session: FlowsSession, fake: ScriptedHuman) -> Binding:
        from pytest_flows.crewai._human import install

        return install(session, fake)

    def bind_store(self, session: FlowsSession, store: FlowStore) -> Binding:
        from pytest_flows.crewai._persistence import install

        return install(session, store)

    def bind_crews(self, session: FlowsSession, fake: FakeCrews) -> Binding:
        from pytest_flows.crewai._crews import install

        return install(session, fake)

    def bind_tools(self, session: FlowsSession, fake: FakeTools) -> Binding:
        from pytest_flows.crewai._tools import install

        return install(session, fake)

    def resume_human(
        self,
        session: FlowsSession | None,
        human: ScriptedHuman,
        paused: Any,
        feedback: str,
        outcome: str | None,
    ) -> FlowRun:
        from pytest_flows.crewai._human import resume

        return resume(human, paused, feedback, outcome)

    def seams(self) -> Sequence[object]:
        return declared_seams(__package__)

    def golden(self) -> GoldenAdapter:
        from pytest_flows.crewai._golden import ADAPTER

        return ADAPTER

    def graph(self, flow: Any) -> FlowGraph:
        from pytest_flows.crewai._graph import _graph_of

        return _graph_of(flow)

    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        from crewai.events.event_bus import crewai_event_bus

        kwargs = dict(kwargs)
        extra_inputs = check_kickoff_args(target, args, kwargs)
        # crewai registers each flow in a per-context set of id()s: one set shared by
        # every run of a test, where a new flow at a dead one's address passed for
        # registered and built its RuntimeState (and that state's locks) later, in
        # kickoff, so the run's lock names, and a search's count, varied with the
        # process's past. With no RuntimeState attached the ids are stale: each such
        # run starts from the registry a fresh process has. (One attached, by
        # Flow.fork for one, is the user's: its ids name its entities.)
        if crewai_event_bus.runtime_state is None:
            crewai_event_bus.reset_runtime_state()
        flow = _instantiate(target)
        if not extra_inputs:
            check_state_inputs(target, flow, kwargs.get("inputs"))
        run = FlowRun(flow=flow)
        mark = session.event_count()
        try:
            flow, kwargs = _restored_from_checkpoint(flow, kwargs)
            run.flow = flow
            patches.record_method_outputs(flow)
            run.output = await flow.kickoff_async(**kwargs)
        except Exception as exc:
            _reject_inputs(flow, exc, started=session.event_count() > mark)
            run.error = exc
            if not compat.HAS_FLOW_FAILED_EVENT:
                self._flow_failed(session, mark, exc)
        run.state = compat.bare_state(flow)
        run.method_outputs = list(flow.method_outputs)
        patches.note_shared_outside(flow, lambda: session.trace_slice(mark))
        if run.error is None:
            _warn_if_nothing_ran(session, flow, mark)
        return run

    def _flow_failed(self, session: FlowsSession, mark: int, error: Exception) -> None:
        """crewai 1.14.x emits no FlowFailedEvent: the line it would have traced."""
        started = [e for e in session.trace_slice(mark) if e.kind == "flow.started"]
        if started:  # (a flow that never started did not fail: its inputs were refused)
            self.trace_sink(session)(flow_failed(started[0].name, error))


def _warn_if_nothing_ran(session: FlowsSession, flow: Any, mark: int) -> None:
    if getattr(flow, "_completed_methods", None):
        return  # restored with its methods done: nothing left to run is right
    if any(e.kind == "method.started" for e in session.trace_slice(mark)):
        return
    cls = type(flow)
    base = next(
        (
            c
            for c in cls.__mro__[1:]
            if isinstance(c, type) and issubclass(c, Flow) and not c.__module__.startswith("crewai")
        ),
        None,
    )
    cause = (
        f"{cls.__name__} subclasses {base.__name__}, and crewai does not inherit a flow's "
        f"@start/@listen/@router methods into subclasses: declare them on {cls.__name__} "
        f"(or run {base.__name__})"
        if base is not None
        else f"{cls.__name__} has no @start() method crewai can see: decorate the method that "
        "begins the flow with @start()"
    )
    warnings.warn(
        NoMethodRanWarning(
            f"pytest-flows: {cls.__qualname__} ran no method at all: the run started and "
            f"finished without executing anything, so this test checks nothing. {cause}."
        ),
        stacklevel=_caller_level(),
    )


_HARNESS_MODULES = ("pytest_flows", "asyncio", "concurrent", "threading", "contextvars")


def _caller_level() -> int:
    """The ``stacklevel`` that points a warning at the test's flows.run() line."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.split(".", 1)[0] not in _HARNESS_MODULES:
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 2


def _reject_inputs(flow: Any, exc: Exception, *, started: bool) -> None:
    """crewai validates inputs against the state model before the flow starts;
    that is a mistake in the test, not a failure of the flow."""
    if started or not isinstance(exc, ValueError) or not str(exc).startswith("Invalid inputs"):
        return
    model = type(compat.bare_state(flow))
    declared = declared_model(model)
    fields = ", ".join(getattr(model, "model_fields", {}))
    raise FlowsUsageError(
        f"crewai rejected the inputs for {type(flow).__name__}: {exc}\n"
        f"Pass inputs that fit the state model {declared.__name__}"
        + (f" (fields: {fields})." if fields else ".")
    ) from exc


def _restored_from_checkpoint(flow: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """kickoff(from_checkpoint=...) restores into a *new* instance and runs that one;
    restore here instead, so run.flow / run.state are the instance that ran."""
    config = kwargs.get("from_checkpoint")
    if (
        config is None
        or getattr(config, "restore_from", None) is None
        or kwargs.get("restore_from_state_id") is not None  # crewai's own ValueError
    ):
        return flow, kwargs
    from crewai.state.checkpoint_config import apply_checkpoint
    from pydantic import ValidationError

    from pytest_flows.crewai._checkpoints import not_a_checkpoint

    rest = {k: v for k, v in kwargs.items() if k != "from_checkpoint"}
    try:
        return apply_checkpoint(flow, config), rest
    except ValidationError as exc:
        # pydantic's message quotes the document it read: say what is wrong instead
        raise not_a_checkpoint(str(config.restore_from), exc) from None


def _instantiate(target: Any) -> Any:
    if not isinstance(target, type):
        return target
    try:
        return target()
    except Exception as exc:
        raise FlowsUsageError(
            f"flows.run() could not construct {target.__qualname__}(): "
            f"{type(exc).__name__}: {exc}. Fix the flow's constructor, or build the instance "
            f"yourself and pass it: flows.run({target.__name__}(...))."
        ) from exc


@contextlib.contextmanager
def _quiet_console() -> Iterator[None]:
    from crewai.events.event_listener import event_listener

    formatter: Any = event_listener.formatter
    console: Any = formatter.console
    previous_quiet = console.quiet
    console.quiet = True
    # Two Rich panels a method are built before the suppressed print drops them: a
    # tenth of a quiet run. The method-status handler only draws, so skip it.
    try:
        with (
            suppressed_console_output(),
            no_version_check(),
            SEAMS[_METHOD_STATUS].shadow(formatter, _draw_nothing),
        ):
            yield
    finally:
        console.quiet = previous_quiet


@contextlib.contextmanager
def no_version_check() -> Iterator[None]:
    """crewai's own switch: no "new version available" panel (nor its PyPI call) in a
    quiet test. A test on the harness only through --flows-all keeps the check, as
    its console, so what it prints or mocks there behaves as on the bare runtime."""
    from crewai.events.utils import console_formatter

    switch: Any = console_formatter._disable_version_check
    token = switch.set(True)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # reset from another context: leave it
            switch.reset(token)


@contextlib.contextmanager
def suppressed_console_output() -> Iterator[None]:
    """crewai's own "print nothing" switch, on for the block (the benchmark's quiet bare run
    uses it too)."""
    from crewai_core.printer import set_suppress_console_output

    token: Any = set_suppress_console_output(True)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError, LookupError):
            from crewai_core.printer import _suppress_console_output

            _suppress_console_output.reset(token)


_METHOD_STATUS = "crewai.events.utils.console_formatter:ConsoleFormatter.handle_method_status"


def _draw_nothing(*args: Any, **kwargs: Any) -> None:
    return None


ADAPTER = CrewAIAdapter()
