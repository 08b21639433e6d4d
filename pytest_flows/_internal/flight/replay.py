"""``flows.replay(record, Flow)``: a recorded production run, on today's code, on the harness.

Every LLM call is answered from the record (matched by the flow method that made it
and its position among that method's calls, with the recorded wall-clock latency as
virtual latency, so orders that production's timing decided come back). While it
runs, the framework's recorder part records the replay in memory; the two records
are compared: the first request whose prompt differs (with a diff), a method or
route that differs, the order of methods, the outcome. If the recorded order of
method starts and finishes does not come back at the session's seed, the other
seeds are tried (the scheduler's choices); when none gives it, the report says the
scheduler could not express the recorded interleaving.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib
import inspect
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_flows._internal.errors import FlowsError, FlowsUsageError
from pytest_flows._internal.flight.capture import FlightRecorder, RunRecording
from pytest_flows._internal.flight.format import Record, RecordError, jsonable, read_record
from pytest_flows._internal.identity import Normalizer
from pytest_flows._internal.llm_script import LLMScript
from pytest_flows._internal.replies import ProviderError, ToolCall
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.schedule import Chooser, encode
from pytest_flows._internal.script import ALWAYS
from pytest_flows._internal.seeding import reseeded
from pytest_flows._internal.trace import Trace, TraceEvent, render_value

__all__ = ["Divergence", "ReplayDivergenceError", "ReplayResult", "replay"]

#: framework -> the recorder part that can record a replay in memory (``shadow(run)``).
_SHADOWS = {
    "crewai": "pytest_flows.recorder._crewai",
    "agent_framework": "pytest_flows.recorder._agent_framework",
}
_ORDER_KINDS = ("method.started", "method.finished", "method.failed")


class ReplayDivergenceError(FlowsError):
    """Today's code did not do what the recorded run did."""


@dataclass
class Divergence:
    """One way the replay differs from the record; ``seq`` is where in the record."""

    kind: str  # prompt, request, unused, tool, state, method, output, order, outcome
    where: str
    message: str
    diff: str = ""
    seq: int = 0

    def __str__(self) -> str:
        text = f"[{self.kind}] {self.where}: {self.message}"
        return text + ("\n" + self.diff if self.diff else "")


@dataclass
class ReplayResult:
    """What ``flows.replay`` returns: the run, and how it differs from the record."""

    record: Record
    run: FlowRun
    divergences: list[Divergence] = field(default_factory=list)
    #: How the recorded interleaving was rebuilt (or why it could not be).
    interleaving: str = ""
    seed: int = 0
    #: The schedule that rebuilt the recorded order (``flows.run(..., schedule=...)``).
    schedule: str | None = None
    recorded_trace: Trace = field(default_factory=Trace)
    replayed_trace: Trace = field(default_factory=Trace)

    @property
    def diverged(self) -> bool:
        return bool(self.divergences)

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    def report(self) -> str:
        head = f"replay of {self.record.path.name} ({self.record.target}, run {self.record.run_id})"
        if not self.divergences:
            return f"{head}: no divergence. {self.interleaving}"
        lines = [f"{head}: {len(self.divergences)} divergence(s), first:", str(self.divergences[0])]
        lines += [f"  also: [{d.kind}] {d.where}: {d.message}" for d in self.divergences[1:6]]
        if self.interleaving:
            lines.append(self.interleaving)
        return "\n".join(lines)

    def check(self) -> FlowRun:
        """The run, or :class:`ReplayDivergenceError` with the report if it diverged."""
        if self.divergences:
            raise ReplayDivergenceError(self.report())
        return self.run


# -- the record's LLM calls ----------------------------------------------------------------
@dataclass
class _Call:
    method: str
    messages: Any
    tools: list[str]
    answer: Any
    latency: float
    seq: int
    number: int  # 1-based among its method's calls


