"""The record's answers for a replay: its LLM calls (the flow's own and its crews'
agents') as ``fake_llm`` rules, its tool calls as ``fake_tools`` rules, its human
answers as ``human`` rules, and the crews it cannot run (none of their agents' calls
recorded) as ``fake_crews`` rules; each notes where today's code asks something else
(a divergence). A recorded failure is raised as its recorded type (``raised``)."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_flows._internal.contract.registry import recorder_part
from pytest_flows._internal.fakes.llm_script import LLMScript
from pytest_flows._internal.fakes.replies import ProviderError, Stream, ToolCall
from pytest_flows._internal.fakes.script import ALWAYS
from pytest_flows._internal.flight.format import Record, jsonable, message_text
from pytest_flows._internal.flight.raised import rebuild
from pytest_flows._internal.flight.result import Divergence, ReplayDivergenceError

__all__ = ["Answers", "People", "Tools", "bound_or_new", "calls_of", "render_messages"]


@dataclass
class _Call:
    method: str
    messages: Any
    tools: list[str]
    answer: Any
    latency: float
    seq: int
    number: int  # 1-based among its method's calls
    agent: str | None = None
    task: str | None = None
    #: Wall-clock seconds its method spent between its previous recorded step (its
    #: start, an LLM reply, a tool's end, a human's answer) and this request: work the
    #: harness runs in no virtual time at all (a crew being set up, a loaded machine).
    before: float = 0.0

    @property
    def where(self) -> str:
        where = f"LLM call {self.number} of method {self.method or '(none)'}"
        if self.agent:
            task = " ".join((self.task or "").split())
            task = task if len(task) <= 60 else task[:57] + "..."
            where += f" (agent {self.agent!r}" + (f", task {task!r})" if task else ")")
        return where


@dataclass(frozen=True)
class _Raises:
    """A recorded failure: raised afresh, as its recorded type, each time it is given."""

    fields: Any
    text: str

    def exception(self) -> BaseException:
        if self.fields is None:  # a record from before exceptions were kept
            return ProviderError(self.text)
        return rebuild(self.fields, self.text)


def crew_calls(record: Record) -> tuple[set[int], list[dict[str, Any]]]:
    """The crews the record has none of their agents' LLM calls for (they cannot be
    run: answered whole), and the seqs of the tool calls made inside them (not made by
    the replay). A crew's calls are those between its ``crew.started`` and its end in
    the same method."""
    open_crews: dict[str, list[tuple[dict[str, Any], list[int], list[bool]]]] = defaultdict(list)
    skip: set[int] = set()
    whole: list[dict[str, Any]] = []
    for entry in record.entries:
        kind, method = entry.get("kind"), str(entry.get("method") or "")
        if kind == "crew.started":
            open_crews[method].append((entry, [], [False]))
        elif kind in ("crew.finished", "crew.failed"):
            if not open_crews[method]:
                whole.append(entry)
                continue
            _, seqs, made = open_crews[method].pop(0)
            if not made[0]:
                whole.append(entry)
                skip.update(seqs)
        elif open_crews[method] and kind in ("llm.request", "tool.started"):
            for _, seqs, made in open_crews[method]:
                seqs.append(int(entry.get("seq", 0)))
                made[0] = made[0] or kind == "llm.request"
    return skip, whole


def bound_or_new(session: Any, kind: str, build: Callable[[], Any]) -> Any:
    """The fake of ``kind`` the test bound (its rules come first), else a new one bound."""
    fake = session.bound(kind)
    if fake is None:
        fake = build()
        session.bind(kind, fake)
    return fake


#: The entries that mark a point a method's own code passed at a moment the replay
#: reproduces in virtual time (see _Call.before).
_STEPS = frozenset(
    (
        "method.started",
        "llm.response",
        "llm.failed",
        "tool.finished",
        "tool.failed",
        "human.answered",
    )
)


def calls_of(record: Record) -> list[_Call]:
    # A crew runs on the harness: its agents' calls are answered like the flow's own.
    requests: dict[str, dict[str, Any]] = {}
    # The tools an LLM call ran itself (a framework whose recorder part says
    # ``tools_in_llm_calls``, as crewAI's ``available_functions``), by call id.
    part = recorder_part(record.framework)
    tools_in_calls = part is not None and part.tools_in_llm_calls
    ran: dict[str, list[dict[str, Any]]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    calls: list[_Call] = []
    before: dict[str, float] = {}
    # A streamed reply's chunks, by call id (the replay streams the same chunks).
    chunks: dict[str, list[str]] = defaultdict(list)
    # Each method's latest recorded step its own code passed (see _Call.before).
    steps: dict[str, float] = {}
    for entry in record.entries:
        kind = entry.get("kind")
        if kind in _STEPS:
            steps[str(entry.get("method") or "")] = float(entry.get("t", 0))
        if kind == "llm.request":
            requests[str(entry.get("call_id"))] = entry
            at = float(entry.get("t", 0))
            since = steps.get(str(entry.get("method") or ""), at)
            before[str(entry.get("call_id"))] = max(0.0, at - since)
        elif kind == "llm.chunk":
            chunks[str(entry.get("call_id"))].append(str(entry.get("chunk", "")))
        elif kind == "tool.started" and tools_in_calls:
            # (Elsewhere the tool loop calls the tools between model calls, never
            # inside one: its tool calls are the model's reply, recorded as such.)
            for call_id, asked in requests.items():
                if asked.get("thread") == entry.get("thread") and not entry.get("agent"):
                    ran[call_id].append(entry)
        elif kind in ("llm.response", "llm.failed"):
            call_id = str(entry.get("call_id"))
            request = requests.pop(call_id, None)
            tools_run = ran.pop(call_id, [])
            if request is None:
                continue
            method = str(request.get("method") or "")
            counts[method] += 1
            answer = _answer(entry)
            streamed = chunks.pop(call_id, [])
            if streamed and isinstance(answer, str) and "".join(streamed) == answer:
                answer = Stream(tuple(streamed))
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
                    agent=_text_or_none(request.get("agent")),
                    task=_text_or_none(request.get("task")),
                    before=before.pop(call_id, 0.0),
                )
            )
    return calls


def _text_or_none(value: Any) -> str | None:
    return str(value) if value else None


def _answer(entry: dict[str, Any]) -> Any:
    if entry.get("kind") == "llm.failed":
        return _Raises(entry.get("exception"), str(entry.get("error") or "provider error"))
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
    if isinstance(answer, _Raises):
        raise answer.exception()
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
        # (a langchain-core message has no role: its type, "human", "ai", ...)
        role = getattr(message, "role", None) or getattr(message, "type", None) or "?"
        if hasattr(message, "text"):
            text: Any = message_text(message)
        else:
            text = getattr(message, "content", message)
        plain.append({"role": str(getattr(role, "value", role)), "content": str(text)})
    return json.loads(json.dumps(plain, default=str))


class Answers:
    """The record's LLM calls as fake_llm rules, for one replay attempt."""

    def __init__(self, calls: list[_Call]) -> None:
        self.calls = calls
        self.attempt = 0
        #: Whether each reply also waits its method's recorded time before the request
        #: (_Call.before): production's time the harness does not spend.
        self.timed = False
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
                latency = call.latency + (call.before if self.timed else 0.0)
                rule.reply(self._answerer(call), optional=True, latency=latency)
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
            where = call.where
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
            self._check_offered(call, request, where)
            return _given(call.answer)

        return answer

    def _check_offered(self, call: _Call, request: Any, where: str) -> None:
        """A recorded reply calling a tool today's code does not offer: the recorded
        answer cannot be given (the model would not be asked for it now)."""
        if not isinstance(call.answer, list):
            return
        offered = list(request.tools or [])
        missing = [c.name for c in call.answer if isinstance(c, ToolCall) and c.name not in offered]
        if not missing:
            return
        message = (
            f"the recorded reply calls tool {', '.join(missing)}, which today's code does "
            f"not offer (it offers {offered})"
        )
        self.divergences.append(Divergence("tool", where, message, seq=call.seq))
        raise ReplayDivergenceError(f"pytest-flows replay: {where}: {message}")

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
                call.where,
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


