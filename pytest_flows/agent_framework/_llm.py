"""``fake_llm`` for Agent Framework: a chat client answered from the test's script.

Agent Framework's ``Agent`` talks to a model through a chat client
(``BaseChatClient._inner_get_response``); its tool loop
(``FunctionInvocationLayer``) runs the real tools between model calls. The fake
sits below that loop:

* :class:`FlowsChatClient` is a real chat client whose replies come from the
  bound ``fake_llm`` script - give it to the agents a test builds;
* while ``fake_llm`` is bound, *every* chat client (a provider's client built
  by your production workflow factory too) answers from the script instead of
  its provider: :func:`intercept_chat_clients` routes
  ``BaseChatClient.get_response`` (the step below the tool loop and the
  middleware) to it.

Script values: text; a dict or pydantic model (structured output: sent as JSON
text, parsed by ``response_format``); ``call_tool(...)`` or a list of them (the
real tools run, the model is asked again with their results); ``stream(...)``
(one update per chunk, ``interval`` virtual seconds apart); an exception (the
call fails); Agent Framework's own ``ChatResponse`` or a list of
``ChatResponseUpdate``. ``latency=`` costs virtual time only.

The request the script sees: ``caller`` has ``flow`` (workflow name),
``method`` (executor id), ``agent`` (the agent's name, for agent executors),
``purpose`` (``"agent"``) and ``model``; ``prompt`` is the last user message;
``tools`` the tool names offered; ``response_model`` the ``response_format``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
)
from pydantic import BaseModel

from pytest_flows.adapters import FlowsUsageError, note_usage, render_value
from pytest_flows.agent_framework import _patches as patches

__all__ = [
    "FlowsChatClient",
    "current_workflow",
    "intercept_chat_clients",
]

#: The workflow ``flows.run`` is running (so a model call knows its flow and agent).
current_workflow: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "pytest_flows_af_workflow", default=None
)
#: The script (fake_llm) that answers chat clients in the running test.
_bound: list[Any] = []


def _script_of(fake: Any) -> Any:
    script = getattr(fake, "script", None)
    if script is None or not callable(getattr(script, "take", None)):
        raise FlowsUsageError(
            f"FlowsChatClient needs the fake_llm fixture (a scripted LLM), got {fake!r}; "
            "request fake_llm in the test and pass it: FlowsChatClient(fake_llm)."
        )
    return script


class FlowsChatClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """A chat client that answers from ``fake_llm``; tools really run.

    ``FlowsChatClient()`` answers from the ``fake_llm`` bound in the running
    test; ``FlowsChatClient(fake_llm)`` from that one. ``model`` is what
    ``fake_llm.on(model=...)`` matches.
    """

    OTEL_PROVIDER_NAME = "pytest-flows"

    def __init__(self, fake_llm: Any = None, *, model: str = "fake-model") -> None:
        super().__init__()
        self._fake = fake_llm
        if fake_llm is not None:
            _script_of(fake_llm)
        self.model = model

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Any:
        fake = self._fake if self._fake is not None else (_bound[-1] if _bound else None)
        if fake is None:
            raise FlowsUsageError(
                "FlowsChatClient() was asked for a reply but no fake_llm is bound: request the "
                "fake_llm fixture in this test (and script its replies), or pass one: "
                "FlowsChatClient(fake_llm)."
            )
        return answer(self, fake, messages, stream=stream, options=options)


# -- answering --------------------------------------------------------------------------


def _text(message: Any) -> str:
    text = getattr(message, "text", "")
    return text if isinstance(text, str) else ""


def _tool_names(options: Mapping[str, Any]) -> list[str]:
    names = []
    for tool in options.get("tools") or ():
        name = getattr(tool, "name", None) or getattr(tool, "__name__", None)
        if isinstance(tool, Mapping):
            name = tool.get("name") or tool.get("function", {}).get("name")
        if name:
            names.append(str(name))
    return names


def _caller(client: Any) -> dict[str, Any]:
    caller: dict[str, Any] = {}
    workflow = current_workflow.get()
    token = patches.current_invocation()
    if workflow is not None:
        caller["flow"] = workflow.name or "workflow"
    target = getattr(token, "target", None)
    if target is not None:
        caller["method"] = target
        executor = workflow.executors.get(target) if workflow is not None else None
        agent = getattr(executor, "agent", None)
        name = getattr(agent, "name", None)
        if name:
            caller["agent"] = name
    caller["purpose"] = "agent"
    model = getattr(client, "model", None) or getattr(client, "model_id", None)
    if model:
        caller["model"] = str(model)
    return caller


def _request(client: Any, messages: Sequence[Message], options: Mapping[str, Any]) -> Any:
    from pytest_flows.adapters import Request

    users = [m for m in messages if getattr(m, "role", None) == "user"]
    return Request(
        caller=_caller(client),
        prompt=_text(users[-1]) if users else "",
        messages=list(messages),
        tools=_tool_names(options),
        response_model=options.get("response_format"),
        data={
            "client": client,
            "options": dict(options),
            # For fake_llm.auto(): argument schemas, and which tools already ran.
            "tool_schemas": _tool_schemas(options),
            "tools_called": _tools_called(messages),
        },
    )


def _tool_schemas(options: Mapping[str, Any]) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for tool in options.get("tools") or ():
        name = getattr(tool, "name", None)
        parameters = getattr(tool, "parameters", None)
        if name and callable(parameters):
            with contextlib.suppress(Exception):  # a tool without a schema gets {}
                schemas[str(name)] = parameters()
    return schemas


def _tools_called(messages: Sequence[Message]) -> list[str]:
    return [
        str(content.name)
        for message in messages
        for content in getattr(message, "contents", None) or ()
        if getattr(content, "type", None) == "function_call" and getattr(content, "name", None)
    ]


def answer(
    client: Any, fake: Any, messages: Sequence[Message], *, stream: bool, options: Mapping[str, Any]
) -> Any:
    """Take the next scripted reply for this model call and shape it for Agent Framework."""
    script = _script_of(fake)
    request = _request(client, messages, options)
    method = str(request.caller.get("method", ""))
    note_usage(method, llm_calls=1)
    exchange = script.take(request)  # UnscriptedRequest (a BaseException) if none fits
    entry_options = getattr(exchange.entry, "options", {}) or {}
    latency = float(entry_options.get("latency") or 0.0)
    scripted_usage = entry_options.get("usage") or {}
    note_usage(
        method,
        virtual_seconds=latency,
        tokens=int(scripted_usage.get("prompt_tokens", 0))
        + int(scripted_usage.get("completion_tokens", 0)),
    )
    response_format = options.get("response_format")
    number = _call_number(request, messages)

    def resolved() -> Any:
        try:
            value = exchange.resolve()  # raises a scripted exception
        except BaseException as exc:
            _record(request, (("error", render_value(f"{type(exc).__name__}: {exc}")),))
            raise
        _check_tools(value, exchange)
        calls = _tool_calls(value)
        if calls is not None:
            request.data["tool_calls"] = list(calls)  # fake_llm.tool_calls reads them
        exchange.reply = value
        _record(request, _outcome(value))
        return value

    if not stream:

        async def respond() -> ChatResponse[Any]:
            if latency:
                await asyncio.sleep(latency)
            value = resolved()
            if isinstance(value, ChatResponse):
                return value
            updates = [u async for u in _updates(value, number, response_format, client)]
            return ChatResponse.from_updates(updates, output_format_type=response_format)

        return respond()

    async def updates() -> AsyncIterator[ChatResponseUpdate]:
        if latency:
            await asyncio.sleep(latency)
        value = resolved()
        if isinstance(value, ChatResponse):
            for message in value.messages:
                role: Any = message.role
                yield ChatResponseUpdate(
                    role=role,
                    contents=list(message.contents),
                    message_id=message.message_id,
                )
            return
        async for update in _updates(value, number, response_format, client):
            yield update

    return client._build_response_stream(updates(), response_format=response_format)


def _call_number(request: Any, messages: Sequence[Message]) -> int:
    """The model call's number in its run (1, 2, ...; outside a run: in the test).

    The ids the fake gives a reply (``call-<n>-<k>``, ``msg-<n>``) carry it: two
    runs of one workflow in a test get the same ids, as two processes would.
    """
    from pytest_flows.agent_framework._tracing import active_tracer

    tracer = active_tracer.get()
    if tracer is None:
        return int(request.number)
    held = [
        str(getattr(content, "call_id", None) or "")
        for message in messages
        for content in getattr(message, "contents", None) or ()
    ]
    return tracer.next_model_call(held)


async def _updates(
    value: Any, number: int, response_format: Any, client: Any
) -> AsyncIterator[ChatResponseUpdate]:
    from pytest_flows.adapters import Stream

    model = getattr(client, "model", None)
    message_id = f"msg-{number}"

    def update(contents: list[Content], finish: Any = None) -> ChatResponseUpdate:
        return ChatResponseUpdate(
            role="assistant",
            contents=contents,
            message_id=message_id,
            response_id=f"resp-{number}",
            model=model if isinstance(model, str) else None,
            finish_reason=finish,
        )

    if isinstance(value, list) and value and all(isinstance(v, ChatResponseUpdate) for v in value):
        for item in value:
            yield item
        return
    calls = _tool_calls(value)
    if calls is not None:
        contents = []
        for index, call in enumerate(calls, start=1):
            call_id = call.id or f"call-{number}-{index}"
            contents.append(
                Content.from_function_call(
                    call_id=call_id,
                    name=call.name,
                    arguments=dict(call.arguments),
                    id=f"occ-{call_id}",  # else the runtime draws a uuid4 per call
                )
            )
        yield update(contents, "tool_calls")
        return
    if isinstance(value, Stream):
        for index, chunk in enumerate(value.chunks):
            if index and value.interval:
                await asyncio.sleep(value.interval)
            last = index == len(value.chunks) - 1
            yield update([Content.from_text(chunk)], "stop" if last else None)
        return
    yield update([Content.from_text(_as_text(value, response_format))], "stop")


def _tool_calls(value: Any) -> list[Any] | None:
    from pytest_flows.adapters import tool_calls_of

    return tool_calls_of(value)


def _check_tools(value: Any, exchange: Any) -> None:
    from pytest_flows.adapters import check_offered

    calls = _tool_calls(value)
    if calls is not None:
        check_offered(exchange, calls, exchange.request.tools)


def _outcome(value: Any) -> tuple[tuple[str, str], ...]:
    from pytest_flows.adapters import Stream, tools_summary

    calls = _tool_calls(value)
    if calls is not None:
        return (("tools", tools_summary(calls)),)
    if isinstance(value, Stream):
        return (("reply", render_value(value.text)), ("chunks", str(len(value.chunks))))
    if isinstance(value, BaseModel | Mapping):
        return (("reply", render_value(value)),)
    from pytest_flows.agent_framework._tracing import render

    return (("reply", render(value)),)


def _record(request: Any, outcome: tuple[tuple[str, str], ...]) -> None:
    from pytest_flows.adapters import llm_call_event
    from pytest_flows.agent_framework._tracing import active_tracer

    tracer = active_tracer.get()
    if tracer is not None:
        # Agent Framework's callers carry no task; agent names are free text.
        tracer.put(
            llm_call_event(request, outcome, keys=("agent", "model"), render=_render_caller_value)
        )


def _render_caller_value(value: Any) -> str:
    return render_value(value, limit=60)


def _as_text(value: Any, response_format: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, Mapping | list):
        return json.dumps(value)
    raise FlowsUsageError(
        f"fake_llm reply {value!r} ({type(value).__name__}) is not something a chat model "
        "returns: reply text, a dict or pydantic model (structured output), call_tool(...), "
        "stream(...), an exception, or an agent_framework ChatResponse."
    )


# -- every chat client answers from the script while fake_llm is bound -------------------


@contextlib.contextmanager
def intercept_chat_clients(fake: Any) -> Iterator[None]:
    """Answer every chat client's model calls from ``fake`` until exit."""
    _script_of(fake)

    def route(client: Any, messages: Sequence[Message], stream: bool, options: Any) -> Any:
        return answer(client, fake, messages, stream=stream, options=options or {})

    _bound.append(fake)
    try:
        with patches.routed_chat_clients(route):
            yield
    finally:
        _bound.remove(fake)
