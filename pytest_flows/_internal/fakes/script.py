"""The scripted-reply engine every fake uses (framework-neutral).

A :class:`Script` holds what the test scripted (:class:`Entry`: a reply, the
condition under which it answers, how often) and a ledger of everything that
was asked (:class:`Exchange`). A fake turns what its framework asks into a
:class:`Request`, lets the script pick the entry that answers it, and turns the
entry's reply into whatever the framework expects.

Choosing an entry: the most specific answer wins. An entry with more
conditions beats one with fewer (and any entry with conditions beats a plain
ordered reply), then a counted entry beats an ``always`` one, and otherwise
the entry defined first wins. Plain replies answer in the order they were
added.

Strict: a request nothing answers raises :class:`UnscriptedRequest` at once,
showing the request and the line that would answer it; :meth:`Script.verify`
(run at teardown) raises :class:`UnusedReplies` for entries nobody used.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar

import pytest

from pytest_flows._internal.errors import FlowsUsageError

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = [
    "ALWAYS",
    "Entry",
    "Exchange",
    "Match",
    "Request",
    "Script",
    "ScriptError",
    "ScriptReplyError",
    "UnscriptedRequest",
    "UnusedReplies",
    "code",
    "plain",
    "short",
]

#: ``times=ALWAYS``: the entry answers every matching request, forever.
ALWAYS: Final = "always"

Times = int | Literal["always"]

#: Longest rendering of a value inside a script error message.
_SHORT = 60


class ScriptError(pytest.fail.Exception):  # type: ignore[name-defined,misc]
    """A request and the script disagree: the test fails, with this message only.

    A test failure as ``pytest.fail()`` raises it, so not an ``Exception``:
    frameworks catch ``Exception`` broadly - fallbacks, retries, "a provider
    error means no answer" - and a wrong script must never be absorbed. The
    message says everything; pytest shows it without a traceback.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)
        # Raised through the framework's worker threads, it would otherwise show
        # whatever the harness was handling there ("no running event loop").
        self.__suppress_context__ = True


class UnscriptedRequest(ScriptError):
    """Nothing in the script answers a request."""

    def __init__(self, message: str, request: Request) -> None:
        super().__init__(message)
        self.request = request


class ScriptReplyError(ScriptError):
    """A scripted reply does not fit the request it answered."""


class UnusedReplies(ScriptError):
    """Scripted entries nobody used (raised at teardown)."""

    def __init__(self, message: str, entries: list[Entry]) -> None:
        super().__init__(message)
        self.entries = entries


_BARE = re.compile(r"[\w.:/@+-]+")


def plain(value: Any, limit: int = _SHORT) -> str:
    """A trace field value: bare if it is one simple word, else ``short(value)``."""
    if isinstance(value, str) and _BARE.fullmatch(value):
        return value if len(value) <= limit else short(value, limit)
    return short(value, limit)


def code(value: Any, limit: int = _SHORT) -> str:
    """``value`` as it would be written in a test: strings in double quotes."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 2] + '…"'
    return short(value, limit)


def short(value: Any, limit: int = _SHORT) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters."""
    text = repr(value).replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Request:
    """What a fake was asked.

    ``caller`` says who asks (``flow``, ``method``, ``agent``, ``task``,
    ``purpose``, ``model``... - each fake documents its keys); ``prompt`` is
    the text ``prompt=`` patterns search; ``data`` holds fake-specific extras.
    ``number`` is the request's 1-based position in its script's ledger.
    ``aliases`` holds other names a caller value goes by (a crewai tool's
    sanitized name next to its declared one): a caller condition matches the
    value or any of its aliases.
    """

    caller: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""
    messages: list[Any] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    response_model: Any = None
    purpose: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    number: int = 0
    aliases: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def describe_caller(self) -> str:
        parts = [f"{key}={_readable(value)}" for key, value in self.caller.items()]
        return " ".join(parts) if parts else "(unknown)"


def _readable(value: Any) -> str:
    """A caller's value as a request's description shows it: a bare word as is, else
    its short ``repr``."""
    if isinstance(value, str):
        return short(value) if (" " in value or not value) else value
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_readable(v) for v in value) + "]"
    return short(value)


Condition = Any  # str | int | re.Pattern[str] | Callable[[Any], bool] | Mapping