def _calls(record: Record) -> list[_Call]:
    # A crew is answered whole from the record: its agents' own model calls are not made.
    crews = bool(record.of_kind("crew.finished", "crew.failed"))
    requests: dict[str, dict[str, Any]] = {}
    # The tools an LLM call ran itself (crewAI's ``available_functions``), by call id.
    ran: dict[str, list[dict[str, Any]]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    calls: list[_Call] = []
    for entry in record.entries:
        kind = entry.get("kind")
        if kind == "llm.request":
            requests[str(entry.get("call_id"))] = entry
        elif kind == "tool.started":
            for call_id, asked in requests.items():
                if asked.get("thread") == entry.get("thread") and not entry.get("agent"):
                    ran[call_id].append(entry)
        elif kind in ("llm.response", "llm.failed"):
            call_id = str(entry.get("call_id"))
            request = requests.pop(call_id, None)
            tools_run = ran.pop(call_id, [])
            if request is None or (crews and request.get("agent")):
                continue
            method = str(request.get("method") or "")
            counts[method] += 1
            answer = _answer(entry)
            if (
                tools_run
                and entry.get("call_type", "tool_call") == "tool_call"
                and entry.get("response_type") != "tool_calls"
            ):
                # The provider asked for the tools and the LLM call ran them: today's
                # code gets the tool calls, and the tools are answered from the record.
                answer = [
                    ToolCall(str(t.get("tool")), _arguments(t.get("args"))) for t in tools_run
                ]
            calls.append(
                _Call(
                    method=method,
                    messages=request.get("messages"),
                    tools=list(request.get("tools") or []),
                    answer=answer,
                    latency=max(0.0, float(entry.get("t", 0)) - float(request.get("t", 0))),
                    seq=int(request.get("seq", 0)),
                    number=counts[method],
                )
            )
    return calls


def _answer(entry: dict[str, Any]) -> Any:
    if entry.get("kind") == "llm.failed":
        return ProviderError(str(entry.get("error") or "provider error"))
    response = entry.get("response")
    kind = entry.get("response_type")
    if kind == "tool_calls" and isinstance(response, list):
        calls = []
        for call in response:
            arguments = call.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments or "{}")
                except ValueError:
                    arguments = {"input": arguments}
            calls.append(ToolCall(str(call.get("name")), dict(arguments or {}), call.get("id")))
        return calls
    if kind == "structured" and isinstance(response, dict):
        return response
    return "" if response is None else str(response)


