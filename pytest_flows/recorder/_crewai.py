"""The flight recorder's crewAI part: one record per ``Flow.kickoff``/``kickoff_async``.

``Flow.kickoff_async`` (which ``kickoff`` runs) is wrapped while recording is on:
when a run is sampled, a crewAI *stream sink* is added for the run's context. A
sink runs synchronously inside ``emit()``, in the emitting thread and in emission
order, so the record has the true order of method starts and finishes, LLM calls,
tool calls, crew kickoffs and human answers, on the thread that made them. It only
copies what the event carries; it never raises into the flow. crewAI emits no event
for a ``@persist`` save, so ``PersistenceDecorator.persist_state`` is wrapped too.
``Flow.kickoff`` is wrapped so a run's record is queued for writing when the call
returns (crewAI's teardown after the run then does not share the interpreter with the
writer thread).
A ``Flow(stream=True)`` kickoff gives its consumer these same events as frames;
``Flow.stream_events`` and ``Flow.astream`` are wrapped to note that the run streamed,
and a streamed LLM reply's chunks are recorded one by one.

For a replay (``shadow``), ``BaseLLM._handle_tool_execution`` is wrapped as well: the
functions an LLM call runs for the model's tool calls are answered from the record.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import contextvars
import functools
import sys
import weakref
from collections.abc import Callable
from typing import Any

from crewai.events.stream_context import add_stream_sink, reset_stream_sinks
from crewai.flow.runtime import Flow

from pytest_flows._internal.flight import capture
from pytest_flows._internal.flight.capture import RunRecording
from pytest_flows._internal.flight.writer import LOG
from pytest_flows._internal.trace import render_value

__all__ = ["CrewAISink", "install", "target_of"]

FRAMEWORK = "crewai"

#: The user flow method running in this context (set by the sink at each method start:
#: a sink runs in the method's own context, so LLM calls made inside it see it).
_method: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "pytest_flows_flight_method", default=None
)


_CREWAI_VERSION = capture.distribution_version("crewai")


def target_of(flow: Any) -> str:
    cls = type(flow)
    return f"{cls.__module__}:{cls.__qualname__}"


def _task_name() -> str | None:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return None
    return task.get_name() if task is not None else None


def _is_internal(source: Any) -> bool:
    # crewAI runs its agents' executors as Flows of its own: not the user's methods.
    return type(source).__module__.startswith("crewai.")


def _tool_names(tools: Any) -> list[str]:
    names = []
    for tool in tools or []:
        if isinstance(tool, dict):
            inner = tool.get("function")
            function: dict[str, Any] = inner if isinstance(inner, dict) else tool
            names.append(str(function.get("name", "?")))
        else:
            names.append(str(getattr(tool, "name", tool)))
    return names


def _response(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"response_type": "text", "response": value}
    if isinstance(value, list) and value and all(_is_tool_call(v) for v in value):
        return {"response_type": "tool_calls", "response": [_tool_call(v) for v in value]}
    if hasattr(value, "model_dump") and not isinstance(value, type):
        return {"response_type": "structured", "response": value, "model": type(value).__name__}
    if isinstance(value, dict):
        return {"response_type": "structured", "response": value}
    return {"response_type": "text", "response": "" if value is None else str(value)}


def _is_tool_call(value: Any) -> bool:
    function = (
        value.get("function") if isinstance(value, dict) else getattr(value, "function", None)
    )
    return function is not None


def _tool_call(value: Any) -> dict[str, Any]:
    function: Any = value.get("function") if isinstance(value, dict) else value.function
    name = function.get("name") if isinstance(function, dict) else function.name
    arguments = function.get("arguments") if isinstance(function, dict) else function.arguments
    ident = value.get("id") if isinstance(value, dict) else getattr(value, "id", None)
    return {"name": name, "arguments": arguments, "id": ident}


class CrewAISink:
    """A crewAI stream sink writing one run's entries (also used, in memory, by replay)."""

    def __init__(self, run: RunRecording) -> None:
        self.run = run

    def __call__(self, source: Any, event: Any) -> None:
        try:
            handler = _HANDLERS.get(getattr(event, "type", ""))
            if handler is not None:
                handler(self.run, source, event)
        except Exception:
            LOG.exception("pytest-flows recorder: recording a crewAI event failed")


def _flow_started(run: RunRecording, source: Any, event: Any) -> None:
    if not _is_internal(source):
        run.note("flow.started", flow=event.flow_name, inputs=event.inputs)


def _method_started(run: RunRecording, source: Any, event: Any) -> None:
    if _is_internal(source):
        return
    _method.set(str(event.method_name))
    run.note("method.started", method=event.method_name, task=_task_name())


