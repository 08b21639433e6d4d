"""``fake_llm`` for LangGraph: langchain-core chat models answered from the test's script.

* :class:`FlowsChatModel` is a real ``BaseChatModel`` answered by ``fake_llm``, to give
  to the graph a test builds (``bind_tools``, each ``with_structured_output`` method,
  ``stream``/``astream``, ``ainvoke`` work as with a provider's model).
* While ``fake_llm`` is bound (:func:`bind_llm`), *every* chat model answers from the
  script: a module-level ``ChatOpenAI(...)`` or ``init_chat_model(...)`` included. The
  step every provider shares (``BaseChatModel._generate_with_cache``, ``stream``...,
  declared in ``_llm_seams.py``) runs on a :class:`FlowsChatModel` twin of the model,
  so callbacks, ``stream_mode="messages"`` chunks and output parsers are
  langchain-core's own, and no request leaves the process.

The request: ``caller`` has ``method`` (the node, ``langgraph_node``), ``checkpoint_ns``
(in a subgraph: the node path, ``"team|researcher"``), ``purpose`` (``"agent"``) and
``model``; ``prompt`` is the last human message; ``tools`` the tools offered.

A node re-runs from its top when resumed after ``interrupt()``: a call the re-run
makes again (same task, same place among its calls, same messages) gets the reply it
got the first time, takes no scripted reply, and is in ``fake_llm.calls`` with
``data["repeat_of"]`` = the number of the call it repeats.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.output_parsers import JsonOutputParser
from langchain_core.output_parsers.openai_tools import (
    JsonOutputKeyToolsParser,
    PydanticToolsParser,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, create_model

from pytest_flows.adapters import (
    Exchange,
    FlowsSession,
    FlowsUsageError,
    LLMScript,
    Request,
    ScriptError,
    Stream,
    ToolCall,
    check_offered,
    llm_call_event,
    note_usage,
    plain,
    render_value,
    sleep_on,
    tool_calls_of,
    tools_summary,
)
from pytest_flows.langgraph._llm_context import metadata_of, with_graph_context
from pytest_flows.langgraph._llm_ids import ReplyNumbers
from pytest_flows.langgraph._llm_seams import routed_chat_models

__all__ = ["FlowsChatModel", "bind_llm"]


@dataclass
class _Answered:
    """One answered call of a task attempt: what a re-run on resume must repeat."""

    fingerprint: str
    exchange: Exchange
    value: Any
    ident: str  # of the reply's message and tool-call ids


@dataclass
class _Attempt:
    scratchpad: Any
    calls: list[_Answered] = field(default_factory=list)
    before: list[_Answered] = field(default_factory=list)  # the previous attempt's


@dataclass
class _Bound:
    """The fake bound in the running test, and its per-task memory of answered calls."""

    session: FlowsSession | None
    fake: LLMScript
    tasks: dict[tuple[str, str], _Attempt] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    replies: ReplyNumbers = field(default_factory=ReplyNumbers)  # message ids


#: The bindings open now (a test's fixture binds one; the newest answers): a list,
#: not a context variable, because LangGraph's pool threads must see it too.
_bindings: list[_Bound] = []
#: ``FlowsChatModel(fake=script)`` with no harness: one record per script, so ids stay unique.
_unbound: weakref.WeakKeyDictionary[LLMScript, _Bound] = weakref.WeakKeyDictionary()


def _current(model: FlowsChatModel) -> _Bound:
    if model.fake is not None:  # its own script; the test's binding if that is the same
        mine = [bound for bound in _bindings if bound.fake is model.fake]
        return mine[-1] if mine else _unbound.setdefault(model.fake, _Bound(None, model.fake))
    if not _bindings:
        raise FlowsUsageError(
            "FlowsChatModel() was asked for a reply but no fake_llm is bound: request the "
            "fake_llm fixture in this test (and script its replies), or pass one: "
            "FlowsChatModel(fake=fake_llm)."
        )
    return _bindings[-1]


class FlowsChatModel(BaseChatModel):
    """A chat model answered from ``fake_llm``: ``FlowsChatModel(model="gpt-4o")``.

    Without ``fake=``, it answers from the ``fake_llm`` bound in the running test;
    ``model`` is what ``fake_llm.on(model=...)`` matches.
    """

    model_config = ConfigDict(populate_by_name=True, arbitrary_types_allowed=True)

    model_name: str = Field(default="fake-model", alias="model")
    streaming: bool = False
    fake: Any = Field(default=None, exclude=True)

    @property
    def _llm_type(self) -> str:
        return "pytest-flows"

    # -- the provider step (what a provider's _generate/_stream do) -------------------
    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        answer = _Answer(self, messages, run_manager, kw)
        answer.sleep(answer.latency)
        return answer.result()

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        answer = _Answer(self, messages, run_manager, kw)
        await answer.asleep(answer.latency)
        return answer.result()

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        answer = _Answer(self, messages, run_manager, kw)
        for index, chunk in enumerate(answer.chunks()):
            answer.sleep(answer.interval if index else answer.latency)
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        answer = _Answer(self, messages, run_manager, kw)
        for index, chunk in enumerate(answer.chunks()):
            await answer.asleep(answer.interval if index else answer.latency)
            yield ChatGenerationChunk(message=chunk)

    # -- tools and structured output, as a provider's model binds them ---------------
    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: str | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[Any, AIMessage]:
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is True or tool_choice in ("any", "required"):
            tool_choice = formatted[0]["function"]["name"] if len(formatted) == 1 else "required"
        if tool_choice:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def with_structured_output(
        self,
        schema: Any = None,
        *,
        method: Literal["function_calling", "json_mode", "json_schema"] = "function_calling",
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[Any, Any]:
        """As ``ChatOpenAI.with_structured_output``: each ``method`` binds what a provider
        is sent, and parses the reply the way that method's parser does."""
        is_model = isinstance(schema, type) and issubclass(schema, BaseModel)
        kwargs.pop("strict", None)
        if method == "function_calling":
            if schema is None:
                raise FlowsUsageError(
                    "with_structured_output(method='function_calling') needs a schema."
                )
            name = convert_to_openai_tool(schema)["function"]["name"]
            llm = self.bind_tools([schema], tool_choice=name, **kwargs)
            parser: Runnable[Any, Any] = (
                PydanticToolsParser(tools=[schema], first_tool_only=True)
                if is_model
                else JsonOutputKeyToolsParser(key_name=name, first_tool_only=True)
            )
        elif method in ("json_schema", "json_mode"):
            fmt = {"type": "json_object"} if method == "json_mode" else schema
            llm = self.bind(response_format=fmt, **kwargs)
            parser = RunnableLambda(lambda m: _parse_json(m, schema if is_model else None))
        else:
            raise FlowsUsageError(
                f"with_structured_output(method={method!r}): the methods are "
                "'function_calling', 'json_schema' and 'json_mode'."
            )
        if include_raw:
            from langchain_core.runnables import RunnablePassthrough

            return {"raw": llm} | RunnablePassthrough.assign(
                parsed=lambda x: parser.invoke(x["raw"]), parsing_error=lambda _: None
            )
        return llm | parser