def _condition_holds(condition: Condition, value: Any) -> bool:
    if isinstance(value, list | tuple) and not isinstance(condition, list | tuple):
        return any(_condition_holds(condition, item) for item in value)
    if isinstance(condition, re.Pattern):
        return isinstance(value, str) and condition.search(value) is not None
    if isinstance(condition, Mapping):
        return isinstance(value, Mapping) and all(
            key in value and _condition_holds(sub, value[key]) for key, sub in condition.items()
        )
    if callable(condition):
        return bool(condition(value))
    return bool(value == condition)


def _describe_condition(condition: Condition) -> str:
    if isinstance(condition, re.Pattern):
        return f"re.compile({condition.pattern!r})"
    if callable(condition) and not isinstance(condition, type):
        name = getattr(condition, "__name__", type(condition).__name__)
        return f"<{name}>"
    return code(condition)


@dataclass(frozen=True)
class Match:
    """When an entry answers: conditions on the caller, the prompt, the whole request.

    A caller condition is a value (equal, or contained in a list value), a
    compiled regex (searched), a mapping (every key matches: a subset) or a
    predicate. ``prompt`` is a regex (a ``str`` is compiled) or a predicate
    over :attr:`Request.prompt`; ``where`` a predicate over the request.
    """

    caller: tuple[tuple[str, Condition], ...] = ()
    prompt: Condition = None
    where: Callable[[Request], bool] | None = None
    prompt_key: str = "prompt"

    def __post_init__(self) -> None:
        if self.prompt is not None and not (
            isinstance(self.prompt, str | re.Pattern) or callable(self.prompt)
        ):
            raise FlowsUsageError(
                f"on({self.prompt_key}={self.prompt!r}): {self.prompt_key} is a regular "
                f'expression (a str such as {self.prompt_key}="refund", or re.compile(...)) or '
                f"a predicate f(text) -> bool, not {type(self.prompt).__name__}; to match "
                f"the text {str(self.prompt)!r} write "
                f"{self.prompt_key}=re.escape({str(self.prompt)!r})."
            )
        if self.where is not None and not callable(self.where):
            raise FlowsUsageError(
                f"on(where={self.where!r}): where is a predicate f(request) -> bool, e.g. "
                "where=lambda r: r.tools == ['search']."
            )
        if isinstance(self.prompt, str):
            try:
                object.__setattr__(self, "prompt", re.compile(self.prompt, re.DOTALL))
            except re.error as exc:
                raise FlowsUsageError(
                    f"{self.prompt_key}={self.prompt!r} is not a valid regular expression "
                    f"({exc}); pass re.escape(text) to match the text literally."
                ) from None

    @property
    def conditions(self) -> int:
        """How many conditions this match sets (more is more specific)."""
        return len(self.caller) + (self.prompt is not None) + (self.where is not None)

    def matches(self, request: Request) -> bool:
        for key, condition in self.caller:
            if key not in request.caller:
                return False
            values = (request.caller[key], *request.aliases.get(key, ()))
            if not any(_condition_holds(condition, value) for value in values):
                return False
        if self.prompt is not None and not _condition_holds(self.prompt, request.prompt):
            return False
        return self.where is None or bool(self.where(request))

    def describe(self) -> str:
        parts = [f"{key}={_describe_condition(value)}" for key, value in self.caller]
        if isinstance(self.prompt, re.Pattern):
            parts.append(f"{self.prompt_key}={code(self.prompt.pattern)}")
        elif self.prompt is not None:
            parts.append(f"{self.prompt_key}={_describe_condition(self.prompt)}")
        if self.where is not None:
            parts.append(f"where={_describe_condition(self.where)}")
        return ", ".join(parts)


@dataclass(eq=False)
class Entry:
    """One scripted answer: a reply, when it applies, how often, where it was written."""

    reply: Any
    match: Match | None
    times: int | None  # None: always
    optional: bool
    origin: str
    label: str
    options: dict[str, Any] = field(default_factory=dict)
    used: int = 0
    #: Answers only what no other entry answers (``fake_llm.auto()``).
    fallback: bool = False
    #: The most one run of a search (``explore()``) used it: searches rewind ``used``
    #: after each run (:mod:`pytest_flows._internal.fakes.rewind`).
    most_in_a_search: int = 0

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.used >= self.times

    @property
    def unused(self) -> bool:
        if self.optional:
            return False
        used = max(self.used, self.most_in_a_search)
        return used == 0 if self.times is None else used < self.times

    def describe(self) -> str:
        used = max(self.used, self.most_in_a_search)
        count = "always" if self.times is None else f"{used} of {self.times}"
        return f"{self.label}  [{self.origin}, used {count}]"

    def _rank(self) -> tuple[int, int, int, int]:
        conditions = self.match.conditions if self.match is not None else 0
        return (
            1 if self.fallback else 0,
            -conditions,
            0 if self.match is not None else 1,
            0 if self.times is not None else 1,
        )