def _method_finished(run: RunRecording, source: Any, event: Any) -> None:
    if _is_internal(source):
        return
    run.note(
        "method.finished",
        method=event.method_name,
        output=event.result,
        rendered=render_value(event.result),
        task=_task_name(),
    )


def _method_failed(run: RunRecording, source: Any, event: Any) -> None:
    if not _is_internal(source):
        run.note("method.failed", method=event.method_name, error=capture.error_fields(event.error))


def _method_paused(run: RunRecording, source: Any, event: Any) -> None:
    if not _is_internal(source):
        run.note("method.paused", method=event.method_name, message=event.message)


def _flow_finished(run: RunRecording, source: Any, event: Any) -> None:
    if not _is_internal(source):
        run.note("flow.finished", rendered=render_value(event.result), state=event.state)


def _flow_failed(run: RunRecording, source: Any, event: Any) -> None:
    if not _is_internal(source):
        run.note("flow.failed", error=capture.error_fields(event.error))


def _agent_of(event: Any) -> str | None:
    # crewAI 1.15 moves the agent's role into ``agent_role`` and blanks ``from_agent``.
    role = getattr(event, "agent_role", None) or getattr(
        getattr(event, "from_agent", None), "role", None
    )
    return str(role).strip() if role else None


def _task_of(event: Any) -> str | None:
    name = getattr(event, "task_name", None)
    if not name:
        task = getattr(event, "from_task", None)
        name = getattr(task, "name", None) or getattr(task, "description", None)
    return str(name).strip() if name else None


#: crewAI serializes an event's ``tools`` to this depth (``to_serializable``); deeper
#: values arrive as their ``repr``.
_SERIALIZED_DEPTH = 5


