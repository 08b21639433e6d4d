"""The ``human`` fixture's scripting side, shared by every framework's adapter.

:class:`ScriptedHuman` is what a test writes to (``answer``, ``pause``,
``timeout``, ``on``) and reads (``requests``); each framework's adapter turns
what its runtime asks a human into :class:`~pytest_flows._internal.fakes.script.Request` s
and answers them from ``script`` (crewai: ``@human_feedback`` and
``Flow.ask()``; Agent Framework: ``request_info``).

Request keys: ``caller`` has ``flow``, ``method``, ``kind`` (``feedback``,
``ask``, ...) and ``occurrence`` (1 for the first request of that kind from
that method, 2 for the next...); ``prompt`` is the message shown to the human.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.durations import check_duration
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.script import (
    Exchange,
    Match,
    Request,
    Rule,
    Script,
    ScriptedFake,
    ScriptError,
    ScriptReplyError,
    Times,
    code,
    short,
)
from pytest_flows._internal.trace import TraceEvent, render_value

if TYPE_CHECKING:
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.session import FlowsSession

__all__ = [
    "PAUSE",
    "TIMEOUT",
    "USE_PROVIDER",
    "Answer",
    "HumanRule",
    "ScriptedHuman",
    "is_pause",
    "occurrence",
]

_FIXTURE = "human"


@dataclass(frozen=True)
class Answer:
    """What the human says: ``text``, optionally the ``outcome`` it means, ``after``
    virtual seconds."""

    text: str = ""
    outcome: str | None = None
    after: float = 0.0

    def __post_init__(self) -> None:
        # An answer function may build its own Answer: same rule as answer(after=...).
        object.__setattr__(self, "after", check_duration("Answer(after=...)", self.after))


class _Pause:
    def __repr__(self) -> str:
        return "PAUSE"


class _Timeout:
    def __repr__(self) -> str:
        return "TIMEOUT"


class _UseProvider:
    def __repr__(self) -> str:
        return "USE_PROVIDER"


PAUSE: Any = _Pause()
TIMEOUT: Any = _Timeout()
#: ``use_provider()``: the flow's own feedback provider answers (the adapter calls it).
USE_PROVIDER: Any = _UseProvider()


def _label(value: Any) -> str:
    if value is PAUSE:
        return "pause()"
    if value is TIMEOUT:
        return "timeout()"
    if value is USE_PROVIDER:
        return "use_provider()"
    if isinstance(value, Answer):
        args = (
            [] if value.outcome is not None and value.text == value.outcome else [code(value.text)]
        )
        if value.outcome is not None:
            args.append(f"outcome={code(value.outcome)}")
        if value.after:
            args.append(f"after={value.after!r}")
        return f"answer({', '.join(args)})"
    function = getattr(value, "function", value)
    return f"answer(<{getattr(function, '__name__', 'callable')}>)"


def _message_pattern(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else ""
    plain = re.match(r"[\w ,'-]*", first)
    text = plain.group(0).strip() if plain else ""
    if len(text) >= 4:
        return json.dumps(text[:40].strip())
    return "r" + json.dumps(re.escape(first[:40]))


def _suggest(request: Request) -> str:
    caller = request.caller
    conditions = [f'method="{caller.get("method", "")}"']
    if caller.get("kind") in ("ask", "input"):
        conditions.append(f"message={_message_pattern(request.prompt)}")
    if caller.get("occurrence", 1) > 1:
        conditions.append(f"occurrence={caller['occurrence']}")
    emit = request.data.get("emit")
    answer = f'answer(outcome="{emit[0]}")' if emit else 'answer("...")'
    return f"{_FIXTURE}.on({', '.join(conditions)}).{answer}"


def _describe(request: Request) -> list[str]:
    lines = [f"message: {short(request.prompt, 100)}"]
    if request.caller.get("kind") == "feedback":
        lines.append(f"output under review: {short(request.data.get('output'), 100)}")
        emit = request.data.get("emit")
        if emit:
            lines.append(f"outcomes: {', '.join(emit)}")
    elif request.data.get("timeout") is not None:
        lines.append(f"timeout: {request.data['timeout']:g}s")
    return lines


class HumanRule(Rule["ScriptedHuman"]):
    """Answers for the requests :meth:`ScriptedHuman.on` described."""

    def answer(
        self,
        *texts: Any,
        outcome: str | None = None,
        after: float = 0.0,
        times: Times = 1,
        optional: bool = False,
    ) -> HumanRule:
        """Answer matching requests with ``texts`` in order (none: one empty answer)."""
        self._owner._answers(texts, outcome, after, self._match, times, optional)
        return self

    def pause(self, *, times: Times = 1, optional: bool = False) -> HumanRule:
        """Leave the feedback pending: the flow pauses (``HumanFeedbackPending``)."""
        self._owner._add(PAUSE, self._match, times, optional)
        return self

    def timeout(self, *, times: Times = 1, optional: bool = False) -> HumanRule:
        """Never answer ``ask(timeout=...)``: the timeout passes (virtually), ask returns None."""
        self._owner._add(TIMEOUT, self._match, times, optional)
        return self

    def use_provider(self, *, times: Times = 1, optional: bool = False) -> HumanRule:
        """Let the flow's own feedback provider answer matching ``@human_feedback``
        requests (to test the provider itself; its answer or pause is traced)."""
        self._owner._add(USE_PROVIDER, self._match, times, optional)
        return self


class ScriptedHuman(ScriptedFake):
    """Scripted human answers (the ``human`` fixture)."""

    def __init__(self, session: FlowsSession | None = None) -> None:
        super().__init__(session, _FIXTURE, "human request", "answer", _suggest, _describe)
        self._outcomes: dict[tuple[int, str], list[str]] = {}
        self._lock = threading.Lock()

    # -- scripting -------------------------------------------------------------
    def answer(
        self,
        *texts: Any,
        outcome: str | None = None,
        after: float = 0.0,
        times: Times = 1,
        optional: bool = False,
    ) -> ScriptedHuman:
        """Answer the next requests, in order, with ``texts`` (none: one empty answer).

        ``outcome`` names the ``emit`` outcome the answer means, so no LLM has
        to classify it (the text defaults to the outcome); ``""`` is the
        empty answer (the step's default outcome); ``after`` is how long the
        human takes, in virtual seconds. A callable ``f(request)`` may stand
        for a text.
        """
        self._answers(texts, outcome, after, None, times, optional)
        return self

    def pause(self, *, times: Times = 1, optional: bool = False) -> ScriptedHuman:
        """The next feedback request stays pending: the flow pauses."""
        self._add(PAUSE, None, times, optional)
        return self

    def timeout(self, *, times: Times = 1, optional: bool = False) -> ScriptedHuman:
        """The next ``ask(timeout=...)`` gets no answer in time (returns None)."""
        self._add(TIMEOUT, None, times, optional)
        return self

    def use_provider(self, *, times: Times = 1, optional: bool = False) -> ScriptedHuman:
        """The next feedback request goes to the flow's own provider (see
        :meth:`HumanRule.use_provider`)."""
        self._add(USE_PROVIDER, None, times, optional)
        return self

    def on(
        self,
        *,
        method: Any = None,
        message: str | re.Pattern[str] | Callable[[str], bool] | None = None,
        occurrence: Any = None,
        kind: Any = None,
        flow: Any = None,
        where: Callable[[Request], bool] | None = None,
    ) -> HumanRule:
        """Answers for matching requests: ``human.on(method="review").answer("ok")``.

        ``message`` is a regex searched in the message shown to the human;
        ``occurrence`` the n-th request of that method (1-based); ``kind`` is
        ``"feedback"``, ``"ask"`` or ``"input"`` (a bare ``input()`` in flow code).
        """
        if kind is not None and kind not in ("feedback", "ask", "input"):
            raise FlowsUsageError(
                f'human.on(kind={kind!r}): kind is "feedback", "ask" or "input" (a bare input()).'
            )
        given = {"flow": flow, "method": method, "kind": kind, "occurrence": occurrence}
        conditions = tuple((k, v) for k, v in given.items() if v is not None)
        if not conditions and message is None and where is None:
            raise FlowsUsageError(
                "human.on() needs at least one condition (method=, message=, occurrence=, "
                'kind=, flow= or where=); for answers in request order use human.answer("...").'
            )
        match = Match(caller=conditions, prompt=message, where=where, prompt_key="message")
        return HumanRule(self, match)

    def _answers(
        self,
        texts: tuple[Any, ...],
        outcome: str | None,
        after: float,
        match: Match | None,
        times: Times,
        optional: bool,
    ) -> None:
        after = check_duration("answer(after=...)", after)
        if outcome is not None and not isinstance(outcome, str):
            raise FlowsUsageError(
                f"answer(outcome={outcome!r}): an outcome is one of the step's emit labels (str)."
            )
        values = texts or (None,)
        for text in values:
            if callable(text):
                value: Any = _CallableAnswer(text, outcome, float(after))
            elif text is None or isinstance(text, str):
                value = Answer(
                    text=text if text is not None else (outcome or ""),
                    outcome=outcome,
                    after=float(after),
                )
            else:
                raise FlowsUsageError(
                    f"human.answer({text!r}): an answer is text (str), or a callable f(request) "
                    "returning text; use outcome=... for a routing outcome."
                )
            self._add(value, match, times, optional)

    def _add(self, value: Any, match: Match | None, times: Times, optional: bool) -> None:
        prefix = _FIXTURE if match is None else f"{_FIXTURE}.on({match.describe()})"
        label = _label(value)
        if times != 1:
            label = label[:-1] + ("" if label.endswith("(") else ", ") + f"times={code(times)})"
        self.script.add(
            value, match=match, times=times, optional=optional, label=f"{prefix}.{label}"
        )

    # -- reading ----------------------------------------------------------------
    @property
    def requests(self) -> list[Exchange]:
        """Every request so far (``.caller``, ``.prompt`` = the message, ``.reply``)."""
        return list(self.script.exchanges)

    def resume(self, paused: Any, feedback: str = "", *, outcome: str | None = None) -> FlowRun:
        """Resume a paused flow with ``feedback``; returns the resumed run.

        ``paused`` is the paused ``FlowRun`` or the paused flow; what resuming
        means is the framework adapter's (crewai: the flow is restored with
        ``from_pending``, as a webhook handler would, or pass a flow restored
        with ``Flow.from_pending(flow_id)``). ``outcome`` routes without the
        LLM that would classify ``feedback``.
        """
        if self.session is not None:
            # The session resumes (it knows runs and adapters): a fake drives no run.
            return self.session._resume_human(self, paused, feedback, outcome)
        from pytest_flows._internal.contract.adapters import imported_adapters

        for adapter in imported_adapters():
            # A paused FlowRun is taken by the adapter of the flow it ran.
            if adapter.accepts(paused) or adapter.accepts(getattr(paused, "flow", None)):
                return adapter.resume_human(None, self, paused, feedback, outcome)
        raise FlowsUsageError(
            f"human.resume({type(paused).__name__}): no framework adapter takes it; "
            "pass the paused FlowRun that flows.run() returned."
        )

    # -- answering --------------------------------------------------------------------
    def occurrence(self, caller: dict[str, Any]) -> int:
        return occurrence(self.script, caller)

    def request(
        self, flow: str, kind: str, method: str, message: str, data: dict[str, Any]
    ) -> Request:
        """A request of ``kind`` from ``flow``'s ``method``, numbered by occurrence."""
        caller: dict[str, Any] = {}
        if flow:
            caller["flow"] = flow
        if method:
            caller["method"] = method
        caller["kind"] = kind
        caller["occurrence"] = self.occurrence(caller)
        return Request(caller=caller, prompt=str(message or ""), purpose=kind, data=data)

    def take(self, request: Request) -> Exchange:
        try:
            return self.script.take(request)
        except ScriptError as exc:
            kind = {"feedback": "human.feedback", "input": "human.input"}.get(
                str(request.caller.get("kind")), "human.ask"
            )
            self.trace_error(kind, request.caller.get("method", ""), request.prompt, exc)
            raise

    def resolve(self, exchange: Exchange) -> Any:
        value = exchange.resolve()
        if isinstance(value, _CallableAnswer):
            text = value.function(exchange.request)
            if isinstance(text, BaseException):
                raise text
            if isinstance(text, Answer):
                return text
            if text is not None and not isinstance(text, str):
                raise ScriptReplyError(
                    f"pytest-flows: the answer function in {entry_label(exchange)} returned "
                    f"{text!r}; it must return text (str), None (timeout for ask) or an Answer."
                )
            if text is None:
                return TIMEOUT
            return Answer(
                text=text or (value.outcome or ""), outcome=value.outcome, after=value.after
            )
        return value

    def check_outcome(self, outcome: str, emit: Any, where: str) -> None:
        if not emit:
            raise ScriptReplyError(
                f"pytest-flows: {where} names outcome {outcome!r}, but the @human_feedback step "
                "has no emit=[...] outcomes to route on. Drop outcome=."
            )
        if outcome not in emit:
            raise ScriptReplyError(
                f"pytest-flows: {where} names outcome {outcome!r}, which the step does not emit; "
                f"its outcomes are {', '.join(emit)}."
            )

    def decide(self, flow: Any, feedback: str, outcome: str) -> None:
        with self._lock:
            self._outcomes.setdefault((id(flow), feedback.strip()), []).append(outcome)

    def decided_outcome(self, flow: Any, feedback: str, outcomes: Any) -> str | None:
        with self._lock:
            queue = self._outcomes.get((id(flow), str(feedback).strip()))
            if not queue:
                return None
            return queue.pop(0)

    def wait(self, seconds: float) -> None:
        if seconds and self.session is not None:
            self.session.clock.advance(seconds)

    def trace(
        self,
        kind: str,
        method: str,
        message: str,
        answer: str | None,
        outcome: str | None,
        *,
        paused: bool = False,
        timed_out: float | None = None,
    ) -> None:
        fields: list[tuple[str, str]] = [("message", render_value(message, limit=80))]
        if paused:
            fields.append(("answer", "<paused>"))
        elif timed_out is not None:
            fields.append(("answer", f"<timeout after {timed_out:g}s>"))
        else:
            fields.append(("answer", render_value(answer, limit=80)))
        if outcome is not None:
            fields.append(("outcome", outcome))
        self.record(TraceEvent(kind=kind, name=str(method or "-"), fields=tuple(fields)))

    def trace_error(self, kind: str, method: str, message: str, exc: BaseException) -> None:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        fields = (
            ("message", render_value(message, limit=80)),
            ("error", render_value(first, limit=100)),
        )
        self.record(TraceEvent(kind=kind, name=str(method or "-"), fields=fields))

    def record(self, event: TraceEvent) -> None:
        if self.session is not None:
            self.session.record(event)


@dataclass(frozen=True)
class _CallableAnswer:
    function: Callable[[Request], Any]
    outcome: str | None
    after: float

    def __call__(self, request: Request) -> _CallableAnswer:
        # The script calls callables with the request; this one defers to _resolve.
        return self


def occurrence(script: Script, caller: dict[str, Any]) -> int:
    """Which request of its ``kind`` from this flow's method ``caller`` is (1 for the first)."""
    return 1 + sum(
        1
        for exchange in script.exchanges
        if exchange.caller.get("kind") == caller["kind"]
        and exchange.caller.get("method") == caller.get("method")
        and exchange.caller.get("flow") == caller.get("flow")
    )


def is_pause(value: Any) -> bool:
    """Whether a scripted answer leaves the request pending (``pause()``)."""
    return value is PAUSE


def entry_label(exchange: Exchange) -> str:
    return exchange.entry.label if exchange.entry is not None else "the script"


def _flow_name(flow: Any) -> str:
    definition = getattr(flow, "_definition", None)
    name = getattr(definition, "name", None)
    return str(name or type(flow).__name__) if flow is not None else ""
