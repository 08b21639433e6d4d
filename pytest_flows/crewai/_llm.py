"""``fake_llm`` for crewai: a ``BaseLLM`` answered by the test's script.

While the fake is bound, every LLM a flow can reach answers from the script:
``LLM("model")`` (and so ``Agent(llm="...")``, ``@human_feedback(llm=...)``,
``ConversationConfig(llm=...)``, declarative ``llm:``) returns a handle on the
fake, and LLM objects built before the test (at import) are routed to it too.
Each call emits crewai's normal LLM events (so ``usage_metrics`` and event
listeners see it) and an ``llm.call`` trace event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from crewai.events.types.llm_events import LLMCallType
from crewai.llms.base_llm import BaseLLM, llm_call_context
from pydantic import BaseModel, PrivateAttr

from pytest_flows.adapters import (
    DeterministicEventLoop,
    Exchange,
    LLMScript,
    Request,
    ScriptError,
    Stream,
    ToolCall,
    active_scheduler,
    check_offered,
    llm_call_event,
    note_usage,
    render_value,
    sleep_on,
    tool_calls_of,
    tools_summary,
)
from pytest_flows.crewai import _callers as callers
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai import _llm_shapes as shapes
from pytest_flows.crewai._compat import (
    arun_with_rate_limit_retry,
    get_retry_delay_seconds,
    run_with_rate_limit_retry,
)
from pytest_flows.crewai._llm_routing import route_constructor, route_existing

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = ["FakeLLM", "install"]

#: What the fake claims as its context window (no real model behind it).
CONTEXT_WINDOW = 128_000


def _no_retry_wrapper(method: Callable[..., Any]) -> Callable[..., Any]:
    # BaseLLM.__init_subclass__ wraps call/acall in a rate-limit retry that
    # really sleeps; this marker opts out, and _Core retries on virtual time.
    method._crewai_rate_limit_wrapped = True  # type: ignore[attr-defined]
    return method


class FakeLLM(BaseLLM):
    """A crewai LLM whose replies come from the test's script (the ``fake_llm`` fixture).

    Script and read ``fake_llm`` (an :class:`LLMScript`); this is the object
    crewai gets (``fake_llm.handle("gpt-4o")``, or what the routing hands out).
    """

    llm_type: str = "pytest-flows"
    model: str = "fake-llm"
    _core: Any = PrivateAttr(default=None)
    # ``LLM(model, response_format=Model)``: every call's response model, unless the
    # call names its own. crewai's native providers return the parsed model; its
    # LiteLLM fallback returns the model's JSON text (``_as_text``).
    _response_format: Any = PrivateAttr(default=None)
    _as_text: bool = PrivateAttr(default=False)

    @property
    def api(self) -> LLMScript:
        """The test's ``fake_llm``: the script every handle answers from."""
        return self._require_core().api

    def handle(
        self,
        model: str,
        response_format: Any = None,
        *,
        as_text: bool = False,
        stream: bool = False,
    ) -> FakeLLM:
        """The fake as seen by code that asked for ``model`` (same script), built
        with ``response_format`` (returned as JSON text if ``as_text``) and ``stream``
        (``LLM(..., stream=True)``: its calls stream, and its events say so)."""
        handle: FakeLLM = self._require_core().handle(model, response_format, as_text, stream)
        return handle

    @property
    def response_format(self) -> Any:
        """The response model this handle was built with (``LLM(response_format=)``)."""
        return self._response_format

    def _require_core(self) -> _Core:
        core: _Core | None = self._core
        if core is None:
            raise RuntimeError(
                "this FakeLLM has no script: use the fake_llm fixture (or FakeLLM.create())."
            )
        return core

    @classmethod
    def create(cls, session: FlowsSession | None = None, api: LLMScript | None = None) -> FakeLLM:
        """A fake with a fresh script; ``session`` gives it virtual time and a trace."""
        core = _Core(api or LLMScript(), session)
        return core.handle("fake-llm")

    # -- the BaseLLM contract --------------------------------------------------
    @_no_retry_wrapper
    def call(
        self,
        messages: Any,
        tools: list[dict[str, Any]] | None = None,
        callbacks: list[Any] | None = None,
        available_functions: dict[str, Any] | None = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: type[BaseModel] | None = None,
        **kwargs: Any,
    ) -> Any:
        call = _Call(
            self,
            messages,
            tools,
            callbacks,
            available_functions,
            from_task,
            from_agent,
            response_model or kwargs.get("response_format") or self._response_format,
            as_text=self._as_text and not (response_model or kwargs.get("response_format")),
        )
        return self._require_core().call(call)

    @_no_retry_wrapper
    async def acall(
        self,
        messages: Any,
        tools: list[dict[str, Any]] | None = None,
        callbacks: list[Any] | None = None,
        available_functions: dict[str, Any] | None = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: type[BaseModel] | None = None,
        **kwargs: Any,
    ) -> Any:
        call = _Call(
            self,
            messages,
            tools,
            callbacks,
            available_functions,
            from_task,
            from_agent,
            response_model or kwargs.get("response_format") or self._response_format,
            as_text=self._as_text and not (response_model or kwargs.get("response_format")),
        )
        return await self._require_core().acall(call)

    def supports_function_calling(self) -> bool:
        core: _Core | None = self._core
        return core is None or core.api.native_tools(self.model)

    def supports_stop_words(self) -> bool:
        # Stop words would cut scripted text (crewai's ReAct stops at "Observation:").
        return False

    def get_context_window_size(self) -> int:
        return CONTEXT_WINDOW

    def get_input_tokens_count(
        self, messages: Any, tools: Any = None, response_model: Any = None
    ) -> int:
        return shapes.tokens(shapes.all_text(messages))

    def to_config_dict(self) -> dict[str, Any]:
        # Pending feedback stores this and rebuilds LLM(**it) on resume: keep the model name.
        return {"model": self.model}

    def __repr__(self) -> str:
        return f"FakeLLM(model={self.model!r})"