def _unflattened(value: Any, depth: int) -> Any:
    """``value`` with the reprs crewAI's serializer left at its depth limit turned back
    into data (``ast.literal_eval``: literals only, nothing runs)."""
    if depth >= _SERIALIZED_DEPTH and isinstance(value, str):
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
    if isinstance(value, dict):
        return {key: _unflattened(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_unflattened(item, depth + 1) for item in value]
    return value


def _tool_schema(tool: Any) -> Any:
    """A tool as the provider is sent it (``{"type": "function", "function": {...}}``),
    not crewAI's serialized tool object."""
    if isinstance(tool, dict):
        return _unflattened(tool, 1)
    name = getattr(tool, "name", None)
    if name is None:
        return str(tool)
    schema = getattr(tool, "args_schema", None)
    parameters: Any = {}
    if schema is not None and hasattr(schema, "model_json_schema"):
        parameters = schema.model_json_schema()
    return {
        "type": "function",
        "function": {
            "name": str(name),
            "description": str(getattr(tool, "description", "") or ""),
            "parameters": parameters,
        },
    }


def _llm_started(run: RunRecording, source: Any, event: Any) -> None:
    run.note(
        "llm.request",
        call_id=event.call_id,
        method=_method.get(),
        model=event.model,
        agent=_agent_of(event),
        task=_task_of(event),
        messages=event.messages,
        tools=_tool_names(event.tools),
        tool_schemas=[_tool_schema(t) for t in event.tools or []],
        stream=event.stream,
    )


def _llm_completed(run: RunRecording, source: Any, event: Any) -> None:
    run.note(
        "llm.response",
        call_id=event.call_id,
        method=_method.get(),
        usage=event.usage,
        finish_reason=event.finish_reason,
        call_type=getattr(event.call_type, "value", event.call_type),
        **_response(event.response),
    )


def _llm_chunk(run: RunRecording, source: Any, event: Any) -> None:
    # A streamed reply's text, chunk by chunk, as a stream's consumer got it.
    if getattr(event, "tool_call", None) is None:
        run.note("llm.chunk", call_id=event.call_id, method=_method.get(), chunk=event.chunk)


def _llm_failed(run: RunRecording, source: Any, event: Any) -> None:
    # crewAI emits the event inside its ``except`` block: the exception being handled
    # is the provider's own (its type is what the flow saw; a replay raises it again).
    raised = sys.exc_info()[1]
    run.note(
        "llm.failed",
        call_id=event.call_id,
        method=_method.get(),
        error=event.error,
        exception=capture.exception_fields(raised) if raised is not None else None,
    )


def _tool_started(run: RunRecording, source: Any, event: Any) -> None:
    agent = event.agent_role or getattr(event.from_agent, "role", None)
    run.note(
        "tool.started",
        method=_method.get(),
        tool=event.tool_name,
        args=event.tool_args,
        agent=agent,
    )


def _tool_finished(run: RunRecording, source: Any, event: Any) -> None:
    run.note("tool.finished", method=_method.get(), tool=event.tool_name, output=event.output)


def _tool_error(run: RunRecording, source: Any, event: Any) -> None:
    run.note("tool.failed", method=_method.get(), tool=event.tool_name, error=str(event.error))


def _crew_started(run: RunRecording, source: Any, event: Any) -> None:
    run.note("crew.started", method=_method.get(), crew=event.crew_name, inputs=event.inputs)


def _crew_completed(run: RunRecording, source: Any, event: Any) -> None:
    output = event.output
    run.note(
        "crew.finished",
        method=_method.get(),
        crew=event.crew_name,
        raw=getattr(output, "raw", output),
        json=getattr(output, "json_dict", None),
        pydantic=getattr(output, "pydantic", None),
    )


def _crew_failed(run: RunRecording, source: Any, event: Any) -> None:
    raised = sys.exc_info()[1]
    run.note(
        "crew.failed",
        method=_method.get(),
        crew=event.crew_name,
        error=event.error,
        exception=capture.exception_fields(raised) if raised is not None else None,
    )


def _feedback_requested(run: RunRecording, source: Any, event: Any) -> None:
    run.note(
        "human.asked",
        method=event.method_name,
        message=event.message,
        emit=event.emit,
        via="feedback",
    )


def _feedback_received(run: RunRecording, source: Any, event: Any) -> None:
    run.note(
        "human.answered",
        method=event.method_name,
        answer=event.feedback,
        outcome=event.outcome,
        via="feedback",
    )


def _input_requested(run: RunRecording, source: Any, event: Any) -> None:
    run.note("human.asked", method=event.method_name, message=event.message, via="ask")


def _input_received(run: RunRecording, source: Any, event: Any) -> None:
    run.note("human.answered", method=event.method_name, answer=event.response, via="ask")


def _checkpoint(run: RunRecording, source: Any, event: Any) -> None:
    run.note("checkpoint", event=event.type, location=getattr(event, "location", None))


_HANDLERS: dict[str, Callable[[RunRecording, Any, Any], None]] = {
    "flow_started": _flow_started,
    "method_execution_started": _method_started,
    "method_execution_finished": _method_finished,
    "method_execution_failed": _method_failed,
    "method_execution_paused": _method_paused,
    "flow_finished": _flow_finished,
    "flow_failed": _flow_failed,
    "llm_call_started": _llm_started,
    "llm_call_completed": _llm_completed,
    "llm_call_failed": _llm_failed,
    "llm_stream_chunk": _llm_chunk,
    "tool_usage_started": _tool_started,
    "tool_usage_finished": _tool_finished,
    "tool_usage_error": _tool_error,
    "crew_kickoff_started": _crew_started,
    "crew_kickoff_completed": _crew_completed,
    "crew_kickoff_failed": _crew_failed,
    "human_feedback_requested": _feedback_requested,
    "human_feedback_received": _feedback_received,
    "flow_input_requested": _input_requested,
    "flow_input_received": _input_received,
    "checkpoint_completed": _checkpoint,
}


def _outcome(result: Any) -> tuple[str, dict[str, Any]]:
    if type(result).__name__ == "HumanFeedbackPending":
        return "paused", {"message": str(getattr(result, "message", result))}
    return "finished", {"output": result, "rendered": render_value(result)}


def _persisted(run: RunRecording, method: str, state: Any) -> None:
    """A ``@persist`` save: crewAI emits no event for it, so the save itself is wrapped."""
    data = state._unwrap() if hasattr(state, "_unwrap") else state
    run.note("state.saved", method=method, state=data)


def _recording_run() -> RunRecording | None:
    return capture.current() or _replaying.get()


#: The in-memory recording of a replay (``shadow``): ``@persist`` saves go into it.
_replaying: contextvars.ContextVar[RunRecording | None] = contextvars.ContextVar(
    "pytest_flows_flight_replaying", default=None
)
#: While a replay runs: ``answer(tool, args, method, real)`` answers the functions an
#: LLM call runs for its tool calls (``available_functions``) from the record.
_tool_answer: contextvars.ContextVar[Callable[..., Any] | None] = contextvars.ContextVar(
    "pytest_flows_flight_tool_answer", default=None
)


def _patch_persistence(patches: capture.Patches) -> None:
    from crewai.flow.persistence.decorators import PersistenceDecorator

    if capture.Patches.installed(PersistenceDecorator, "persist_state"):
        return
    original = PersistenceDecorator.__dict__["persist_state"].__func__

    @functools.wraps(original)
    def persist_state(
        cls: Any, flow_instance: Any, method_name: str, *args: Any, **kwargs: Any
    ) -> Any:
        result = original(cls, flow_instance, method_name, *args, **kwargs)
        run = _recording_run()
        if run is not None:
            try:
                _persisted(run, method_name, getattr(flow_instance, "state", None))
            except Exception:
                LOG.exception("pytest-flows recorder: recording a @persist save failed")
        return result

    patches.replace(PersistenceDecorator, "persist_state", classmethod(persist_state))


def _patch_tool_functions(patches: capture.Patches) -> None:
    from crewai.llms.base_llm import BaseLLM

    if capture.Patches.installed(BaseLLM, "_handle_tool_execution"):
        return
    original = BaseLLM.__dict__["_handle_tool_execution"]

    @functools.wraps(original)
    def _handle_tool_execution(
        self: Any,
        function_name: str,
        function_args: dict[str, Any],
        available_functions: dict[str, Any],
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        answer = _tool_answer.get()
        function = (available_functions or {}).get(function_name)
        if answer is not None and function is not None:
            method = _method.get()

            def answered(**arguments: Any) -> Any:
                return answer(function_name, arguments, method, lambda: function(**arguments))

            available_functions = {**available_functions, function_name: answered}
        return original(self, function_name, function_args, available_functions, *args, **kwargs)

    patches.replace(BaseLLM, "_handle_tool_execution", _handle_tool_execution)


#: Flows whose ``kickoff`` streams (``Flow(stream=True)``: ``stream_events`` or
#: ``astream`` runs ``kickoff_async`` with ``stream`` switched off for the run).
_streamed: weakref.WeakSet[Any] = weakref.WeakSet()


def _patch_streaming(patches: capture.Patches) -> None:
    for name in ("stream_events", "astream"):
        original = Flow.__dict__.get(name)
        if original is None or capture.Patches.installed(Flow, name):
            continue

        def wrapper(original: Any) -> Any:
            @functools.wraps(original)
            def streamed(self: Any, *args: Any, **kwargs: Any) -> Any:
                with contextlib.suppress(Exception):
                    _streamed.add(self)
                return original(self, *args, **kwargs)

            return streamed

        patches.replace(Flow, name, wrapper(original))


def install() -> Callable[[], None]:
    """Wrap ``Flow.kickoff_async`` (and the ``@persist`` save, and the streamed
    kickoffs) so sampled runs are recorded; returns the undo."""
    if capture.Patches.installed(Flow, "kickoff_async"):
        return lambda: None
    original = Flow.__dict__["kickoff_async"]
    patches = capture.Patches()

    @functools.wraps(original)
    async def kickoff_async(self: Flow[Any], inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
        streamed = bool(_streamed) and self in _streamed
        if streamed:
            _streamed.discard(self)
        run = capture.begin(FRAMEWORK, _CREWAI_VERSION, target_of(self), {"inputs": inputs})
        if run is None:
            return await original(self, inputs, *args, **kwargs)
        if streamed:
            run.header["stream"] = True  # its consumer got the events as frames
        with capture.recording(run):
            token = add_stream_sink(CrewAISink(run))
            try:
                result = await original(self, inputs, *args, **kwargs)
            except BaseException as exc:
                run.finish("failed", error=capture.error_fields(exc))
                raise
            finally:
                reset_stream_sinks(token)
        outcome, fields = _outcome(result)
        run.finish(outcome, **fields)
        return result

    patches.replace(Flow, "kickoff_async", kickoff_async)
    sync_kickoff = Flow.__dict__.get("kickoff")
    if sync_kickoff is not None:

        @functools.wraps(sync_kickoff)
        def kickoff(self: Flow[Any], *args: Any, **kwargs: Any) -> Any:
            if capture.active() is None or getattr(self, "stream", False):
                return sync_kickoff(self, *args, **kwargs)
            with capture.writes_after():
                return sync_kickoff(self, *args, **kwargs)

        patches.replace(Flow, "kickoff", kickoff)
    _patch_persistence(patches)
    _patch_streaming(patches)
    return patches.undo


def shadow(
    run: RunRecording, *, answer_tool: Callable[..., Any] | None = None
) -> Callable[[], None]:
    """Record this context's crewAI events into ``run`` (replay compares them); the undo.

    ``answer_tool(tool, arguments, method, real)``, when given, answers the functions
    LLM calls run for their tool calls (crewAI's ``available_functions``).
    """
    patches = capture.Patches()
    _patch_persistence(patches)
    _patch_tool_functions(patches)
    token = add_stream_sink(CrewAISink(run))
    replaying = _replaying.set(run)
    answering = _tool_answer.set(answer_tool)

    def undo() -> None:
        _tool_answer.reset(answering)
        _replaying.reset(replaying)
        reset_stream_sinks(token)
        patches.undo()

    return undo