def _parse_json(message: AIMessage, schema: type[BaseModel] | None) -> Any:
    parsed = message.additional_kwargs.get("parsed")
    if parsed is None:
        parsed = JsonOutputParser().invoke(message)
    if schema is not None and not isinstance(parsed, schema):
        return schema.model_validate(parsed)
    return parsed


# -- one call: request, script, reply -------------------------------------------------


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, Mapping) else str(part) for part in content
    )


def _tool_specs(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Offered tool name -> its parameters schema, from any provider's ``tools=`` shape."""
    specs: dict[str, Any] = {}
    for tool in kwargs.get("tools") or ():
        if not isinstance(tool, Mapping):
            try:
                tool = convert_to_openai_tool(tool)
            except Exception:  # nothing langchain-core can describe: not a tool offered
                continue
        inner = tool.get("function")
        spec: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
        if spec.get("name"):
            specs[str(spec["name"])] = spec.get("parameters") or spec.get("input_schema") or {}
    return specs


def _forced_tool(kwargs: Mapping[str, Any], specs: Mapping[str, Any]) -> str | None:
    """The tool a structured reply must be a call of (``tool_choice`` forcing one)."""
    choice = kwargs.get("tool_choice")
    if isinstance(choice, Mapping):
        choice = (choice.get("function") or {}).get("name") or choice.get("name")
    if isinstance(choice, str) and choice in specs:
        return choice
    if choice in ("any", "required", True) and len(specs) == 1:
        return next(iter(specs))
    return None


_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _schema_model(name: str, params: Mapping[str, Any]) -> Any:
    """A pydantic model with the JSON schema's fields (suggestions read its fields)."""
    fields: dict[str, Any] = {}
    for prop, spec in (params.get("properties") or {}).items():
        kind: Any = (
            _JSON_TYPES.get(str(spec.get("type")), Any) if isinstance(spec, Mapping) else Any
        )
        if isinstance(spec, Mapping) and spec.get("enum"):
            kind = Literal[tuple(spec["enum"])]
        fields[str(prop)] = (kind, ...)
    with contextlib.suppress(Exception):
        return create_model(name or "Output", **fields)
    return name


def _structure(kwargs: Mapping[str, Any], specs: Mapping[str, Any]) -> tuple[str | None, Any]:
    """How a structured reply is shaped (``tool``/``json_schema``/``json_mode``/None)
    and the schema the request shows."""
    forced = _forced_tool(kwargs, specs)
    if forced is not None:
        return "tool", _schema_model(forced, specs[forced])
    fmt = kwargs.get("response_format")
    if isinstance(fmt, type):
        return "json_schema", fmt
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        inner = fmt.get("json_schema") or {}
        return "json_schema", _schema_model(str(inner.get("name", "")), inner.get("schema") or {})
    if isinstance(fmt, Mapping):
        return "json_mode", None
    return None, None


def _fingerprint(messages: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    shown = [
        [getattr(m, "type", type(m).__name__), _text(m), getattr(m, "tool_calls", None) or []]
        for m in messages
    ]
    return json.dumps([shown, sorted(_tool_specs(kwargs))], default=str, sort_keys=True)


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


class _Answer:
    """One model call: its request, the script's answer, and that answer as messages."""

    def __init__(
        self, model: FlowsChatModel, messages: list[Any], run_manager: Any, kwargs: Any
    ) -> None:
        self.bound = _current(model)
        self.model = model
        self.messages = messages
        metadata = metadata_of(run_manager)
        self.specs = _tool_specs(kwargs)
        self.shape, schema = _structure(kwargs, self.specs)
        self.response_format = kwargs.get("response_format")
        self.request = self._request(metadata, schema, kwargs)
        self.repeat_of: _Answered | None = None
        # Counted first: a call over the run's budget fails before it takes a reply.
        note_usage(str(self.request.caller.get("method", "")), llm_calls=1)
        self.exchange, self.value = self._take(metadata, kwargs)
        options = getattr(self.exchange.entry, "options", None) or {}
        self.latency = 0.0 if self.repeat_of else float(options.get("latency") or 0.0)
        self.usage = options.get("usage") or {}
        self.interval = self.value.interval if isinstance(self.value, Stream) else 0.0
        self._note()

    def _request(self, metadata: Mapping[str, Any], schema: Any, kwargs: Any) -> Request:
        caller: dict[str, Any] = {}
        node = metadata.get("langgraph_node")
        if node:
            caller["method"] = str(node)
        ns = str(metadata.get("langgraph_checkpoint_ns") or "")
        path = "|".join(part.partition(":")[0] for part in ns.split("|") if part)
        if "|" in path:
            caller["checkpoint_ns"] = path
        caller["purpose"] = "agent"
        caller["model"] = self.model.model_name
        humans = [m for m in self.messages if getattr(m, "type", "") == "human"]
        return Request(
            caller=caller,
            prompt=_text(humans[-1]) if humans else "",
            messages=list(self.messages),
            tools=list(self.specs),
            response_model=schema,
            purpose="agent",
            data={
                "tool_schemas": dict(self.specs),
                "tools_called": [
                    str(call.get("name"))
                    for m in self.messages
                    for call in getattr(m, "tool_calls", None) or ()
                ],
                "checkpoint_ns": ns,
                "thread_id": metadata.get("thread_id"),
                "step": metadata.get("langgraph_step"),
                "kwargs": dict(kwargs),
            },
        )

    def _take(self, metadata: Mapping[str, Any], kwargs: Any) -> tuple[Exchange, Any]:
        bound, request = self.bound, self.request
        fake = bound.fake
        attempt = _attempt(bound, metadata)
        fingerprint = _fingerprint(self.messages, kwargs)
        if attempt is not None:
            with bound.lock:
                position = len(attempt.calls)
                prior = attempt.before[position] if position < len(attempt.before) else None
                if prior is not None and prior.fingerprint == fingerprint:
                    # The node re-runs from its top on resume: the same call again.
                    self.repeat_of = prior
                    request.data["repeat_of"] = prior.exchange.request.number
                    with fake.script._lock:
                        request.number = len(fake.script.exchanges) + 1
                        exchange = Exchange(request=request, entry=prior.exchange.entry)
                        exchange.reply = prior.exchange.reply
                        fake.script.exchanges.append(exchange)
                    attempt.calls.append(prior)
                    self.ident = prior.ident
                    return exchange, prior.value
        try:
            exchange = fake.script.take(request)  # UnscriptedRequest if nothing fits
        except ScriptError as exc:
            self._record((("error", render_value(str(exc).splitlines()[0])),))
            raise with_graph_context(exc, request) from None
        try:
            value = exchange.resolve()
        except BaseException as exc:
            self._record((("error", render_value(f"{type(exc).__name__}: {exc}")),))
            raise
        calls = tool_calls_of(value)
        if calls is not None:
            check_offered(exchange, calls, request.tools)
            request.data["tool_calls"] = list(calls)  # fake_llm.tool_calls reads them
        exchange.reply = value
        with bound.lock:
            node = request.caller.get("method")
            if node:  # per node and thread (_llm_ids.py says why)
                thread = request.data.get("thread_id")
                self.ident = bound.replies.next(thread, str(node), self.messages)
            else:
                self.ident = str(request.number)
            if attempt is not None:
                attempt.calls.append(_Answered(fingerprint, exchange, value, self.ident))
        return exchange, value

    def _note(self) -> None:
        method = str(self.request.caller.get("method", ""))
        prompt = int(
            self.usage.get("prompt_tokens", _tokens(json.dumps([_text(m) for m in self.messages])))
        )
        completion = int(self.usage.get("completion_tokens", _tokens(self._summary())))
        self.tokens = {"prompt_tokens": prompt, "completion_tokens": completion}
        note_usage(method, tokens=prompt + completion, virtual_seconds=self.latency)
        outcome: list[tuple[str, str]] = []
        calls = tool_calls_of(self.value)
        if calls is not None:
            outcome.append(("tools", tools_summary(calls)))
        else:
            outcome.append(("reply", plain(self._summary())))
            if isinstance(self.value, Stream):
                outcome.append(("chunks", str(len(self.value.chunks))))
        if self.repeat_of is not None:
            outcome.append(("repeat", f"#{self.repeat_of.exchange.request.number}"))
        self._record(tuple(outcome))

    def _record(self, outcome: tuple[tuple[str, str], ...]) -> None:
        session = self.bound.session
        if session is not None:
            from pytest_flows.langgraph._adapter import ADAPTER

            # through the adapter's sink: inside a node the line joins that node's block
            # (the graph's lines are written per superstep, in task order)
            keys = ("checkpoint_ns", "model")
            ADAPTER.trace_sink(session)(llm_call_event(self.request, outcome, keys=keys))

    # -- time --------------------------------------------------------------------------
    def sleep(self, seconds: float) -> None:
        session = self.bound.session
        if seconds > 0 and session is not None:
            sleep_on(session.clock, seconds)

    async def asleep(self, seconds: float) -> None:
        if seconds > 0 and self.bound.session is not None:
            await asyncio.sleep(seconds)  # the test's loop runs on virtual time

    # -- shapes ------------------------------------------------------------------------
    def _summary(self) -> str:
        value = self.value
        if isinstance(value, Stream):
            return value.text
        if isinstance(value, AIMessage):
            return _text(value)
        if isinstance(value, str):
            return value
        calls = tool_calls_of(value)
        if calls is not None:
            return tools_summary(calls)
        return _json(value)

    def _tool_calls(self) -> list[dict[str, Any]] | None:
        calls = tool_calls_of(self.value)
        if calls is None and self.shape == "tool" and isinstance(self.value, dict | BaseModel):
            forced = _forced_tool(self.request.data["kwargs"], self.specs)
            calls = [ToolCall(str(forced), _plain(self.value))]
        if calls is None:
            return None
        return [
            {"name": c.name, "args": dict(c.arguments), "type": "tool_call", "id": c.id}
            | ({} if c.id else {"id": f"call-{self.ident}-{index}"})
            for index, c in enumerate(calls, start=1)
        ]

    def message(self) -> AIMessage:
        value = self.value
        if isinstance(value, AIMessage):
            return value
        usage = {
            "input_tokens": self.tokens["prompt_tokens"],
            "output_tokens": self.tokens["completion_tokens"],
            "total_tokens": sum(self.tokens.values()),
        }
        common: dict[str, Any] = {
            "id": f"msg-{self.ident}",
            "usage_metadata": usage,
            "response_metadata": {"model_name": self.model.model_name, "finish_reason": "stop"},
        }
        calls = self._tool_calls()
        if calls is not None:
            common["response_metadata"]["finish_reason"] = "tool_calls"
            return AIMessage(content="", tool_calls=calls, **common)
        if isinstance(value, Stream | str):
            return AIMessage(content=self._summary(), **common)
        if isinstance(value, dict | list | BaseModel):
            extra: dict[str, Any] = {}
            if self.shape == "json_schema":
                fmt, plain = self.response_format, _plain(value)
                is_model = isinstance(fmt, type) and issubclass(fmt, BaseModel)
                extra["parsed"] = fmt.model_validate(plain) if is_model else plain
            return AIMessage(content=_json(value), additional_kwargs=extra, **common)
        raise FlowsUsageError(
            f"fake_llm reply {value!r} ({type(value).__name__}) is not something a chat model "
            "returns: text, a dict or pydantic model (structured output), call_tool(...), "
            "stream(...), an exception, or a callable returning one of those or an AIMessage."
        )

    def result(self) -> ChatResult:
        usage = {**self.tokens, "total_tokens": sum(self.tokens.values())}
        output = {"token_usage": usage, "model_name": self.model.model_name}
        return ChatResult(generations=[ChatGeneration(message=self.message())], llm_output=output)

    def chunks(self) -> list[AIMessageChunk]:
        """The reply as the chunks a streaming provider sends (``stream_mode="messages"``)."""
        message = self.message()
        ident = message.id
        if isinstance(self.value, Stream) and self.value.chunks:
            parts = [AIMessageChunk(content=chunk, id=ident) for chunk in self.value.chunks]
        elif message.tool_calls:
            pieces = [
                tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
                for i, c in enumerate(message.tool_calls)
            ]
            parts = [AIMessageChunk(content="", id=ident, tool_call_chunks=pieces)]
        else:
            extra = message.additional_kwargs
            parts = [AIMessageChunk(content=message.content, id=ident, additional_kwargs=extra)]
        parts[-1].usage_metadata = message.usage_metadata
        parts[-1].response_metadata = dict(message.response_metadata)
        return parts


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _json(value: Any) -> str:
    return json.dumps(_plain(value), default=str)


def _attempt(bound: _Bound, metadata: Mapping[str, Any]) -> _Attempt | None:
    """This task attempt's record (None outside a LangGraph node)."""
    ns = metadata.get("langgraph_checkpoint_ns")
    if not ns:
        return None
    from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
    from langgraph.config import get_config

    try:
        scratchpad = get_config().get("configurable", {})[CONFIG_KEY_SCRATCHPAD]
    except (RuntimeError, KeyError):  # not inside a graph's task: no attempt to tell apart
        return None
    key = (str(metadata.get("thread_id") or ""), str(ns))
    with bound.lock:
        attempt = bound.tasks.get(key)
        if attempt is None or attempt.scratchpad is not scratchpad:
            before = attempt.calls if attempt is not None else []
            attempt = _Attempt(scratchpad, before=before)
            bound.tasks[key] = attempt
        return attempt


@contextlib.contextmanager
def bind_llm(session: FlowsSession | None, fake: LLMScript) -> Iterator[None]:
    """Answer every langchain-core chat model's calls from ``fake`` until exit."""
    if not callable(getattr(getattr(fake, "script", None), "take", None)):
        raise FlowsUsageError(f"bind_llm needs the fake_llm fixture (an LLMScript), got {fake!r}.")
    bound = _Bound(session, fake)
    _bindings.append(bound)
    fake.handles["langgraph"] = lambda model: FlowsChatModel(model=model)
    try:
        with routed_chat_models(FlowsChatModel):
            yield
    finally:
        fake.handles.pop("langgraph", None)
        _bindings.remove(bound)