def _toolcalls_of(record: Record) -> list[_ToolCall]:
    # A crew answered whole from the record (none of its LLM calls recorded) calls no
    # tool; a crew that runs on the harness calls its agents' tools (answered here).
    skip = crew_calls(record)[0]
    pending: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    calls: list[_ToolCall] = []
    for entry in record.entries:
        kind = entry.get("kind")
        # A call's start and end: by the tool loop's call id where the record has one
        # (Agent Framework runs a reply's tool calls concurrently), else by thread and tool.
        key = (
            (entry.get("call_id"),)
            if entry.get("call_id")
            else (entry.get("thread"), entry.get("tool"))
        )
        if kind == "tool.started":
            pending[key].append(entry)
        elif kind in ("tool.finished", "tool.failed") and pending[key]:
            started = pending[key].pop(0)
            if int(started.get("seq", 0)) in skip:
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


class Tools:
    """The record's tool calls as ``fake_tools`` rules, for one replay attempt."""

    def __init__(self, record: Record) -> None:
        self.calls = _toolcalls_of(record)
        self.fake: Any = None
        self.divergences: list[Divergence] = []
        self.used: set[int] = set()

    def install(self, session: Any, now: Callable[[Any], bool]) -> None:
        from pytest_flows._internal.fakes.script import Match
        from pytest_flows._internal.fakes.tool_script import FakeTools, ToolRule

        self.divergences, self.used = [], set()
        fake = bound_or_new(session, "tools", lambda: FakeTools(session))
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