@dataclass(eq=False)
class Exchange:
    """One request and how the script answered it (the ledger's line)."""

    request: Request
    entry: Entry | None
    reply: Any = None
    error: BaseException | None = None

    # Shortcuts, so ``fake.calls[0].messages`` reads naturally.
    @property
    def caller(self) -> dict[str, Any]:
        return self.request.caller

    @property
    def prompt(self) -> str:
        return self.request.prompt

    @property
    def messages(self) -> list[Any]:
        return self.request.messages

    @property
    def tools(self) -> list[str]:
        return self.request.tools

    @property
    def response_model(self) -> Any:
        return self.request.response_model

    @property
    def purpose(self) -> str | None:
        return self.request.purpose

    @property
    def data(self) -> dict[str, Any]:
        return self.request.data

    def resolve(self) -> Any:
        """The entry's reply for this request: callables are called, errors raised."""
        assert self.entry is not None
        value = self.entry.reply
        if callable(value) and not isinstance(value, type):
            value = value(self.request)
        if isinstance(value, type) and issubclass(value, BaseException):
            value = value()
        if isinstance(value, BaseException):
            self.error = value
            raise value
        return value

    def __repr__(self) -> str:
        outcome = (
            f"error={self.error!r}" if self.error is not None else f"reply={short(self.reply)}"
        )
        return f"<Exchange #{self.request.number} {self.request.describe_caller()} {outcome}>"