def _arguments(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict (a text tool call's JSON string parsed; other text kept)."""
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except ValueError:
            return {"input": value}
    return dict(value) if isinstance(value, dict) else {"input": value}


def _given(answer: Any) -> Any:
    """A recorded answer as today's code gets it: a recorded error is raised."""
    if isinstance(answer, BaseException):
        raise answer
    return answer


def render_messages(messages: Any) -> str:
    """Messages as reviewable text: ``[n role]`` then the content, indented."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    lines = []
    for number, message in enumerate(messages or [], 1):
        if not isinstance(message, dict):
            message = {"role": "?", "content": getattr(message, "content", message)}
        lines.append(f"[{number} {message.get('role', '?')}]")
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
        lines += [f"  {line}" for line in str(text).splitlines() or [""]]
    return "\n".join(lines)


def _plain_messages(messages: Any) -> Any:
    """Messages as JSON data: dicts kept, message objects (``role`` and ``text`` or
    ``content``, as Agent Framework's) as ``{"role", "content"}``."""
    if isinstance(messages, str):
        return messages
    plain = []
    for message in messages or []:
        if isinstance(message, dict):
            plain.append(message)
            continue
        role = getattr(message, "role", "?")
        text = getattr(message, "text", None)
        if text is None:
            text = getattr(message, "content", message)
        plain.append({"role": str(getattr(role, "value", role)), "content": str(text)})
    return json.loads(json.dumps(plain, default=str))


class _Answers:
    """The record's LLM calls as fake_llm rules, for one replay attempt."""

    def __init__(self, calls: list[_Call]) -> None:
        self.calls = calls
        self.attempt = 0
        self.divergences: list[Divergence] = []
        self.used: set[int] = set()

    def install(self, fake: LLMScript, attempt: int) -> None:
        self.attempt, self.divergences, self.used = attempt, [], set()
        by_method: dict[str, list[_Call]] = defaultdict(list)
        for call in self.calls:
            by_method[call.method].append(call)

        def now(request: Any, k: int = attempt) -> bool:
            return self.attempt == k

        for method, calls in by_method.items():
            rule = fake.on(method=method, where=now) if method else fake.on(where=now)
            for call in calls:
                rule.reply(self._answerer(call), optional=True, latency=call.latency)
        # Anything else (a request the record does not have) fails the run, reported.
        fake.on(where=now).reply(self._unrecorded, times=ALWAYS, optional=True)

    def current(self, attempt: int) -> Callable[[Any], bool]:
        """A ``where=`` condition: true only during replay attempt ``attempt``."""

        def now(request: Any) -> bool:
            return self.attempt == attempt

        return now

    def _answerer(self, call: _Call) -> Callable[[Any], Any]:
        def answer(request: Any) -> Any:
            self.used.add(call.seq)
            recorded = render_messages(_plain_messages(call.messages))
            now = render_messages(_plain_messages(request.messages))
            where = f"LLM call {call.number} of method {call.method or '(none)'}"
            if recorded != now:
                diff = "\n".join(
                    difflib.unified_diff(
                        recorded.splitlines(),
                        now.splitlines(),
                        "recorded",
                        "now",
                        lineterm="",
                    )
                )
                self.divergences.append(
                    Divergence(
                        "prompt", where, "the prompt differs from the record", diff, call.seq
                    )
                )
            elif sorted(call.tools) != sorted(request.tools or []):
                self.divergences.append(
                    Divergence(
                        "prompt",
                        where,
                        f"tools offered were {call.tools}, now {list(request.tools or [])}",
                        seq=call.seq,
                    )
                )
            return _given(call.answer)

        return answer

    def _unrecorded(self, request: Any) -> Any:
        method = (request.caller or {}).get("method", "(none)")
        message = f"an LLM call the record does not have (method {method})"
        prompt = render_messages(_plain_messages(request.messages))
        self.divergences.append(Divergence("request", f"method {method}", message, prompt, 10**9))
        raise ReplayDivergenceError(f"pytest-flows replay: {message}:\n{prompt}")

    def unused(self) -> list[Divergence]:
        return [
            Divergence(
                "unused",
                f"LLM call {call.number} of method {call.method or '(none)'}",
                "the record has this call; today's code did not make it",
                seq=call.seq,
            )
            for call in self.calls
            if call.seq not in self.used
        ]


@dataclass
class _ToolCall:
    method: str
    tool: str
    args: dict[str, Any]
    answer: Any
    seq: int
    number: int  # 1-based among this method's calls of this tool

    @property
    def where(self) -> str:
        return f"tool call {self.number} of {self.tool} in method {self.method or '(none)'}"


def _tool_calls(record: Record) -> list[_ToolCall]:
    # A crew is answered whole from the record: its agents' tools are not called.
    crews = bool(record.of_kind("crew.finished", "crew.failed"))
    pending: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    calls: list[_ToolCall] = []
    for entry in record.entries:
        kind = entry.get("kind")
        key = (entry.get("thread"), entry.get("tool"))
        if kind == "tool.started":
            pending[key].append(entry)
        elif kind in ("tool.finished", "tool.failed") and pending[key]:
            started = pending[key].pop(0)
            if crews and started.get("agent"):
                continue
            method, tool = str(started.get("method") or ""), str(started.get("tool"))
            counts[(method, tool)] += 1
            answer: Any = entry.get("output")
            if kind == "tool.failed":
                answer = RuntimeError(str(entry.get("error")))
            calls.append(
                _ToolCall(
                    method,
                    tool,
                    _arguments(started.get("args")),
                    answer,
                    int(started.get("seq", 0)),
                    counts[(method, tool)],
                )
            )
    return calls


class _Tools:
    """The record's tool calls as ``fake_tools`` rules, for one replay attempt."""

    def __init__(self, record: Record) -> None:
        self.calls = _tool_calls(record)
        self.fake: Any = None
        self.divergences: list[Divergence] = []
        self.used: set[int] = set()

    def install(self, session: Any, now: Callable[[Any], bool]) -> None:
        from pytest_flows._internal.script import Match
        from pytest_flows._internal.tool_script import FakeTools, ToolRule

        self.divergences, self.used = [], set()
        fake = session.bound("tools")
        if fake is None:
            fake = FakeTools(session)
            session.bind("tools", fake)
        self.fake = fake
        for call in self.calls:
            rule = fake.on(call.tool, method=call.method or None, where=now)
            rule.reply(self._answerer(call), optional=True)
        # A tool call the record does not have fails the run, reported.
        ToolRule(fake, Match(where=now)).reply(self._unrecorded, times=ALWAYS, optional=True)

    def answer(self, tool: str, arguments: dict[str, Any], method: Any, real: Any) -> Any:
        """Answer a function an LLM call runs (crewAI's ``available_functions``)."""
        named = type("RecordedTool", (), {"name": tool})()
        where = {"method": method} if method else {}
        return self.fake.call(named, (), dict(arguments), real, where)

    def _answerer(self, call: _ToolCall) -> Callable[[Any], Any]:
        def answer(request: Any) -> Any:
            self.used.add(call.seq)
            now = jsonable(request.data.get("arguments") or {})
            if now != jsonable(call.args):
                self.divergences.append(
                    Divergence(
                        "tool",
                        call.where,
                        f"called with {json.dumps(now, sort_keys=True)}; recorded: "
                        f"{json.dumps(jsonable(call.args), sort_keys=True)}",
                        seq=call.seq,
                    )
                )
            return _given(call.answer)

        return answer

    def _unrecorded(self, request: Any) -> Any:
        tool = request.caller.get("tool")
        method = request.caller.get("method", "(none)")
        message = f"a call of tool {tool} the record does not have (method {method})"
        arguments = json.dumps(jsonable(request.data.get("arguments")), sort_keys=True)
        self.divergences.append(
            Divergence("tool", f"method {method}", message, f"arguments: {arguments}", 10**9)
        )
        raise ReplayDivergenceError(f"pytest-flows replay: {message}: {arguments}")

    def unused(self) -> list[Divergence]:
        return [
            Divergence(
                "tool",
                call.where,
                "the record has this tool call; today's code did not make it",
                seq=call.seq,
            )
            for call in self.calls
            if call.seq not in self.used
        ]


class _People:
    """The record's human answers and crew results as ``human`` / ``fake_crews`` rules."""

    def __init__(self, record: Record) -> None:
        self.answers = record.of_kind("human.answered")
        self.crews = record.of_kind("crew.finished", "crew.failed")

    def install(self, session: Any, attempt: int, now: Callable[[Any], bool]) -> None:
        if self.answers:
            human = session.bound("human")
            if human is None:
                from pytest_flows._internal.human_script import ScriptedHuman

                human = ScriptedHuman(session)
                session.bind("human", human)
            for entry in self.answers:
                if entry.get("via") == "request_info":
                    _request_info_answer(human, entry, now)
                    continue
                kind = "ask" if entry.get("via") == "ask" else "feedback"
                rule = human.on(method=entry.get("method"), kind=kind, where=now)
                outcome = entry.get("outcome")
                answer = "" if entry.get("answer") is None else str(entry.get("answer"))
                rule.answer(answer, outcome=outcome or None, optional=True)
        if self.crews:
            crews = session.bound("crews")
            if crews is None:
                from pytest_flows._internal.crew_script import FakeCrews

                crews = FakeCrews(session)
                session.bind("crews", crews)
            for entry in self.crews:
                if entry.get("kind") == "crew.failed":
                    value: Any = RuntimeError(str(entry.get("error")))
                else:
                    value = entry.get("pydantic") or entry.get("json") or str(entry.get("raw"))
                method = entry.get("method")
                rule = crews.on(method=method, where=now) if method else crews.on(where=now)
                rule.reply(value, optional=True)


def _request_info_answer(human: Any, entry: dict[str, Any], now: Callable[[Any], bool]) -> None:
    """An Agent Framework ``request_info`` answer, given back as the type today's
    request expects (its ``response_type``: a model validated, a dataclass built)."""
    from pytest_flows._internal.script import Match

    recorded = entry.get("answer")

    def answer(request: Any) -> Any:
        expected = (request.data or {}).get("response_type")
        return _Typed(_as_type(recorded, expected))

    method = entry.get("method")
    conditions: tuple[tuple[str, Any], ...] = (("kind", "request_info"),)
    if method:
        conditions = (("method", method), *conditions)
    human.script.add(
        answer,
        match=Match(caller=conditions, where=now),
        optional=True,
        label=f"the record's answer to request_info from {method}",
    )


@dataclass(frozen=True)
class _Typed:
    """A human answer as the adapter reads one (``.text``: the response itself)."""

    text: Any
    after: float = 0.0


def _as_type(value: Any, expected: Any) -> Any:
    if not isinstance(expected, type) or isinstance(value, expected):
        return value
    validate = getattr(expected, "model_validate", None)
    if callable(validate):
        return validate(value)
    if dataclasses.is_dataclass(expected) and isinstance(value, dict):
        return expected(**value)
    if expected in (int, float, str, bool) and value is not None:
        return expected(value)
    return value


# -- comparing the record with the replay ------------------------------------------------------
def _order(entries: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (str(e["kind"]), str(e.get("method"))) for e in entries if e.get("kind") in _ORDER_KINDS
    ]


def trace_of(entries: list[dict[str, Any]], outcome: dict[str, Any]) -> Trace:
    """A record's flow-level events as a normalized trace (ids and clocks normalized)."""
    normalizer = Normalizer()
    events = []
    for entry in entries:
        kind = str(entry.get("kind"))
        if kind == "flow.started":
            events.append(TraceEvent(kind=kind, name=str(entry.get("flow"))))
        elif kind in _ORDER_KINDS:
            fields: tuple[tuple[str, str], ...] = ()
            if kind == "method.finished":
                fields = (("output", normalizer.text(str(entry.get("rendered")))),)
            elif kind == "method.failed":
                fields = (("error", _error_text(entry.get("error"))),)
            events.append(TraceEvent(kind=kind, name=str(entry.get("method")), fields=fields))
        elif kind == "llm.request":
            prompt = normalizer.text(render_messages(entry.get("messages")))
            events.append(
                TraceEvent(
                    kind="llm.request",
                    name=str(entry.get("method") or "-"),
                    fields=(("prompt", prompt),),
                )
            )
    end = outcome.get("outcome", "unknown")
    if end == "failed":
        events.append(
            TraceEvent(
                kind="run.failed", name="", fields=(("error", _error_text(outcome.get("error"))),)
            )
        )
    else:
        rendered = normalizer.text(str(outcome.get("rendered", "")))
        events.append(TraceEvent(kind=f"run.{end}", name="", fields=(("output", rendered),)))
    return Trace.of(events)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('type')}: {error.get('message')}"
    return str(error)


def _compare(
    record: Record, replayed: RunRecording, run: FlowRun
) -> tuple[list[Divergence], Trace, Trace]:
    divergences: list[Divergence] = []
    recorded_order, replayed_order = _order(record.entries), _order(replayed.entries)
    if recorded_order != replayed_order:
        divergences.append(_order_divergence(record, recorded_order, replayed_order))
    # The same method's n-th finish with another output (a router choosing another route).
    mine = [e for e in record.entries if e.get("kind") == "method.finished"]
    theirs = [e for e in replayed.entries if e.get("kind") == "method.finished"]
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in theirs:
        by_method[str(entry.get("method"))].append(entry)
    seen: dict[str, int] = defaultdict(int)
    normalizer = Normalizer()
    for entry in mine:
        method = str(entry.get("method"))
        index = seen[method]
        seen[method] += 1
        if index < len(by_method[method]):
            was = normalizer.text(str(entry.get("rendered")))
            now = normalizer.text(str(by_method[method][index].get("rendered")))
            if was != now:
                divergences.append(
                    Divergence(
                        "output",
                        f"method {method}",
                        f"returned {now} (recorded: {was}); a router's return is its route",
                        seq=int(entry.get("seq", 0)),
                    )
                )
    divergences += _state_divergences(record.entries, replayed.entries)
    end = _replayed_end(run)
    if record.outcome != end["outcome"] or (
        record.outcome == "failed"
        and _error_text(record.end.get("error")) != _error_text(end.get("error"))
    ):
        was = record.outcome + (
            f" ({_error_text(record.end.get('error'))})" if record.outcome == "failed" else ""
        )
        now = end["outcome"] + (
            f" ({_error_text(end.get('error'))})" if end["outcome"] == "failed" else ""
        )
        divergences.append(
            Divergence("outcome", "the run", f"ended {now}; recorded: {was}", seq=10**9 + 1)
        )
    elif end["outcome"] == "finished":
        normalizer = Normalizer()
        was = normalizer.text(str(record.end.get("rendered")))
        now = normalizer.text(str(end.get("rendered")))
        if was != now:
            divergences.append(
                Divergence("outcome", "the run", f"returned {now}; recorded: {was}", seq=10**9 + 1)
            )
    return divergences, trace_of(record.entries, record.end), trace_of(replayed.entries, end)


def _state_divergences(
    recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]
) -> list[Divergence]:
    """The n-th ``@persist`` save of each method, recorded vs now (ids normalized)."""
    saves: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in replayed:
        if entry.get("kind") == "state.saved":
            saves[str(entry.get("method"))].append(entry)
    seen: dict[str, int] = defaultdict(int)
    divergences = []
    normalizer = Normalizer()
    for entry in recorded:
        if entry.get("kind") != "state.saved":
            continue
        method = str(entry.get("method"))
        index = seen[method]
        seen[method] += 1
        where = f"state saved after method {method}" + (f" (save {index + 1})" if index else "")
        if index >= len(saves[method]):
            divergences.append(
                Divergence(
                    "state",
                    where,
                    "the record has this save; today's code did not persist it",
                    seq=int(entry.get("seq", 0)),
                )
            )
            continue
        recorded_state = _without_id(entry.get("state"))
        state = _masked_as(recorded_state, _without_id(saves[method][index].get("state")))
        was = normalizer.text(render_value(recorded_state))
        now = normalizer.text(render_value(state))
        if was != now:
            diff = "\n".join(
                difflib.unified_diff(
                    _lines(recorded_state),
                    _lines(state),
                    "recorded",
                    "now",
                    lineterm="",
                )
            )
            divergences.append(
                Divergence(
                    "state",
                    where,
                    "the persisted state differs from the record",
                    diff,
                    seq=int(entry.get("seq", 0)),
                )
            )
    for method, entries in saves.items():
        for extra in entries[seen[method] :]:
            divergences.append(
                Divergence(
                    "state",
                    f"state saved after method {method}",
                    "today's code persisted a state the record does not have",
                    seq=10**9,
                )
            )
            del extra
    return divergences


def _without_id(state: Any) -> Any:
    # The state's id is new in every run (crewAI's uuid4): not behaviour.
    if isinstance(state, dict):
        return {k: v for k, v in state.items() if k != "id"}
    return state


def _masked_as(recorded: Any, now: Any) -> Any:
    """``now`` with the values the record's scrubbing masked (``<secret>``) masked too:
    a secret is never compared, nor shown in a diff."""
    if isinstance(recorded, str) and "<secret>" in recorded:
        return recorded
    if isinstance(recorded, dict) and isinstance(now, dict):
        return {k: _masked_as(recorded[k], v) if k in recorded else v for k, v in now.items()}
    if isinstance(recorded, list) and isinstance(now, list) and len(recorded) == len(now):
        return [_masked_as(a, b) for a, b in zip(recorded, now, strict=True)]
    return now


def _lines(state: Any) -> list[str]:
    return json.dumps(state, indent=1, sort_keys=True, default=str).splitlines()


def _replayed_end(run: FlowRun) -> dict[str, Any]:
    if run.error is not None:
        return {
            "outcome": "failed",
            "error": {"type": type(run.error).__name__, "message": str(run.error)},
        }
    if type(run.output).__name__ == "HumanFeedbackPending":
        return {"outcome": "paused"}
    outputs = getattr(run, "outputs", None)
    if isinstance(outputs, list):
        # A workflow's outcome is its outputs, recorded as JSON data.
        return {"outcome": "finished", "rendered": render_value(jsonable(outputs))}
    return {"outcome": "finished", "rendered": render_value(run.output)}


def _order_divergence(
    record: Record, recorded: list[tuple[str, str]], replayed: list[tuple[str, str]]
) -> Divergence:
    index = next(
        (i for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)) if a != b),
        min(len(recorded), len(replayed)),
    )
    entries = [e for e in record.entries if e.get("kind") in _ORDER_KINDS]
    seq = int(entries[index].get("seq", 0)) if index < len(entries) else 10**9
    was = " ".join(f"{m}:{k.split('.')[1]}" for k, m in recorded[index : index + 4]) or "(end)"
    now = " ".join(f"{m}:{k.split('.')[1]}" for k, m in replayed[index : index + 4]) or "(end)"
    same_set = sorted(recorded) == sorted(replayed)
    kind = "order" if same_set else "method"
    what = (
        "the methods ran in another order"
        if same_set
        else "another method or listener ran (or one did not)"
    )
    return Divergence(
        kind, f"method event {index + 1}", f"{what}: recorded {was}; now {now}", seq=seq
    )


