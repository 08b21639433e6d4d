"""The flight recorder's Agent Framework part: one record per ``Workflow.run``.

While recording is on, three places are wrapped: ``Workflow._run_core`` (the async
generator every ``run`` - streamed or not - drains: its events, in order, are the
workflow's supersteps, executor invocations and completions, outputs and
``request_info`` requests), ``Executor.execute`` (so a model call knows which
executor made it) and ``BaseChatClient.get_response`` (the layer the chat middleware
and the tool loop call: every model request and response, whatever the provider).
Streamed model calls pass through unrecorded.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_framework import BaseChatClient, Executor, Workflow

from pytest_flows._internal.flight import capture
from pytest_flows._internal.flight.capture import RunRecording
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
        out.append({"role": str(getattr(role, "value", role)), "content": str(message.text)})
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
        )
    elif kind == "superstep_started":
        run.note("superstep", iteration=getattr(event, "iteration", None))
    elif kind == "failed":
        run.note("flow.failed", error=capture.error_fields(getattr(event, "details", None)))


def _outputs(run: RunRecording) -> list[Any]:
    return [e.get("output") for e in run.entries if e.get("kind") == "workflow.output"]


def install() -> Callable[[], None]:
    """Wrap the three places; returns the undo."""
    run_core = Workflow.__dict__["_run_core"]
    execute = Executor.__dict__["execute"]
    get_response = BaseChatClient.__dict__["get_response"]
    if getattr(run_core, "__flows_recorder__", False):
        return lambda: None

    @functools.wraps(run_core)
    async def _run_core(self: Workflow, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        run = _shadow.get()
        own = run is None
        if own:
            message = kwargs.get("message")
            inputs = (
                {"message": message}
                if kwargs.get("responses") is None
                else {"responses": kwargs.get("responses")}
            )
            target = f"{type(self).__module__}:{type(self).__qualname__}"
            run = capture.begin(FRAMEWORK, _AF_VERSION, target, inputs)
            if run is not None:
                run.header["workflow"] = getattr(self, "name", None)
        if run is None:
            async for event in run_core(self, *args, **kwargs):
                yield event
            return
        run.note("flow.started", flow=getattr(self, "name", None) or "workflow")
        token = capture._current.set(run)
        try:
            async for event in run_core(self, *args, **kwargs):
                _note_event(run, event)
                yield event
        except BaseException as exc:
            if own:
                run.finish("failed", error=capture.error_fields(exc))
            raise
        finally:
            # ValueError: the generator was closed from another context.
            with contextlib.suppress(ValueError):
                capture._current.reset(token)
        if own:
            outputs = _outputs(run)
            failed = [e for e in run.entries if e.get("kind") == "flow.failed"]
            if failed:
                run.finish("failed", error=failed[-1].get("error"))
            else:
                pending = any(e.get("kind") == "human.asked" for e in run.entries)
                run.finish(
                    "paused" if pending and not outputs else "finished",
                    output=outputs,
                    rendered=render_value(outputs),
                )

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
        if run is None or stream:
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
            )
        except Exception:
            LOG.exception("pytest-flows recorder: recording a model request failed")
        pending = get_response(self, messages, stream=stream, **kwargs)

        async def answered() -> Any:
            try:
                response = await pending
            except Exception as exc:
                run.note("llm.failed", call_id=call_id, method=method, error=str(exc))
                raise
            try:
                usage = getattr(response, "usage_details", None)
                run.note(
                    "llm.response",
                    call_id=call_id,
                    method=method,
                    response_type="text",
                    response=str(response.text),
                    usage=dict(usage) if usage else None,
                )
            except Exception:
                LOG.exception("pytest-flows recorder: recording a model response failed")
            return response

        return answered()

    _run_core.__flows_recorder__ = True  # type: ignore[attr-defined]
    Workflow._run_core = _run_core  # type: ignore[method-assign]
    Executor.execute = _execute  # type: ignore[method-assign]
    BaseChatClient.get_response = _get_response  # type: ignore[method-assign]

    def undo() -> None:
        Workflow._run_core = run_core  # type: ignore[method-assign]
        Executor.execute = execute  # type: ignore[method-assign]
        BaseChatClient.get_response = get_response  # type: ignore[method-assign]

    return undo


def shadow(
    run: RunRecording, *, answer_tool: Callable[..., Any] | None = None
) -> Callable[[], None]:
    """Record the workflow runs of this context into ``run`` (replay compares them).

    (``answer_tool`` is crewAI's: Agent Framework's tools are answered by ``fake_tools``.)
    """
    undo = install()
    token = _shadow.set(run)

    def done() -> None:
        _shadow.reset(token)
        undo()

    return done
