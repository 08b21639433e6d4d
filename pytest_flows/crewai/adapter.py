"""Runs CrewAI Flows under the harness: process-wide isolation, per-test patches."""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from crewai.events.stream_context import add_stream_sink, reset_stream_sinks
from crewai.flow.flow import Flow

from pytest_flows.crewai import patches
from pytest_flows.crewai.memory import memory_storage
from pytest_flows.crewai.tracing import CrewAITraceRecorder
from pytest_flows.errors import FlowsUsageError
from pytest_flows.run import FlowRun

if TYPE_CHECKING:
    from pytest_flows.session import FlowsSession

__all__ = ["ADAPTER", "CrewAIAdapter"]

_KICKOFF_PARAMS = tuple(inspect.signature(Flow.kickoff_async).parameters)[1:]


class CrewAIAdapter:
    name = "crewai"

    def __init__(self) -> None:
        self._configured = False

    def configure(self) -> None:
        if self._configured:
            return
        self._configured = True
        from crewai.memory.storage.factory import set_memory_storage_factory

        # The default memory store imports lancedb (seconds) and writes to disk;
        # flows tests get one that keeps nothing, other tests crewai's default.
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

        from pytest_flows.crewai.persistence import routed_persistence

        set_flow_persistence_factory(routed_persistence)

    def accepts(self, target: object) -> bool:
        return isinstance(target, Flow) or (isinstance(target, type) and issubclass(target, Flow))

    @contextlib.contextmanager
    def activate(self, session: FlowsSession) -> Iterator[None]:
        from crewai.events.event_bus import crewai_event_bus

        recorder = CrewAITraceRecorder(session.record)
        # crewai keeps one RuntimeState per context that every flow joins; one
        # left by an earlier test must not leak into this one, nor this one out.
        crewai_event_bus.reset_runtime_state()
        with contextlib.ExitStack() as stack:
            stack.callback(crewai_event_bus.reset_runtime_state)
            stack.enter_context(patches.inline_event_bus())
            stack.enter_context(patches.ordered_races(session.scheduler.order, recorder.race))
            if not session.console:
                stack.enter_context(_quiet_console())
            token = add_stream_sink(recorder)
            stack.callback(reset_stream_sinks, token)
            yield

    def bind(
        self, session: FlowsSession, kind: str, fake: Any
    ) -> contextlib.AbstractContextManager[None] | None:
        target = BINDERS.get(kind)
        if target is None:
            return None
        module, _, function = target.partition(":")
        install: Any = getattr(importlib.import_module(module), function)
        context: contextlib.AbstractContextManager[None] = install(session, fake)
        return context

    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        if args:
            raise FlowsUsageError(
                f"flows.run({_name(target)}, ...) takes kickoff's keyword arguments "
                f"({', '.join(_KICKOFF_PARAMS)}), not positional ones; "
                f"write flows.run({_name(target)}, inputs={{...}})."
            )
        unknown = sorted(set(kwargs) - set(_KICKOFF_PARAMS))
        if unknown:
            raise FlowsUsageError(
                f"flows.run({_name(target)}, ...) got unknown keyword argument(s) "
                f"{', '.join(unknown)}; Flow.kickoff accepts {', '.join(_KICKOFF_PARAMS)} "
                "(plus raise_on_error=False to get a failed run back instead of the error)."
            )
        inputs = kwargs.get("inputs")
        if inputs is not None and not isinstance(inputs, dict):
            raise FlowsUsageError(
                f"flows.run({_name(target)}, inputs=...) needs a dict of state fields, "
                f"got {type(inputs).__name__}: {inputs!r}."
            )
        flow = _instantiate(target)
        run = FlowRun(flow=flow)
        mark = session.event_count()
        try:
            flow, kwargs = _restored_from_checkpoint(flow, kwargs)
            run.flow = flow
            run.output = await flow.kickoff_async(**kwargs)
        except Exception as exc:
            _reject_inputs(flow, exc, started=session.event_count() > mark)
            run.error = exc
        run.state = flow.state
        run.method_outputs = list(flow.method_outputs)
        return run


def _reject_inputs(flow: Any, exc: Exception, *, started: bool) -> None:
    """crewai validates inputs against the state model before the flow starts;
    that is a mistake in the test, not a failure of the flow."""
    if started or not isinstance(exc, ValueError) or not str(exc).startswith("Invalid inputs"):
        return
    model = type(flow.state)
    # crewai wraps a user's state model in a subclass that adds the id
    declared = next(
        (c for c in model.__mro__ if not c.__module__.startswith(("crewai.", "pydantic."))),
        model,
    )
    fields = ", ".join(getattr(model, "model_fields", {}))
    raise FlowsUsageError(
        f"crewai rejected the inputs for {type(flow).__name__}: {exc}\n"
        f"Pass inputs that fit the state model {declared.__name__}"
        + (f" (fields: {fields})." if fields else ".")
    ) from exc


def _name(target: Any) -> str:
    return target.__name__ if isinstance(target, type) else type(target).__name__


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

    rest = {k: v for k, v in kwargs.items() if k != "from_checkpoint"}
    return apply_checkpoint(flow, config), rest


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
    from crewai_core.printer import set_suppress_console_output

    console: Any = event_listener.formatter.console
    previous_quiet = console.quiet
    token: Any = set_suppress_console_output(True)
    console.quiet = True
    try:
        yield
    finally:
        console.quiet = previous_quiet
        with contextlib.suppress(ValueError, LookupError):
            from crewai_core.printer import _suppress_console_output

            _suppress_console_output.reset(token)


#: How each kind of fake is installed in crewai: kind -> "module:function",
#: where function(session, fake) returns a context manager. Imported lazily.
BINDERS: dict[str, str] = {
    "llm": "pytest_flows.crewai.llm:install",
    "crews": "pytest_flows.crewai.crews:install",
    "human": "pytest_flows.crewai.human:install",
    "store": "pytest_flows.crewai.persistence:install",
}


ADAPTER = CrewAIAdapter()