# -- the entry point -------------------------------------------------------------------------------
def _target_path(target: Any) -> str:
    cls = target if isinstance(target, type) else type(target)
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(target: Any, record: Record) -> Any:
    if isinstance(target, str):
        module, _, qualname = target.partition(":")
        if not qualname:
            raise FlowsUsageError(
                f"flows.replay(..., {target!r}): name the flow as 'package.module:ClassName'."
            )
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    return target


def replay(
    session: Any,
    record: str | os.PathLike[str] | Record,
    target: Any = None,
    *,
    seeds: int = 8,
    schedules: int = 48,
) -> ReplayResult:
    """Replay ``record`` with ``target`` (the flow or workflow class it was made from)."""
    if not isinstance(record, Record):
        try:
            record = read_record(record)
        except RecordError as exc:
            raise FlowsUsageError(str(exc)) from None
    if target is None:
        raise FlowsUsageError(
            f"flows.replay({str(record.path)!r}, ...): name the flow the record was made "
            f"from, e.g. flows.replay(path, {record.target.rpartition(':')[2] or 'MyFlow'}) "
            f"(the record says {record.target!r}); a record is data, it never decides what "
            "gets imported."
        )
    target = _resolve(target, record)
    if record.framework == "agent_framework" and inspect.isfunction(target):
        # A factory (the record's ``factory``, or the test's): the workflow it builds.
        target = target()
    if record.target and _target_path(target) != record.target:
        raise FlowsUsageError(
            f"flows.replay: the record was made from {record.target}, not "
            f"{_target_path(target)}; pass the recorded flow class."
        )
    if record.truncated:
        raise FlowsUsageError(
            f"{record.path.name} is truncated (the run was larger than the recorder's "
            "max_bytes): it cannot be replayed in full. Record with a larger max_bytes."
        )
    shadow_module = _SHADOWS.get(record.framework)
    if shadow_module is None:
        raise FlowsUsageError(f"{record.path.name}: unknown framework {record.framework!r}")
    shadow = importlib.import_module(shadow_module)
    session.ensure(record.framework)
    fake = session.bound("llm")
    if fake is None:
        fake = LLMScript()
        session.bind("llm", fake)
    attempts = _Attempts(session, record, target, fake, shadow)
    with tempfile.TemporaryDirectory() as scratch:
        attempts.memory = FlightRecorder(Path(scratch), max_bytes=2**40)
        found = _by_schedule(attempts, schedules)
        if found is None and not attempts.stopped:
            found = _by_seed(attempts, seeds)
    if found is not None:
        return found
    if attempts.same_order is not None:
        # The recorded order came back, other results stayed: they are today's code's.
        return attempts.same_order
    first = attempts.first
    assert first is not None
    if not first.interleaving:
        first.interleaving = (
            "The recorded order of method starts and finishes did not come back: today's "
            "code does something else (see the divergences), so no other order was tried."
        )
    return first