class People:
    """The record's human answers and crew results as ``human`` / ``fake_crews`` rules."""

    def __init__(self, record: Record) -> None:
        self.answers = record.of_kind("human.answered")
        #: Crews the record has none of their agents' LLM calls for: answered whole
        #: (every other crew runs on the harness, its agents answered from the record).
        self.crews = crew_calls(record)[1]

    def notes(self) -> list[str]:
        """What the replay could not compare (said in the report, never silently)."""
        return [
            f"crew {entry.get('crew')!r} in method {entry.get('method')} was answered whole "
            "from the record (it has none of its agents' LLM calls): its agents' prompts "
            "and tools were not compared"
            for entry in self.crews
        ]

    def install(self, session: Any, attempt: int, now: Callable[[Any], bool]) -> None:
        if self.answers:
            from pytest_flows._internal.fakes.human_script import ScriptedHuman

            human = bound_or_new(session, "human", lambda: ScriptedHuman(session))
            for entry in self.answers:
                if entry.get("via") == "request_info":
                    _request_info_answer(human, entry, now)
                    continue
                if entry.get("via") == "interrupt":
                    _interrupt_answer(human, entry, now)
                    continue
                kind = "ask" if entry.get("via") == "ask" else "feedback"
                rule = human.on(method=entry.get("method"), kind=kind, where=now)
                outcome = entry.get("outcome")
                answer = "" if entry.get("answer") is None else str(entry.get("answer"))
                rule.answer(answer, outcome=outcome or None, optional=True)
        if self.crews:
            from pytest_flows._internal.fakes.crew_script import FakeCrews

            crews = bound_or_new(session, "crews", lambda: FakeCrews(session))
            for entry in self.crews:
                if entry.get("kind") == "crew.failed":
                    value: Any = rebuild(entry.get("exception"), str(entry.get("error")))
                else:
                    value = entry.get("pydantic") or entry.get("json") or str(entry.get("raw"))
                keys: dict[str, Any] = {"crew": entry.get("crew")} if entry.get("crew") else {}
                if entry.get("method"):
                    keys["method"] = entry.get("method")
                crews.on(where=now, **keys).reply(value, optional=True)
            # Every other crew runs on the harness, its agents answered from the record.
            crews.on(where=now).run_for_real(times=ALWAYS, optional=True)


def _request_info_answer(human: Any, entry: dict[str, Any], now: Callable[[Any], bool]) -> None:
    """An Agent Framework ``request_info`` answer, given back as the type today's
    request expects (its ``response_type``: a model validated, a dataclass built)."""
    from pytest_flows._internal.fakes.script import Match

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


def _interrupt_answer(human: Any, entry: dict[str, Any], now: Callable[[Any], bool]) -> None:
    """A LangGraph ``interrupt()`` answer (the ``Command(resume=...)`` value), given back
    as recorded: any JSON value, not only text."""
    from pytest_flows._internal.fakes.script import Match

    recorded = entry.get("answer")
    method = entry.get("method")
    conditions: tuple[tuple[str, Any], ...] = (("kind", "interrupt"),)
    if method:
        conditions = (("method", method), *conditions)
    human.script.add(
        lambda request: _Typed(recorded),
        match=Match(caller=conditions, where=now),
        optional=True,
        label=f"the record's answer to the interrupt in {method}",
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