class _Call:
    """The arguments of one ``call``/``acall``."""

    def __init__(
        self,
        llm: FakeLLM,
        messages: Any,
        tools: list[dict[str, Any]] | None,
        callbacks: list[Any] | None,
        available_functions: dict[str, Any] | None,
        from_task: Any,
        from_agent: Any,
        response_model: Any,
        *,
        as_text: bool = False,
    ) -> None:
        self.llm = llm
        self.as_text = as_text
        self.messages = messages
        self.tools = tools
        self.callbacks = callbacks
        self.available_functions = available_functions
        self.from_task = from_task
        self.from_agent = from_agent
        self.response_model = response_model
        purpose, extras = callers.crewai_purpose()
        if purpose is None:
            purpose = "agent" if from_agent is not None else "call"
        self.purpose = purpose
        self.extras = extras
        self.caller = self._caller()

    def _caller(self) -> dict[str, Any]:
        caller: dict[str, Any] = dict(callers.flow_caller())
        if self.from_agent is not None:
            # YAML `role: >` leaves a trailing newline nobody means to match.
            caller["agent"] = str(getattr(self.from_agent, "role", self.from_agent)).strip()
        if self.from_task is not None:
            task = self.from_task
            name = getattr(task, "name", None) or getattr(task, "description", task)
            caller["task"] = str(name).strip()
        caller["purpose"] = self.purpose
        caller["model"] = self.llm.model
        return caller

    def request(self) -> Request:
        messages = shapes.as_messages(self.messages)
        data: dict[str, Any] = {}
        if self.extras.get("outcomes") is not None:
            data["outcomes"] = self.extras["outcomes"]
        if self.extras.get("feedback") is not None:
            data["feedback"] = self.extras["feedback"]
        tools = shapes.tool_names(self.tools)
        if self.tools:
            data["tool_schemas"] = shapes.tool_schemas(self.tools)
        elif self.from_agent is not None:
            react = shapes.react_tools(messages)
            if react is not None:  # crewai's text tool loop: the tools are in the prompt
                tools, data["react"] = list(react), True
                data["tool_schemas"] = shapes.react_tool_schemas(messages)
        prompt = shapes.last_user_text(messages)
        if self.purpose == "router":
            # The router sends its context as JSON; what was asked is the user's message.
            context = shapes.router_context(prompt)
            if context:
                data["routes"] = list(context.get("available_routes") or [])
                data["context"] = context
                prompt = str(context.get("current_user_message", prompt))
        return Request(
            caller=dict(self.caller),
            prompt=prompt,
            messages=messages,
            tools=tools,
            response_model=self.response_model,
            purpose=self.purpose,
            data=data,
        )