class _Guided(Chooser):
    """A schedule's chooser that also notes, at each choice point, how many of the
    replay's method events had happened (a choice made after the first event that
    differs from the record cannot be what changed it)."""

    def __init__(self, prefix: list[int], progress: Callable[[], int]) -> None:
        super().__init__(prefix, schedule=encode(prefix))
        self.progress = progress
        self.marks: list[int] = []

    def pick(self, kind: str, options: tuple[int, ...]) -> int:
        self.marks.append(self.progress())
        return super().pick(kind, options)


class _Attempts:
    """Replay attempts of one record: each with fresh answers, recorded in memory."""

    def __init__(self, session: Any, record: Record, target: Any, fake: Any, shadow: Any) -> None:
        self.session, self.record, self.target, self.fake, self.shadow = (
            session,
            record,
            target,
            fake,
            shadow,
        )
        self.answers = _Answers(_calls(record))
        self.people = _People(record)
        self.tools = _Tools(record)
        self.recorded_order = _order(record.entries)
        self.memory: FlightRecorder | None = None
        self.count = 0
        self.first: ReplayResult | None = None
        #: Today's code differs in more than the order: searching orders cannot help.
        self.stopped = False
        #: The first attempt with the recorded order of methods (other results may differ).
        self.same_order: ReplayResult | None = None
        #: Methods overlapped in the recorded run: the interleaving inside them matters.
        self.concurrent = _overlapping(self.recorded_order)

    def run(
        self, *, seed: int | None = None, chooser: _Guided | None = None
    ) -> tuple[ReplayResult, list[tuple[str, str]]]:
        self.count += 1
        answers, session, record = self.answers, self.session, self.record
        answers.install(self.fake, self.count)
        self.people.install(session, self.count, answers.current(self.count))
        if record.framework == "crewai" or self.tools.calls:
            # (Agent Framework's own tools are not recorded: they run as they are.)
            self.tools.install(session, answers.current(self.count))
        assert self.memory is not None
        replayed = RunRecording(self.memory, record.framework, "", record.target, record.run_kwargs)
        undo = self.shadow.shadow(replayed, answer_tool=self.tools.answer)
        try:
            with contextlib.ExitStack() as stack:
                if chooser is not None:
                    chooser.progress = lambda: len(_order(replayed.entries))
                    stack.enter_context(session.scheduler.following(chooser))
                else:
                    stack.enter_context(reseeded(session.scheduler, seed))
                run = session.run(self.target, raise_on_error=False, **record.run_kwargs)
        finally:
            undo()
        divergences, recorded_trace, replayed_trace = _compare(record, replayed, run)
        divergences += answers.divergences + answers.unused()
        divergences += self.tools.divergences + self.tools.unused()
        divergences.sort(key=lambda d: d.seq)
        result = ReplayResult(
            record,
            run,
            divergences,
            seed=session.seed if seed is None else seed,
            recorded_trace=recorded_trace,
            replayed_trace=replayed_trace,
        )
        if self.first is None:
            self.first = result
        if any(d.kind not in ("order", "outcome", "output", "state") for d in divergences):
            self.stopped = True
        return result, _order(replayed.entries)


