"""The flight recorder's Agent Framework part: one record per workflow run, its
``request_info`` continuations (``run(responses=...)``) included.

While recording is on, five places are wrapped: ``Workflow._run_core`` (the async
generator every ``run`` - streamed or not - drains: its events, in order, are the
workflow's supersteps, executor invocations and completions, outputs and
``request_info`` requests), ``Executor.execute`` (so a model call knows which
executor made it), ``BaseChatClient.get_response`` (the layer the chat middleware
and the tool loop call: every model request and response, streamed or not, whatever
the provider), ``FunctionInvocationLayer.get_response`` (the tool loop: a recorded
run's calls get one more *function middleware*, Agent Framework's own extension
point for tool calls, innermost, which records each tool call and its result) and
``WorkflowBuilder.build`` (which function built the workflow, so a test can build
it again).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import sys
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatResponse,
    Executor,
    FunctionInvocationContext,
    FunctionInvocationLayer,
    FunctionMiddleware,
    Workflow,
    WorkflowBuilder,
)

from pytest_flows._internal.flight import capture
from pytest_flows._internal.flight.capture import RunRecording
from pytest_flows._internal.flight.format import message_text
from pytest_flows._internal.flight.writer import LOG
from pytest_flows._internal.trace import render_value

__all__ = ["install", "shadow"]

FRAMEWORK = "agent_framework"
_executor: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "pytest_flows_flight_executor", default=None
)
#: The in-memory recording of a replay (``shadow``): runs go into it, not to disk.
_shadow: contextvars.ContextVar[RunRecording | None] = contextvars.ContextVar(
    "pytest_flows_flight_shadow", default=None
)


_AF_VERSION = capture.distribution_version("agent-framework-core")


def message_dicts(messages: Any) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out = []
    for message in messages or []:
        role = getattr(message, "role", "user")
        out.append({"role": str(getattr(role, "value", role)), "content": message_text(message)})
    return out


def _tool_names(options: Any) -> list[str]:
    tools = (options or {}).get("tools") if isinstance(options, dict) else None
    return [str(getattr(tool, "name", tool)) for tool in tools or []]


def _note_event(run: RunRecording, event: Any) -> None:
    kind = getattr(event, "type", "")
    executor = getattr(event, "executor_id", None)
    if kind == "executor_invoked":
        run.note("method.started", method=executor)
    elif kind == "executor_completed":
        data = event.data
        run.note("method.finished", method=executor, output=data, rendered=render_value(data))
    elif kind == "executor_failed":
        run.note(
            "method.failed",
            method=executor,
            error=capture.error_fields(getattr(event, "details", None)),
        )
    elif kind == "output":
        run.note("workflow.output", method=executor, output=event.data)
    elif kind == "request_info":
        run.note(
            "human.asked",
            method=getattr(event, "source_executor_id", None),
            via="request_info",
            request_id=getattr(event, "request_id", None),
            data=event.data,
            response_type=getattr(getattr(event, "response_type", None), "__name__", None),
        )
    elif kind == "superstep_started":
        run.note("superstep", iteration=getattr(event, "iteration", None))
    elif kind == "failed":
        run.note("flow.failed", error=capture.error_fields(getattr(event, "details", None)))


def _outputs(run: RunRecording) -> list[Any]:
    return [e.get("output") for e in run.entries if e.get("kind") == "workflow.output"]


#: A workflow whose recorded run paused on ``request_info``: its continuation
#: (``run(responses=...)``) goes into the same record, which is written again.
_paused: weakref.WeakKeyDictionary[Workflow, RunRecording] = weakref.WeakKeyDictionary()
#: The function that built each workflow (``module:function``), when it can build it again.
_factories: weakref.WeakKeyDictionary[Workflow, str] = weakref.WeakKeyDictionary()


def _factory_of(frame: Any) -> str | None:
    """``module:function`` of the code running in ``frame``, if it is a module-level
    function callable with no arguments (so a test can call it to rebuild the workflow)."""
    if frame is None:
        return None
    module = frame.f_globals.get("__name__")
    name = frame.f_code.co_name
    function = frame.f_globals.get(name)
    if (
        not module
        or module == "__main__"
        or getattr(function, "__code__", None) is not frame.f_code
    ):
        return None
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(
        p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters
    ):
        return None
    return f"{module}:{name}"


def _factory(workflow: Workflow) -> str | None:
    recorder = capture.active()
    named = (recorder.factories if recorder is not None else {}).get(getattr(workflow, "name", ""))
    return named or _factories.get(workflow)


def _answers(run: RunRecording, responses: Any) -> None:
    asked = {
        e.get("request_id"): e.get("method")
        for e in run.entries
        if e.get("kind") == "human.asked" and e.get("via") == "request_info"
    }
    for request_id, answer in dict(responses or {}).items():
        run.note(
            "human.answered",
            method=asked.get(request_id),
            via="request_info",
            request_id=request_id,
            answer=answer,
        )


def _end(run: RunRecording, workflow: Workflow) -> None:
    outputs = _outputs(run)
    failed = [e for e in run.entries if e.get("kind") == "flow.failed"]
    if failed:
        run.finish("failed", error=failed[-1].get("error"))
        _paused.pop(workflow, None)
        return
    asked = {e.get("request_id") for e in run.entries if e.get("kind") == "human.asked"}
    answered = {e.get("request_id") for e in run.entries if e.get("kind") == "human.answered"}
    if asked - answered:
        # Written now (production may never answer), and again when it is answered.
        run.finish("paused", output=outputs, rendered=render_value(outputs))
        _paused[workflow] = run
        return
    _paused.pop(workflow, None)
    run.finish("finished", output=outputs, rendered=render_value(outputs))


def _begin(workflow: Workflow, kwargs: dict[str, Any]) -> RunRecording | None:
    responses = kwargs.get("responses")
    paused = _paused.get(workflow) if responses is not None else None
    if paused is not None and paused.reopen():
        _answers(paused, responses)
        return paused
    message = kwargs.get("message")
    inputs: dict[str, Any] = {"message": message} if responses is None else {"responses": responses}
    if kwargs.get("streaming"):
        inputs["stream"] = True  # run(..., stream=True): the replay streams it too
    target = f"{type(workflow).__module__}:{type(workflow).__qualname__}"
    run = capture.begin(FRAMEWORK, _AF_VERSION, target, inputs)
    if run is not None:
        run.header["workflow"] = getattr(workflow, "name", None)
        run.header["factory"] = _factory(workflow)
    return run


def response_fields(response: Any, text: str | None = None) -> dict[str, Any]:
    """A model response as the record keeps it: the tool calls it asks for (name,
    arguments, the provider's call id), else its text."""
    calls = [
        {"name": content.name, "arguments": content.arguments, "id": content.call_id}
        for message in getattr(response, "messages", None) or ()
        for content in getattr(message, "contents", None) or ()
        if getattr(content, "type", None) == "function_call"
    ]
    if calls:
        return {"response_type": "tool_calls", "response": calls}
    return {"response_type": "text", "response": str(response.text) if text is None else text}


def _streamed(run: RunRecording, method: str | None, call_id: str, stream: Any) -> Any:
    """``stream`` with its updates gathered and noted as the response when it ends."""
    updates: list[Any] = []

    def gather(update: Any) -> Any:
        updates.append(update)
        return update

    def done() -> None:
        # The text as the updates carried it (merged, a response loses trailing space).
        text = "".join(str(getattr(u, "text", "") or "") for u in updates)
        try:
            fields = response_fields(ChatResponse.from_updates(updates), text)
        except Exception:
            fields = {"response_type": "text", "response": text}
        run.note("llm.response", call_id=call_id, method=method, stream=True, **fields)

    try:
        return stream.with_update_transform(gather).with_cleanup_hook(done)
    except Exception:
        LOG.exception("pytest-flows recorder: recording a streamed model call failed")
        return stream


def _arguments(arguments: Any) -> Any:
    dump = getattr(arguments, "model_dump", None)
    return dump() if callable(dump) else dict(arguments or {})


def tool_output(result: Any) -> Any:
    """A tool's result as the model was given it: Agent Framework parses a function's
    return value into ``Content`` items (text: the value itself, or its JSON); their
    text is what the record keeps (a tool returning raw values keeps them)."""
    if isinstance(result, list) and result and all(hasattr(c, "type") for c in result):
        if all(c.type == "text" for c in result):
            return "".join(str(c.text) for c in result)
        return [c.to_dict() if hasattr(c, "to_dict") else repr(c) for c in result]
    return result


class RecordingCheckpointStorage:
    """A workflow's checkpoint storage, as a recorded run sees it: every call goes to
    the storage the workflow was built or run with; each checkpoint saved is also noted
    in the record (``checkpoint.saved``: its superstep, committed state, in-flight
    messages and pending requests, as JSON data)."""

    def __init__(self, storage: Any, run: RunRecording) -> None:
        self._storage = storage
        self._run = run

    async def save(self, checkpoint: Any) -> Any:
        saved = await self._storage.save(checkpoint)
        try:
            self._run.note(
                "checkpoint.saved",
                iteration=getattr(checkpoint, "iteration_count", None),
                state=getattr(checkpoint, "state", None),
                messages=getattr(checkpoint, "messages", None),
                pending=sorted(map(str, getattr(checkpoint, "pending_request_info_events", ()))),
            )
        except Exception:
            LOG.exception("pytest-flows recorder: recording a checkpoint failed")
        return saved

    def __getattr__(self, name: str) -> Any:
        # load, list_checkpoints, get_latest, delete, ...: the storage's own.
        return getattr(self._storage, name)


def _with_recorded_checkpoints(
    workflow: Workflow, run: RunRecording, kwargs: dict[str, Any]
) -> None:
    """The run's checkpoint storage (``run(checkpoint_storage=...)``, else the one the
    workflow was built with) passed to this run wrapped, so its saves are recorded."""
    storage = kwargs.get("checkpoint_storage")
    if storage is None:
        # (Agent Framework keeps the builder's storage on the workflow's runner context.)
        storage = getattr(getattr(workflow, "_runner_context", None), "_checkpoint_storage", None)
    if storage is not None and not isinstance(storage, RecordingCheckpointStorage):
        kwargs["checkpoint_storage"] = RecordingCheckpointStorage(storage, run)


class RecordingMiddleware(FunctionMiddleware):
    """Agent Framework function middleware that records each tool call of a recorded
    run: its tool, arguments, executor and result (or error). It is put innermost, so
    it sees the arguments the function gets and the result it gave, and never changes
    either."""

    async def process(
        self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        run = capture.current()
        if run is None:
            await call_next()
            return
        method = _executor.get()
        tool = getattr(context.function, "name", None)
        call_id = context.metadata.get("call_id")
        try:
            run.note(
                "tool.started",
                method=method,
                tool=tool,
                args=_arguments(context.arguments),
                call_id=call_id,
            )
        except Exception:
            LOG.exception("pytest-flows recorder: recording a tool call failed")
        try:
            await call_next()
        except Exception as exc:
            run.note("tool.failed", method=method, tool=tool, error=str(exc), call_id=call_id)
            raise
        try:
            output = tool_output(context.result)
        except Exception:
            LOG.exception("pytest-flows recorder: recording a tool result failed")
            return
        run.note("tool.finished", method=method, tool=tool, output=output, call_id=call_id)


_MIDDLEWARE = RecordingMiddleware()


def install() -> Callable[[], None]:
    """Wrap the five places; returns the undo."""
    if capture.Patches.installed(Workflow, "_run_core"):
        return lambda: None
    run_core = Workflow.__dict__["_run_core"]
    execute = Executor.__dict__["execute"]
    get_response = BaseChatClient.__dict__["get_response"]
    tool_loop = FunctionInvocationLayer.__dict__["get_response"]
    build = WorkflowBuilder.__dict__["build"]
    patches = capture.Patches()

    @functools.wraps(run_core)
    async def _run_core(self: Workflow, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        run = _shadow.get()
        own = run is None
        if own:
            run = _begin(self, kwargs)
        elif run is not None and kwargs.get("responses") is not None:
            _answers(run, kwargs.get("responses"))
        if run is None:
            async for event in run_core(self, *args, **kwargs):
                yield event
            return
        run.note("flow.started", flow=getattr(self, "name", None) or "workflow")
        try:
            _with_recorded_checkpoints(self, run, kwargs)
        except Exception:
            LOG.exception("pytest-flows recorder: recording the run's checkpoints failed")
        token = capture._current.set(run)
        try:
            async for event in run_core(self, *args, **kwargs):
                _note_event(run, event)
                yield event
        except BaseException as exc:
            if own:
                _paused.pop(self, None)
                run.finish("failed", error=capture.error_fields(exc))
            raise
        finally:
            # ValueError: the generator was closed from another context.
            with contextlib.suppress(ValueError):
                capture._current.reset(token)
        if own:
            _end(run, self)

    @functools.wraps(execute)
    async def _execute(self: Executor, *args: Any, **kwargs: Any) -> Any:
        token = _executor.set(getattr(self, "id", None))
        try:
            return await execute(self, *args, **kwargs)
        finally:
            _executor.reset(token)

    @functools.wraps(get_response)
    def _get_response(self: Any, messages: Any, *, stream: bool = False, **kwargs: Any) -> Any:
        run = capture.current()
        if run is None:
            return get_response(self, messages, stream=stream, **kwargs)
        method = _executor.get()
        call_id = f"call-{id(messages)}-{len(run.entries)}"
        try:
            run.note(
                "llm.request",
                call_id=call_id,
                method=method,
                model=getattr(self, "model", None) or getattr(self, "model_id", None),
                messages=message_dicts(messages),
                tools=_tool_names(kwargs.get("options")),
                stream=stream,
            )
        except Exception:
            LOG.exception("pytest-flows recorder: recording a model request failed")
        pending = get_response(self, messages, stream=stream, **kwargs)
        if stream:
            return _streamed(run, method, call_id, pending)

        async def answered() -> Any:
            try:
                response = await pending
            except Exception as exc:
                run.note(
                    "llm.failed",
                    call_id=call_id,
                    method=method,
                    error=str(exc),
                    exception=capture.exception_fields(exc),
                )
                raise
            try:
                usage = getattr(response, "usage_details", None)
                run.note(
                    "llm.response",
                    call_id=call_id,
                    method=method,
                    usage=dict(usage) if usage else None,
                    **response_fields(response),
                )
            except Exception:
                LOG.exception("pytest-flows recorder: recording a model response failed")
            return response

        return answered()

    @functools.wraps(tool_loop)
    def _tool_loop(self: Any, *args: Any, middleware: Any = None, **kwargs: Any) -> Any:
        if capture.current() is not None:
            # The run's function middleware, ours last (innermost: closest to the function).
            given = middleware if isinstance(middleware, list | tuple) else [middleware]
            middleware = [*(m for m in given if m is not None), _MIDDLEWARE]
        return tool_loop(self, *args, middleware=middleware, **kwargs)

    @functools.wraps(build)
    def _build(self: WorkflowBuilder, *args: Any, **kwargs: Any) -> Workflow:
        workflow: Workflow = build(self, *args, **kwargs)
        try:
            factory = _factory_of(sys._getframe(1))
            if factory is not None:
                _factories[workflow] = factory
        except Exception:
            LOG.exception("pytest-flows recorder: noting the workflow's factory failed")
        return workflow

    patches.replace(Workflow, "_run_core", _run_core)
    patches.replace(Executor, "execute", _execute)
    patches.replace(BaseChatClient, "get_response", _get_response)
    patches.replace(FunctionInvocationLayer, "get_response", _tool_loop)
    patches.replace(WorkflowBuilder, "build", _build)
    return patches.undo


def shadow(
    run: RunRecording, *, answer_tool: Callable[..., Any] | None = None
) -> Callable[[], None]:
    """Record the workflow runs of this context into ``run`` (replay compares them).

    (``answer_tool`` is crewAI's: Agent Framework's tools are answered at their body by
    ``fake_tools``.)
    """
    undo = install()
    token = _shadow.set(run)

    def done() -> None:
        _shadow.reset(token)
        undo()

    return done
