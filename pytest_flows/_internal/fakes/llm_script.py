"""The scripting side of the fake LLM, shared by every framework's fake.

:class:`LLMScript` is what a test writes to (``reply``, ``on``) and reads
(``calls``); a framework's fake LLM builds :class:`~pytest_flows._internal.fakes.script.Request`
s from what its runtime asks and answers them from ``script``.

Request keys for LLM calls: ``caller`` has ``flow``, ``method`` (the flow
method the call happens in), ``agent`` (role), ``task``, ``purpose`` and
``model``; ``prompt`` is the text of the last user message; ``messages``,
``tools`` (names) and ``response_model`` are what the caller passed.

Purposes: ``agent`` (an agent's reasoning or tool loop), ``feedback``
(classifying human feedback into an outcome), ``router`` (a conversational
router), ``intent`` (intent classification), ``converse`` and ``history``
(conversational replies), ``learn`` and ``memory`` (lessons and memory
analysis), ``call`` (any other direct ``llm.call``).
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from pytest_flows._internal.durations import check_duration
from pytest_flows._internal.fakes.replies import Stream, ToolCall
from pytest_flows._internal.fakes.script import (
    ALWAYS,
    Exchange,
    Match,
    Request,
    Rule,
    ScriptedFake,
    ScriptReplyError,
    Times,
    code,
    plain,
)
from pytest_flows._internal.fakes.trajectory import Calls
from pytest_flows._internal.trace import TraceEvent

__all__ = [
    "CALLER_KEYS",
    "PURPOSES",
    "LLMRule",
    "LLMScript",
    "check_offered",
    "llm_call_event",
    "tool_calls_of",
    "tools_summary",
]

CALLER_KEYS = ("flow", "method", "agent", "task", "purpose", "model")
PURPOSES = (
    "agent",
    "feedback",
    "router",
    "intent",
    "converse",
    "history",
    "learn",
    "memory",
    "call",
)

_FIXTURE = "fake_llm"


def reply_label(value: Any) -> str:
    if isinstance(value, ToolCall):
        return _tool_label(value)
    if isinstance(value, list) and value and all(isinstance(v, ToolCall) for v in value):
        return "[" + ", ".join(_tool_label(v) for v in value) + "]"
    if isinstance(value, Stream):
        return "stream([" + ", ".join(code(c) for c in value.chunks) + "])"
    if isinstance(value, BaseModel):
        return f"{type(value).__name__}(...)"
    if callable(value) and not isinstance(value, type):
        return f"<{getattr(value, '__name__', 'callable')}>"
    return code(value)


def _tool_label(call: ToolCall) -> str:
    args = ", ".join(f"{k}={code(v)}" for k, v in call.arguments.items())
    return f'call_tool("{call.name}"{", " if args else ""}{args})'


def placeholder(response_model: Any, outcomes: list[str] | None = None) -> str:
    """Source text of a reply that fits ``response_model`` (for suggestions)."""
    if response_model is None:
        return '"..."'
    fields = getattr(response_model, "model_fields", None)
    if not fields:
        return '"..."'
    parts = []
    for name, info in fields.items():
        parts.append(f'"{name}": {_placeholder_value(info.annotation, outcomes)}')
    return "{" + ", ".join(parts) + "}"


def _placeholder_value(annotation: Any, outcomes: list[str] | None) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        choices = typing.get_args(annotation)
        return repr(choices[0]).replace("'", '"') if choices else '"..."'
    if annotation is str:
        return f'"{outcomes[0]}"' if outcomes else '"..."'
    if annotation is bool:
        return "False"
    if annotation is int:
        return "0"
    if annotation is float:
        return "0.0"
    if origin in (list, tuple, set):
        return "[]"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "{}"
    return '"..."'


def suggest(request: Request) -> str:
    """The line that would answer ``request`` in a test."""
    caller = request.caller
    value = placeholder(
        request.response_model, request.data.get("outcomes") or request.data.get("routes")
    )
    if request.tools and request.response_model is None:
        value = '"..."'
    purpose = caller.get("purpose")
    if purpose not in (None, "agent", "call"):
        condition = f'purpose="{purpose}"'
        if caller.get("method"):
            condition = f'method="{caller["method"]}", {condition}'
        return f"{_FIXTURE}.on({condition}).reply({value})"
    if caller.get("agent"):
        return f"{_FIXTURE}.on(agent={caller['agent']!r}).reply({value})".replace("'", '"')
    if caller.get("method"):
        return f'{_FIXTURE}.on(method="{caller["method"]}").reply({value})'
    return f"{_FIXTURE}.reply({value})"


def describe(request: Request) -> list[str]:
    where = "the user's message" if request.data.get("routes") is not None else "last user message"
    lines = [f"prompt ({where}):"]
    text = request.prompt or "(none)"
    body = text.splitlines() or [""]
    if len(body) > 12:
        body = [*body[:12], f"... ({len(body) - 12} more lines)"]
    lines.extend(f"  | {line}" for line in body)
    if request.tools:
        lines.append(
            f'tools: {", ".join(request.tools)} (reply call_tool("{request.tools[0]}", ...) '
            "to call one)"
        )
    if request.response_model is not None:
        lines.append(
            f"response model: {getattr(request.response_model, '__name__', request.response_model)}"
        )
    if request.data.get("outcomes"):
        lines.append(f"outcomes: {', '.join(request.data['outcomes'])}")
    if request.data.get("routes"):
        lines.append(f"routes: {', '.join(request.data['routes'])}")
    return lines


class LLMRule(Rule["LLMScript"]):
    """Replies that answer only the calls :meth:`LLMScript.on` described."""

    def reply(
        self,
        *values: Any,
        times: Times = 1,
        optional: bool = False,
        latency: float = 0.0,
        usage: dict[str, int] | None = None,
    ) -> LLMRule:
        """Answer matching calls with ``values`` in order (each ``times`` times)."""
        self._owner._add(values, self._match, times, optional, latency, usage)
        return self


class LLMScript(ScriptedFake):
    """What a test scripts for the LLM, and the ledger of every call."""

    def __init__(self) -> None:
        # No session: the script is the same in every framework; each adapter's
        # bind_llm gives its calls virtual time and a trace.
        super().__init__(None, _FIXTURE, "LLM call", "reply", suggest, describe)
        #: Models (None: every model) answered as if they had no native function calling.
        self.text_tool_models: set[str | None] = set()
        #: framework -> f(model) giving that framework's LLM object on this script;
        #: each adapter's bind_llm adds its own.
        self.handles: dict[str, Callable[[str], Any]] = {}

    def reply(
        self,
        *values: Any,
        times: Times = 1,
        optional: bool = False,
        latency: float = 0.0,
        usage: dict[str, int] | None = None,
    ) -> LLMScript:
        """Answer the next calls, in order, with ``values``.

        A value is text, a dict / pydantic model (structured output), a
        ``call_tool(...)`` or a list of them, a ``stream(...)``, an exception
        to raise, or a callable ``f(request)`` returning one of those.
        ``latency`` is virtual seconds the call takes; ``usage`` overrides
        the token counts (``{"prompt_tokens": 10, "completion_tokens": 5}``).
        """
        self._add(values, None, times, optional, latency, usage)
        return self

    def on(
        self,
        *,
        flow: Any = None,
        method: Any = None,
        agent: Any = None,
        task: Any = None,
        purpose: Any = None,
        model: Any = None,
        prompt: str | re.Pattern[str] | Callable[[str], bool] | None = None,
        where: Callable[[Request], bool] | None = None,
    ) -> LLMRule:
        """Replies for the calls that match: ``fake_llm.on(agent="Researcher").reply("...")``.

        Each condition is a value, a compiled regex or a predicate; ``prompt``
        is a regex searched in the last user message; ``where`` sees the
        whole request (``r.messages``, ``r.tools``, ``r.response_model``).
        """
        given = {
            "flow": flow,
            "method": method,
            "agent": agent,
            "task": task,
            "purpose": purpose,
            "model": model,
        }
        if isinstance(purpose, str) and purpose not in PURPOSES:
            raise _usage(
                f"fake_llm.on(purpose={purpose!r}): unknown purpose; "
                f"it is one of {', '.join(PURPOSES)}."
            )
        caller = tuple((k, v) for k, v in given.items() if v is not None)
        if not caller and prompt is None and where is None:
            raise _usage(
                "fake_llm.on() needs at least one condition (method=, agent=, task=, "
                "purpose=, model=, flow=, prompt= or where=); for replies in call order "
                'use fake_llm.reply("...") directly.'
            )
        return LLMRule(self, Match(caller=caller, prompt=prompt, where=where))

    def _add(
        self,
        values: tuple[Any, ...],
        match: Match | None,
        times: Times,
        optional: bool,
        latency: float,
        usage: dict[str, int] | None,
    ) -> None:
        if not values:
            raise _usage(
                'reply() needs at least one value: fake_llm.reply("text"), '
                'fake_llm.reply({"field": 1}), fake_llm.reply(call_tool("search", q="x")).'
            )
        latency = check_duration("reply(latency=...)", latency)
        usage = _check_usage(usage)
        for value in values:
            _check_reply(value)
        self._script_each(
            values,
            match,
            times,
            optional,
            lambda value, extra: f"reply({reply_label(value)}{extra})",
            {"latency": latency, "usage": usage},
        )

    def auto(self, seed: int = 0) -> LLMScript:
        """Answer every call no scripted reply matches with a schema-valid reply.

        Tools offered are each called once (arguments from their schemas), then
        the call is answered: a valid instance of the structured output model,
        one of the offered outcomes or routes, or the text ``"auto reply"``.
        Scripted replies and rules still win; the calls stay in :attr:`calls`.
        ``seed`` picks among enum members, outcomes and routes.
        """
        from pytest_flows._internal.fakes.auto_reply import AutoReply

        reply = AutoReply(seed)
        if any(entry.fallback for entry in self.script.entries):
            raise _usage("fake_llm.auto() is already on for this test; call it once.")
        self.script.add(
            reply,
            times=ALWAYS,
            optional=True,
            label=f"{_FIXTURE}.auto(seed={seed})",
            options={"latency": 0.0, "usage": None},
            fallback=True,
        )
        return self

    @property
    def calls(self) -> Calls[Exchange]:
        """Every call so far: ``.messages``, ``.tools``, ``.response_model``,
        ``.caller``, ``.prompt``, ``.reply`` / ``.error``.

        ``calls.match([...], mode=...)`` checks them as a trajectory
        (:mod:`pytest_flows._internal.fakes.trajectory`).
        """
        return Calls(self.script.exchanges, noun="LLM call")

    @property
    def tool_calls(self) -> Calls[ToolCall]:
        """Every tool call the model asked for (scripted or ``auto()``), in order."""
        return Calls(
            (
                call
                for exchange in self.script.exchanges
                for call in exchange.data.get("tool_calls", [])
            ),
            noun="tool call",
        )

    def text_tools(self, model: str | None = None) -> LLMScript:
        """Answer like a model without native function calling (all, or ``model`` only).

        A framework that has a text tool loop (crewai's ``Action:`` /
        ``Observation:``) then runs it: a scripted ``call_tool(...)`` becomes
        its action text, a text reply its final answer.
        """
        self.text_tool_models.add(model)
        return self

    def native_tools(self, model: str) -> bool:
        """Whether calls to ``model`` get native function calling (see :meth:`text_tools`)."""
        return None not in self.text_tool_models and model not in self.text_tool_models

    def handle(self, model: str = "fake-llm", *, framework: str | None = None) -> Any:
        """The framework's LLM object answered by this script, as code asking for ``model``
        gets it (``Agent(llm=fake_llm.handle("gpt-4o"))``).

        ``framework`` picks one when more than one framework is bound in the test.
        """
        if framework is None and len(self.handles) == 1:
            framework = next(iter(self.handles))
        make = self.handles.get(framework) if framework is not None else None
        if make is None:
            bound = ", ".join(sorted(self.handles)) or "none yet"
            raise _usage(
                f"fake_llm.handle({model!r}"
                + (f", framework={framework!r}" if framework is not None else "")
                + f"): the frameworks bound to this fake_llm are: {bound}. Import the flow's "
                "framework before asking for a handle, and pass framework=... when the test "
                "uses more than one."
            )
        return make(model)


#: Token counts ``reply(usage=...)`` may set; ``total_tokens`` is always their sum.
USAGE_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "reasoning_tokens",
    "cache_creation_tokens",
    "successful_requests",
)


# -- what every framework's fake does with a reply ------------------------------------
def tool_calls_of(value: Any) -> list[ToolCall] | None:
    """The tool calls a reply asks for (``call_tool(...)`` or a list of them), else None."""
    calls = [value] if isinstance(value, ToolCall) else value
    if isinstance(calls, list | tuple) and calls and all(isinstance(c, ToolCall) for c in calls):
        return list(calls)
    return None


def check_offered(exchange: Exchange, calls: Sequence[ToolCall], offered: Sequence[str]) -> None:
    """Refuse a scripted call to a tool the caller did not offer (a typo in the test)."""
    request = exchange.request
    for call in calls:
        if call.name in offered:
            continue
        where = (
            f"it offered: {', '.join(offered)}"
            if offered
            else "it offered no tools (give the agent tools=[...])"
        )
        label = exchange.entry.label if exchange.entry is not None else "the script"
        raise ScriptReplyError(
            f"pytest-flows: LLM call #{request.number} (caller: {request.describe_caller()}) "
            f"got a scripted call to tool {call.name!r}, but {where}. Fix the name in {label}."
        )


def tools_summary(calls: Sequence[ToolCall]) -> str:
    """The ``tools`` field of an ``llm.call`` trace line."""
    return ", ".join(f"{c.name}({json.dumps(dict(c.arguments), sort_keys=True)})" for c in calls)


def llm_call_event(
    request: Request,
    outcome: Sequence[tuple[str, str]],
    *,
    keys: Sequence[str] = ("agent", "task", "model"),
    render: Callable[[Any], str] = plain,
) -> TraceEvent:
    """The ``llm.call`` trace line of one call: who asked (``purpose``, then ``keys`` of
    the caller the framework knows) and ``outcome`` (reply, tools, error...)."""
    caller = request.caller
    fields: list[tuple[str, str]] = [("purpose", str(caller.get("purpose")))]
    fields.extend((key, render(caller[key])) for key in keys if key in caller)
    return TraceEvent(
        kind="llm.call", name=str(caller.get("method", "-")), fields=(*fields, *outcome)
    )


def _check_usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    example = '{"prompt_tokens": 10, "completion_tokens": 5}'
    if not isinstance(usage, dict):
        raise _usage(
            f"reply(usage={usage!r}): usage is a dict of token counts, e.g. usage={example}."
        )
    for key, count in usage.items():
        if key not in USAGE_KEYS:
            computed = " (it is always prompt_tokens + completion_tokens)"
            raise _usage(
                f"reply(usage={{{key!r}: ...}}): {key!r} is not a token count the fake sets"
                + (computed if key == "total_tokens" else "")
                + f"; use {', '.join(USAGE_KEYS)}, e.g. usage={example}."
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _usage(
                f"reply(usage={{{key!r}: {count!r}}}): a token count is a whole number >= 0, "
                f"e.g. usage={example}."
            )
    return dict(usage)


def _check_reply(value: Any) -> None:
    """Refuse a reply no model could give (``reply(42)`` is most likely a typo)."""
    if isinstance(value, str | dict | list | tuple | BaseModel | ToolCall | Stream):
        return
    if isinstance(value, BaseException) or (
        isinstance(value, type) and issubclass(value, BaseException)
    ):
        return
    if callable(value) and not isinstance(value, type):
        return
    # A framework's own object (a ``ChatResponse``, say) is a native reply of that
    # framework's fake, which checks it; the frameworks are the registry's.
    from pytest_flows._internal.contract.registry import adapter_specs

    module = type(value).__module__
    if module.split(".", 1)[0] in {spec.framework for spec in adapter_specs()}:
        return
    shown = "None" if value is None else f"{value!r} ({type(value).__name__})"
    number = isinstance(value, int | float)
    text = f"; for the text write reply({json.dumps(str(value))})" if number else ""
    raise _usage(
        f"{_FIXTURE}.reply({shown}): a model replies with text, structured output (a dict or "
        "pydantic model), call_tool(...), stream(...), an exception to raise, or a callable "
        f"f(request) returning one of those{text}."
    )


def _usage(message: str) -> Exception:
    from pytest_flows._internal.errors import FlowsUsageError

    return FlowsUsageError(message)


# Re-exported for the fakes' signatures.
__all__ += ["ALWAYS"]
