"""The ``fake_tools`` fixture's scripting side, shared by every framework's adapter.

:class:`FakeTools` is what a test writes to (``on(...).reply``, ``.error``,
``strict``) and reads (``calls``); each framework's adapter wraps the *body*
of its tools (crewai: :mod:`pytest_flows.crewai._tools`; Agent Framework:
:mod:`pytest_flows.agent_framework._tools`) so it asks :meth:`FakeTools.call`
first, while the framework's own tool path around the body still runs.

Unscripted calls run the real tool (and are still in the ledger) unless
:meth:`FakeTools.strict` is set; scripted results nobody used fail the test.

Request keys: ``caller`` has ``tool`` (its declared name) and, where the
adapter knows them, ``flow`` and ``method``; ``data["arguments"]`` (and the
``prompt``, as sorted JSON) are the arguments the tool got. A tool also goes
by the names the adapter gives as its aliases (crewai: the sanitized name the
model, ``call_tool`` and the trace use), so ``on(...)`` matches either form.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.durations import check_duration
from pytest_flows._internal.fakes import usage
from pytest_flows._internal.fakes.script import (
    Exchange,
    Match,
    Request,
    Rule,
    ScriptedFake,
    Times,
    code,
    short,
)
from pytest_flows._internal.fakes.trajectory import Calls
from pytest_flows._internal.runtime import loop as _loop
from pytest_flows._internal.runtime.participants import sleep_on

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["FakeTools", "ToolRule"]

_FIXTURE = "fake_tools"


class _Raise:
    """A scripted tool failure: ``.error(exc)``."""

    def __init__(self, error: BaseException | type[BaseException]) -> None:
        self.error = error

    def __call__(self, request: Request) -> Any:
        raise self.error() if isinstance(self.error, type) else self.error


def _suggest(request: Request) -> str:
    return f'{_FIXTURE}.on("{request.caller.get("tool")}").reply("...")'


def _describe(request: Request) -> list[str]:
    return [f"arguments: {short(request.data.get('arguments'), 100)}"]


class ToolRule(Rule["FakeTools"]):
    """Results for the calls :meth:`FakeTools.on` described."""

    def reply(
        self, *values: Any, times: Times = 1, optional: bool = False, latency: float = 0.0
    ) -> ToolRule:
        """The tool returns ``values``, in order (each ``times`` times).

        A value is what the tool's body would return, or a callable
        ``f(request)`` computing it (``request.data["arguments"]``).
        ``latency`` is how long each call takes, in virtual seconds.
        """
        self._owner._add(values, self._match, times, optional, latency)
        return self

    def error(
        self,
        error: BaseException | type[BaseException],
        *,
        times: Times = 1,
        optional: bool = False,
        latency: float = 0.0,
    ) -> ToolRule:
        """The tool raises ``error`` (crewai reports it to the agent as a tool error)."""
        if not (
            isinstance(error, BaseException)
            or (isinstance(error, type) and issubclass(error, BaseException))
        ):
            raise _usage(
                f"fake_tools.on(...).error({error!r}): pass an exception, e.g. "
                '.error(TimeoutError("search timed out")).'
            )
        self._owner._add((_Raise(error),), self._match, times, optional, latency)
        return self


class FakeTools(ScriptedFake):
    """Scripted tool results (the ``fake_tools`` fixture)."""

    def __init__(self, session: FlowsSession | None = None) -> None:
        super().__init__(session, _FIXTURE, "tool call", "tool result", _suggest, _describe)
        self._strict = False
        # Every tool the flow's agents were given: declared name -> its other names.
        self._known: dict[str, tuple[str, ...]] = {}
        self.script.explain_unused = self._unknown_names

    # -- scripting -------------------------------------------------------------
    def on(
        self,
        tool: Any,
        /,
        *,
        method: Any = None,
        flow: Any = None,
        where: Callable[[Request], bool] | None = None,
    ) -> ToolRule:
        """Results for calls of ``tool`` (its name): ``fake_tools.on("search").reply("...")``.

        ``where`` sees the whole request (``r.data["arguments"]``); ``method``
        and ``flow`` narrow it to one flow method.
        """
        if tool is None:
            raise _usage('fake_tools.on() needs the tool\'s name: fake_tools.on("search").')
        given = {"tool": tool, "method": method, "flow": flow}
        conditions = tuple((k, v) for k, v in given.items() if v is not None)
        return ToolRule(self, Match(caller=conditions, where=where))

    def strict(self) -> FakeTools:
        """Fail on any tool call nothing scripted (instead of running the real tool)."""
        self._strict = True
        return self

    def _add(
        self,
        values: tuple[Any, ...],
        match: Match,
        times: Times,
        optional: bool,
        latency: float,
    ) -> None:
        if not values:
            raise _usage('reply() needs at least one value: fake_tools.on("search").reply("...").')
        latency = check_duration("fake_tools latency=", latency)

        def verb(value: Any, extra: str) -> str:
            if isinstance(value, _Raise):
                return f"error({value.error!r}{extra})"
            return f"reply({code(value) if not callable(value) else '<callable>'}{extra})"

        self._script_each(values, match, times, optional, verb, {"latency": latency})

    def know(self, name: str, *aliases: str) -> None:
        """Note a tool an agent has (called by the adapter as agents start), so a
        scripted name that is none of them is reported with the names that are."""
        self._known.setdefault(name, tuple(a for a in aliases if a != name))

    def _unknown_names(self, unused: list[Any]) -> None:
        if not self._known:
            return
        forms = {n for name, aliases in self._known.items() for n in (name, *aliases)}
        unknown = []
        for entry in unused:
            for key, condition in entry.match.caller if entry.match is not None else ():
                if key == "tool" and isinstance(condition, str) and condition not in forms:
                    unknown.append(condition)
        if not unknown:
            return
        lines = [
            f"{_FIXTURE}.on({code(name)}): no tool the flow's agents have is named {code(name)}."
            for name in dict.fromkeys(unknown)
        ]
        lines.append("The agents' tools (either name matches):")
        for name, aliases in sorted(self._known.items()):
            also = f"  (also {', '.join(map(code, aliases))})"
            lines.append(f"  {code(name)}{also if aliases else ''}")
        raise _usage("\n".join(lines))

    # -- reading ----------------------------------------------------------------
    @property
    def calls(self) -> Calls[Exchange]:
        """Every tool call (scripted or real), in order; ``calls.match([...])`` as a trajectory."""
        return Calls(self.script.exchanges, noun="tool call")

    # -- answering (called by the patched tool bodies) -------------------------------------
    def _request(
        self,
        tool: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        where: dict[str, Any],
        aliases: tuple[str, ...],
    ) -> Request:
        name = str(getattr(tool, "name", type(tool).__name__))
        caller: dict[str, Any] = {"tool": name}
        caller.update(where)
        arguments = dict(kwargs)
        if args:
            arguments["args"] = list(args)
        others = tuple(a for a in aliases if a != name)
        return Request(
            caller=caller,
            prompt=json.dumps(arguments, sort_keys=True, default=str),
            purpose="tool",
            data={"arguments": arguments},
            aliases={"tool": others} if others else {},
        )

    def _exchange(self, request: Request) -> Exchange:
        """The ledger line for ``request``; without an entry, the real tool runs."""
        if self._strict:
            return self.script.take(request)
        return self.script.take_if_scripted(request)

    def call(
        self,
        tool: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        real: Any,
        where: dict[str, Any],
        aliases: tuple[str, ...] = (),
    ) -> Any:
        """Answer a sync tool body: the scripted result, or ``real()``."""
        exchange = self._exchange(self._request(tool, args, kwargs, where, aliases))
        if exchange.entry is None:
            return _recorded(exchange, real)
        seconds = _latency(exchange)
        if seconds and self.session is not None:
            sleep_on(self.session.clock, seconds)
        return _resolve(exchange)

    async def acall(
        self,
        tool: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        real: Any,
        where: dict[str, Any],
        aliases: tuple[str, ...] = (),
    ) -> Any:
        """Answer an async tool body: the scripted result, or ``await real()``."""
        exchange = self._exchange(self._request(tool, args, kwargs, where, aliases))
        if exchange.entry is None:
            return await _arecorded(exchange, real)
        seconds = _latency(exchange)
        if seconds:
            running = asyncio.get_running_loop()
            if isinstance(running, _loop.DeterministicEventLoop) and _loop.active_scheduler():
                await asyncio.sleep(seconds)
            elif self.session is not None:
                sleep_on(self.session.clock, seconds)
        return _resolve(exchange)


def _recorded(exchange: Exchange, real: Callable[[], Any]) -> Any:
    """Run the real tool, keeping its result (or error) in the ledger."""
    try:
        value = real()
    except BaseException as exc:
        exchange.error = exc
        raise
    exchange.reply = value
    return value


async def _arecorded(exchange: Exchange, real: Callable[[], Any]) -> Any:
    try:
        value = await real()
    except BaseException as exc:
        exchange.error = exc
        raise
    exchange.reply = value
    return value


def _latency(exchange: Exchange) -> float:
    """The scripted latency, counted in the calling method's ``usage.by_method``."""
    seconds = float(exchange.entry.options.get("latency") or 0.0) if exchange.entry else 0.0
    if seconds:
        usage.note(str(exchange.caller.get("method", "")), virtual_seconds=seconds)
    return seconds


def _resolve(exchange: Exchange) -> Any:
    try:
        value = exchange.resolve()
    except BaseException as exc:
        exchange.error = exc
        raise
    exchange.reply = value
    return value


def _usage(message: str) -> Exception:
    from pytest_flows._internal.errors import FlowsUsageError

    return FlowsUsageError(message)