class _Core:
    """State every handle of one test's fake shares: script, session, usage."""

    def __init__(self, api: LLMScript, session: FlowsSession | None) -> None:
        self.api = api
        self.session = session
        self._handles: dict[tuple[str, Any, bool, bool], FakeLLM] = {}

    def handle(
        self,
        model: str,
        response_format: Any = None,
        as_text: bool = False,
        stream: bool = False,
    ) -> FakeLLM:
        key = (model, response_format, as_text and response_format is not None, bool(stream))
        handle = self._handles.get(key)
        if handle is None:
            # (crewai's default is None: only a streaming handle says otherwise)
            handle = FakeLLM(model=model, stream=True) if stream else FakeLLM(model=model)
            handle._core = self
            handle._response_format = response_format
            handle._as_text = key[2]
            self._handles[key] = handle
        return handle

    # -- time --------------------------------------------------------------------
    def _advance(self, seconds: float) -> None:
        if seconds > 0:
            clock = self.session.clock if self.session is not None else None
            if clock is not None:
                sleep_on(clock, seconds)  # overlaps with sibling threads' latency

    async def _asleep(self, seconds: float) -> None:
        if seconds <= 0:
            return
        loop = asyncio.get_running_loop()
        if isinstance(loop, DeterministicEventLoop) and active_scheduler() is not None:
            await asyncio.sleep(seconds)  # virtual: other tasks run, time jumps
        else:
            self._advance(seconds)

    # -- calling -----------------------------------------------------------------
    def call(self, call: _Call) -> Any:
        retry = _VirtualRetry()
        return run_with_rate_limit_retry(
            lambda: retry.watch(lambda: self._attempt(call)),
            sleep=lambda _s: self._advance(retry.delay()),
        )

    async def acall(self, call: _Call) -> Any:
        retry = _VirtualRetry()

        async def attempt() -> Any:
            try:
                return await self._aattempt(call)
            except Exception as exc:
                retry.last_error = exc
                raise

        async def sleep(_seconds: float) -> None:
            await self._asleep(retry.delay())

        return await arun_with_rate_limit_retry(attempt, sleep=sleep)

    def _attempt(self, call: _Call) -> Any:
        with llm_call_context():
            exchange = self._begin(call)
            try:
                self._advance(_latency(exchange))
                value = exchange.resolve()
                if isinstance(value, Stream):
                    for i, chunk in enumerate(value.chunks):
                        if i:
                            self._advance(value.interval)
                        self._chunk(call, exchange, chunk)
                return self._finish(call, exchange, value)
            except BaseException as exc:
                self._fail(call, exchange, exc)
                raise

    async def _aattempt(self, call: _Call) -> Any:
        with llm_call_context():
            exchange = self._begin(call)
            try:
                await self._asleep(_latency(exchange))
                value = exchange.resolve()
                if isinstance(value, Stream):
                    for i, chunk in enumerate(value.chunks):
                        if i:
                            await self._asleep(value.interval)
                        self._chunk(call, exchange, chunk)
                return self._finish(call, exchange, value)
            except BaseException as exc:
                self._fail(call, exchange, exc)
                raise

    def _begin(self, call: _Call) -> Exchange:
        llm = call.llm
        llm._emit_call_started_event(
            messages=call.messages,
            tools=call.tools,
            callbacks=call.callbacks,
            available_functions=call.available_functions,
            from_task=call.from_task,
            from_agent=call.from_agent,
        )
        formatted = llm._format_messages(call.messages)
        llm._invoke_before_llm_call_hooks(formatted, call.from_agent)
        request = call.request()
        note_usage(str(request.caller.get("method", "")), llm_calls=1)
        try:
            return self.api.script.take(request)
        except ScriptError as exc:
            self._record(call, request, (("error", shapes.error_text(exc)),))
            llm._emit_call_failed_event(
                error=str(exc).splitlines()[0], from_task=call.from_task, from_agent=call.from_agent
            )
            raise

    def _chunk(self, call: _Call, exchange: Exchange, chunk: str) -> None:
        call.llm._emit_stream_chunk_event(
            chunk=chunk,
            from_task=call.from_task,
            from_agent=call.from_agent,
            call_type=LLMCallType.LLM_CALL,
            response_id=f"fake-{exchange.request.number}",
        )

    def _finish(self, call: _Call, exchange: Exchange, value: Any) -> Any:
        llm = call.llm
        request = exchange.request
        calls = tool_calls_of(value)
        if calls is not None:
            if request.data.get("react"):
                self._check_offered(call, exchange, calls)
                request.data["tool_calls"] = list(calls)
                value = shapes.react_action(calls, exchange.entry.label if exchange.entry else "")
            else:
                return self._tool_calls(call, exchange, calls)
        elif request.data.get("react") and isinstance(value, str):
            value = shapes.react_final(value)
        streamed = isinstance(value, Stream)
        # (the resolved reply: a callable reply may return a stream(...) too)
        chunk_count = len(value.chunks) if isinstance(value, Stream) else 0
        if isinstance(value, Stream):
            value = value.text
        elif not streamed and compat.effective_stream(llm) and isinstance(value, str):
            self._chunk(call, exchange, value)
        result = (
            shapes.structured(value, request)
            if request.response_model is not None
            else shapes.as_text(value)
        )
        if call.as_text and isinstance(result, BaseModel):
            result = result.model_dump_json()
        usage = self._usage(exchange, result)
        llm._track_token_usage_internal(usage)
        llm._emit_call_completed_event(
            response=result,
            call_type=LLMCallType.LLM_CALL,
            from_task=call.from_task,
            from_agent=call.from_agent,
            messages=call.messages,
            usage=usage,
            finish_reason="stop",
            response_id=f"fake-{request.number}",
        )
        if isinstance(result, str):
            result = llm._invoke_after_llm_call_hooks(
                llm._format_messages(call.messages), result, call.from_agent
            )
        exchange.reply = result
        summary: list[tuple[str, str]] = [("reply", shapes.summary(result))]
        if streamed:
            summary.append(("chunks", str(chunk_count)))
        self._record(call, request, tuple(summary))
        return result

    def _check_offered(self, call: _Call, exchange: Exchange, calls: list[ToolCall]) -> None:
        offered = exchange.request.tools or sorted(call.available_functions or {})
        check_offered(exchange, calls, offered)

    def _tool_calls(self, call: _Call, exchange: Exchange, calls: list[ToolCall]) -> Any:
        request = exchange.request
        request.data["tool_calls"] = list(calls)  # fake_llm.tool_calls reads them
        self._check_offered(call, exchange, calls)
        wire = [
            {
                "id": tool.id or f"call_{request.number}_{i}",
                "type": "function",
                "function": {"name": tool.name, "arguments": json.dumps(dict(tool.arguments))},
            }
            for i, tool in enumerate(calls, start=1)
        ]
        usage = self._usage(exchange, json.dumps(wire))
        call.llm._track_token_usage_internal(usage)
        summary = tools_summary(calls)
        if call.available_functions:
            # A caller that passes functions gets them run by the "provider", as
            # crewai's native providers do, and receives the first result.
            first = calls[0]
            result = call.llm._handle_tool_execution(
                function_name=first.name,
                function_args=dict(first.arguments),
                available_functions=call.available_functions,
                from_task=call.from_task,
                from_agent=call.from_agent,
            )
            exchange.reply = result
            self._record(call, request, (("tools", summary), ("result", render_value(result))))
            return result
        call.llm._emit_call_completed_event(
            response=wire,
            call_type=LLMCallType.TOOL_CALL,
            from_task=call.from_task,
            from_agent=call.from_agent,
            messages=call.messages,
            usage=usage,
            finish_reason="tool_calls",
            response_id=f"fake-{request.number}",
        )
        exchange.reply = wire
        self._record(call, request, (("tools", summary),))
        return wire

    def _fail(self, call: _Call, exchange: Exchange, exc: BaseException) -> None:
        if exchange.error is None:
            exchange.error = exc
        self._record(call, exchange.request, (("error", shapes.error_text(exc)),))
        call.llm._emit_call_failed_event(
            error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
            from_task=call.from_task,
            from_agent=call.from_agent,
        )

    def _usage(self, exchange: Exchange, result: Any) -> dict[str, int]:
        override = exchange.entry.options.get("usage") if exchange.entry else None
        prompt = shapes.tokens(shapes.all_text(exchange.request.messages))
        completion = shapes.tokens(
            result if isinstance(result, str) else shapes.summary(result, limit=10_000)
        )
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
        if override:
            usage.update({k: int(v) for k, v in override.items()})
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        usage.setdefault("successful_requests", 1)
        note_usage(str(exchange.caller.get("method", "")), tokens=usage["total_tokens"])
        return usage

    def _record(self, call: _Call, request: Request, outcome: tuple[tuple[str, str], ...]) -> None:
        if self.session is not None:
            self.session.record(llm_call_event(request, outcome))