def caller_origin() -> str:
    """``file.py:line`` of the first frame outside pytest_flows (the test's line)."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module == "pytest_flows" or module.startswith("pytest_flows.")):
            return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def check_times(times: Times, fixture: str) -> int | None:
    if times == ALWAYS:
        return None
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise FlowsUsageError(
            f"{fixture}: times={times!r} is not a count; pass a whole number >= 1, "
            'or times="always" (pytest_flows.ALWAYS) for a reply that never runs out.'
        )
    return times


class Script:
    """The script and ledger of one fake in one test.

    ``fixture`` is the fake's fixture name (used in messages), ``noun`` what a
    request is called ("LLM call", "human request"); ``suggest(request)``
    returns the line that would answer a request, ``describe(request)`` extra
    lines that show it.
    """

    def __init__(
        self,
        *,
        fixture: str,
        noun: str,
        reply_noun: str,
        suggest: Callable[[Request], str],
        describe: Callable[[Request], list[str]] | None = None,
    ) -> None:
        self.fixture = fixture
        self.noun = noun
        self.reply_noun = reply_noun
        self._suggest = suggest
        self._describe = describe or (lambda request: [])
        self.entries: list[Entry] = []
        self.exchanges: list[Exchange] = []
        self.unscripted: list[UnscriptedRequest] = []
        self.check_unused = True
        #: Called with the unused entries before :meth:`verify` reports them: a
        #: fake raises its own, sharper error here (a tool name no agent has).
        self.explain_unused: Callable[[list[Entry]], None] | None = None
        self._lock = threading.RLock()

    # -- scripting -----------------------------------------------------------
    def add(
        self,
        reply: Any,
        *,
        match: Match | None = None,
        times: Times = 1,
        optional: bool = False,
        label: str,
        options: dict[str, Any] | None = None,
        fallback: bool = False,
    ) -> Entry:
        entry = Entry(
            reply=reply,
            match=match,
            times=check_times(times, self.fixture),
            optional=bool(optional),
            origin=caller_origin(),
            label=label,
            options=dict(options or {}),
            fallback=fallback,
        )
        with self._lock:
            self.entries.append(entry)
        return entry

    # -- answering -----------------------------------------------------------
    def take(self, request: Request) -> Exchange:
        """Record ``request`` and pick the entry that answers it (or raise)."""
        with self._lock:
            request.number = len(self.exchanges) + 1
            entry = self._choose(request)
            exchange = Exchange(request=request, entry=entry)
            self.exchanges.append(exchange)
            if entry is None:
                error = UnscriptedRequest(self._unscripted_message(request), request)
                exchange.error = error
                self.unscripted.append(error)
                raise error
            entry.used += 1
            return exchange

    def take_if_scripted(self, request: Request) -> Exchange:
        """Like :meth:`take`, but a request nothing answers is recorded with no entry
        (the fake then does the real thing) instead of failing."""
        with self._lock:
            request.number = len(self.exchanges) + 1
            entry = self._choose(request)
            exchange = Exchange(request=request, entry=entry)
            self.exchanges.append(exchange)
            if entry is not None:
                entry.used += 1
            return exchange

    def _choose(self, request: Request) -> Entry | None:
        candidates = [
            (entry._rank(), position, entry)
            for position, entry in enumerate(self.entries)
            if not entry.exhausted and (entry.match is None or entry.match.matches(request))
        ]
        if not candidates:
            return None
        return min(candidates, key=lambda item: (item[0], item[1]))[2]

    # -- messages ------------------------------------------------------------
    def _unscripted_message(self, request: Request) -> str:
        lines = [
            f"pytest-flows: unscripted {self.noun} #{request.number}: "
            f"no scripted {self.reply_noun} matches it.",
            f"  caller: {request.describe_caller()}",
            *(f"  {line}" for line in self._describe(request)),
        ]
        waiting = [entry for entry in self.entries if not entry.exhausted]
        if not self.entries:
            lines.append(f"  script: empty (nothing was scripted on {self.fixture})")
        elif not waiting:
            lines.append(f"  script: all {len(self.entries)} scripted {self.reply_noun}(s) used up")
        else:
            lines.append(f"  script: {len(waiting)} waiting {self.reply_noun}(s), none matches:")
            lines.extend(f"    {entry.describe()}" for entry in waiting[:5])
            if len(waiting) > 5:
                lines.append(f"    ... and {len(waiting) - 5} more")
        lines.append("Add this line to the test to answer it:")
        lines.append(f"    {self._suggest(request)}")
        return "\n".join(lines)

    def unused(self) -> list[Entry]:
        with self._lock:
            return [entry for entry in self.entries if entry.unused]

    def verify(self) -> None:
        """Raise :class:`UnusedReplies` if a (non-optional) entry was never used."""
        __tracebackhide__ = True
        if not self.check_unused:
            return
        unused = self.unused()
        if not unused:
            return
        if self.explain_unused is not None:
            self.explain_unused(unused)
        count = len(unused)
        noun = self.reply_noun if count == 1 else f"{self.reply_noun}s"
        lines = [f"pytest-flows: {count} scripted {noun} on {self.fixture} never used:"]
        lines.extend(f"  {entry.describe()}" for entry in unused)
        lines.append(
            "The flow never asked for "
            + ("it" if count == 1 else "them")
            + ". Remove "
            + ("it" if count == 1 else "them")
            + ", fix the condition, or pass optional=True "
            f"({self.fixture}.allow_unused() relaxes this check for the whole test)."
        )
        raise UnusedReplies("\n".join(lines), unused)


_Owner = TypeVar("_Owner")


class Rule(Generic[_Owner]):
    """What a fake's ``on(...)`` returns: it scripts replies for the requests ``match``
    describes on ``owner``, the fake (each fake's rule adds its reply methods)."""

    def __init__(self, owner: _Owner, match: Match) -> None:
        self._owner = owner
        self._match = match


class ScriptedFake:
    """A fake answered from one :class:`Script`, the ledger its fixture verifies at
    teardown (``fake_llm``, ``fake_tools``, ``fake_crews``, ``human``)."""

    def __init__(
        self,
        session: FlowsSession | None,
        fixture: str,
        noun: str,
        reply_noun: str,
        suggest: Callable[[Request], str],
        describe: Callable[[Request], list[str]],
    ) -> None:
        self.session = session
        self.script = Script(
            fixture=fixture, noun=noun, reply_noun=reply_noun, suggest=suggest, describe=describe
        )

    def _script_each(
        self,
        values: tuple[Any, ...],
        match: Match | None,
        times: Times,
        optional: bool,
        verb: Callable[[Any, str], str],
        options: dict[str, Any],
    ) -> None:
        """Script ``values`` in order, each labelled in the ledger as the call that
        scripted it: ``<fixture>[.on(<match>)].<verb(value, extra)>``, where ``extra``
        is ``", times=N"`` (or ``""`` for once)."""
        fixture = self.script.fixture
        prefix = fixture if match is None else f"{fixture}.on({match.describe()})"
        extra = "" if times == 1 else f", times={code(times)}"
        for value in values:
            self.script.add(
                value,
                match=match,
                times=times,
                optional=optional,
                label=f"{prefix}.{verb(value, extra)}",
                options=options,
            )

    def allow_unused(self) -> None:
        """Don't fail this test for scripted replies nobody used."""
        self.script.check_unused = False