def _overlapping(order: list[tuple[str, str]]) -> bool:
    running: set[str] = set()
    for kind, method in order:
        if kind == "method.started":
            if running:
                return True
            running.add(method)
        else:
            running.discard(method)
    return False


def _by_schedule(attempts: _Attempts, budget: int) -> ReplayResult | None:
    """Search the scheduler's schedules for the recorded order, breadth first from the
    default one ('s', what seed 0 does), changing only choices made before the first
    method event that differs (all of them when the order is the same but the results
    are not); each schedule is one the scheduler produced."""
    recorded = attempts.recorded_order
    pending: list[list[int]] = [[]]
    tried = 0
    while pending and tried < budget:
        prefix = pending.pop(0)
        tried += 1
        chooser = _Guided(prefix, lambda: 0)
        result, order = attempts.run(chooser=chooser)
        if order == recorded:
            result.schedule = chooser.schedule
            result.interleaving = (
                f"The recorded order of methods was rebuilt as schedule {chooser.schedule!r} "
                f"(flows.run(..., schedule={chooser.schedule!r}) or --flows-schedule="
                f"{chooser.schedule} replays it; {tried} schedule(s) tried)."
            )
            if not result.divergences or not attempts.concurrent:
                return result
            # The same order of methods, other results, and methods that overlapped: the
            # interleaving inside them may differ (two listeners appending to one list).
            attempts.same_order = attempts.same_order or result
        if attempts.stopped:
            return None
        differs = next(
            (k for k, (a, b) in enumerate(zip(order, recorded, strict=False)) if a != b),
            len(order) if order == recorded else min(len(order), len(recorded)),
        )
        taken = chooser.indices
        eligible = [
            at for at in range(len(prefix), len(chooser.choices)) if chooser.marks[at] <= differs
        ]
        # Breadth first, the choices nearest the first difference first.
        for at in reversed(eligible):
            options = len(chooser.choices[at].options)
            pending.extend(
                [*taken[:at], other] for other in range(1, options) if other != taken[at]
            )
    if attempts.first is not None and attempts.same_order is None:
        attempts.first.interleaving = (
            "The scheduler cannot express the recorded interleaving: no schedule gives the "
            f"recorded order of method starts and finishes (all {tried} that could were tried)."
            if not pending
            else ""
        )
    if not pending:
        attempts.stopped = True
    return None


def _by_seed(attempts: _Attempts, seeds: int) -> ReplayResult | None:
    """The fallback when the schedule search ran out of its budget: the seeds."""
    base = attempts.session.seed
    candidates = [base, *(s for s in range(max(1, seeds)) if s != base)][: max(1, seeds)]
    for seed in candidates:
        result, order = attempts.run(seed=seed)
        if order == attempts.recorded_order:
            result.interleaving = (
                f"The recorded order of methods came back at seed {seed} (no schedule within "
                f"the search's budget gave it; flows.run(..., seed) or --flows-seed={seed})."
            )
            if not result.divergences:
                return result
            attempts.same_order = attempts.same_order or result
        if attempts.stopped:
            return None
    assert attempts.first is not None
    if attempts.same_order is not None:
        return None
    attempts.first.interleaving = (
        "The scheduler could not express the recorded interleaving within the search: "
        f"neither the schedules tried nor the seeds {candidates} gave the recorded order "
        "of method starts and finishes."
    )
    return None