def _latency(exchange: Exchange) -> float:
    seconds = float(exchange.entry.options.get("latency") or 0.0) if exchange.entry else 0.0
    note_usage(str(exchange.caller.get("method", "")), virtual_seconds=seconds)
    return seconds


class _VirtualRetry:
    """crewai's rate-limit retry policy, on virtual time and without jitter."""

    def __init__(self) -> None:
        self.attempt = 0
        self.last_error: BaseException | None = None

    def watch(self, attempt: Callable[[], Any]) -> Any:
        try:
            return attempt()
        except Exception as exc:
            self.last_error = exc
            raise

    def delay(self) -> float:
        self.attempt += 1
        hint = compat.retry_after_seconds(self.last_error) if self.last_error else None
        return float(
            get_retry_delay_seconds(
                self.attempt, retry_after_seconds=hint, random_value=lambda: 0.5
            )
        )


@contextlib.contextmanager
def install(session: FlowsSession, fake: Any) -> Iterator[None]:
    """Bind ``fake`` (an :class:`LLMScript`, or a :class:`FakeLLM`) for one test."""
    llm = fake if isinstance(fake, FakeLLM) else FakeLLM.create(session, fake)
    api = llm._require_core().api
    api.handles["crewai"] = llm.handle  # fake_llm.handle("gpt-4o"): the LLM crewai gets
    try:
        with (
            callers.tracking(),
            callers.tool_uses(session.record),
            route_constructor(llm),
            route_existing(llm),
        ):
            yield
    finally:
        api.handles.pop("crewai", None)
