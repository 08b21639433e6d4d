"""The ``fake_crews`` fixture's scripting side: scripted results for crew kickoffs.

A *crew* is a team of agents a flow kicks off as one call (crewai's ``Crew``,
a declarative agent step). :class:`FakeCrews` is what a test writes to
(``reply``, ``on``, ``RUN_FOR_REAL``) and reads (``calls``, ``inputs``); a
framework adapter's ``bind_crews`` builds the :class:`~pytest_flows._internal.fakes.script.Request`
of each kickoff, takes the scripted reply here and turns it into the
framework's own result (crewai: :mod:`pytest_flows.crewai._crews`).

Request keys: ``caller`` has ``flow``, ``method``, ``kind`` (``crew`` or
``agent``), ``crew`` (the crew's name), ``agent`` (the agents' roles) and
``inputs``; ``prompt`` is the inputs as sorted JSON.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

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
from pytest_flows._internal.runtime import loop as _loop
from pytest_flows._internal.runtime.participants import sleep_on
from pytest_flows._internal.trace import TraceEvent, render_value

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["RUN_FOR_REAL", "CrewReply", "CrewRule", "FakeCrews", "crew_output"]


@dataclass(frozen=True)
class CrewReply:
    """A full scripted crew result; see :func:`crew_output`."""

    raw: str | None = None
    pydantic: BaseModel | None = None
    json_dict: dict[str, Any] | None = None
    tasks: tuple[Any, ...] = field(default_factory=tuple)


def crew_output(
    raw: str | None = None,
    *,
    pydantic: BaseModel | None = None,
    json_dict: dict[str, Any] | None = None,
    tasks: Sequence[Any] = (),
) -> CrewReply:
    """A scripted crew result: the final result plus, optionally, each task's output.

    ``raw`` alone, for a last task with a structured output type, is parsed
    into that model when it fits; when it does not (the model "returned
    garbage"), the output keeps the text with ``pydantic`` and ``json_dict``
    None, as crewai's does. A plain text reply that does not fit is a script
    error instead.

    ``tasks`` gives one entry per crew task, in order (text, a dict, a pydantic
    model or the framework's task output); descriptions and agents are taken
    from the crew. Without ``tasks``, the final task's output stands for all.
    """
    return CrewReply(raw=raw, pydantic=pydantic, json_dict=json_dict, tasks=tuple(tasks))


_FIXTURE = "fake_crews"


class _RunForReal:
    def __repr__(self) -> str:
        return "RUN_FOR_REAL"


#: A reply that lets the crew (or agent) really run - on ``fake_llm``.
RUN_FOR_REAL: Any = _RunForReal()


def _label(value: Any) -> str:
    if isinstance(value, BaseModel):
        return f"{type(value).__name__}(...)"
    if isinstance(value, CrewReply):
        return "crew_output(...)"
    if value is RUN_FOR_REAL:
        return "RUN_FOR_REAL"
    if callable(value) and not isinstance(value, type):
        return f"<{getattr(value, '__name__', 'callable')}>"
    return code(value)


def _suggest(request: Request) -> str:
    caller = request.caller
    model = request.response_model
    value = '"..."'
    if model is not None and getattr(model, "model_fields", None):
        value = f"{model.__name__}(...)"
    if caller.get("kind") == "agent":
        return f'{_FIXTURE}.on(agent="{_first(caller.get("agent"))}").reply({value})'
    crew = caller.get("crew")
    if crew and crew != "crew":
        return f'{_FIXTURE}.on(crew="{crew}").reply({value})'
    if caller.get("agent"):
        return f'{_FIXTURE}.on(agent="{_first(caller["agent"])}").reply({value})'
    return f"{_FIXTURE}.reply({value})"


def _first(value: Any) -> str:
    if isinstance(value, list | tuple):
        return str(value[0]) if value else ""
    return str(value)


def _describe(request: Request) -> list[str]:
    lines = []
    tasks = request.data.get("tasks") or []
    if tasks:
        lines.append("tasks:")
        lines.extend(f"  - {short(task, 90)}" for task in tasks)
    model = request.response_model
    if model is not None:
        lines.append(f"expects: {getattr(model, '__name__', model)} (the last task's output type)")
    return lines


class CrewRule(Rule["FakeCrews"]):
    """Replies for the kickoffs :meth:`FakeCrews.on` described."""

    def reply(
        self, *values: Any, times: Times = 1, optional: bool = False, latency: float = 0.0
    ) -> CrewRule:
        """Answer matching kickoffs with ``values`` in order (each ``times`` times).

        ``latency`` is how long each kickoff takes, in virtual seconds.
        """
        self._owner._add(values, self._match, times, optional, latency)
        return self

    def run_for_real(self, *, times: Times = 1, optional: bool = False) -> CrewRule:
        """Let matching kickoffs run for real (their agents call ``fake_llm``)."""
        self._owner._add((RUN_FOR_REAL,), self._match, times, optional)
        return self


class FakeCrews(ScriptedFake):
    """Scripted crew results (the ``fake_crews`` fixture)."""

    def __init__(self, session: FlowsSession | None = None) -> None:
        super().__init__(session, _FIXTURE, "crew kickoff", "crew result", _suggest, _describe)

    # -- scripting -------------------------------------------------------------
    def reply(
        self, *values: Any, times: Times = 1, optional: bool = False, latency: float = 0.0
    ) -> FakeCrews:
        """Answer the next kickoffs, in order, with ``values``.

        A value is text (the raw output), a pydantic model or dict (structured
        output, validated against the last task's ``output_pydantic`` /
        ``output_json``), a :func:`crew_output`, a ``CrewOutput``, an
        exception to raise, ``RUN_FOR_REAL``, or a callable ``f(request)``
        (it receives the :class:`~pytest_flows._internal.fakes.script.Request`:
        ``request.caller["crew"]``, ``["agent"]`` (the roles), ``["inputs"]``,
        ``["method"]``, ``["flow"]``, ``["kind"]``). ``latency`` is how long
        each kickoff takes, in virtual seconds: concurrent ``kickoff_async``
        / ``akickoff`` calls overlap on the harness's clock.
        """
        self._add(values, None, times, optional, latency)
        return self

    def on(
        self,
        *,
        crew: Any = None,
        agent: Any = None,
        inputs: Any = None,
        method: Any = None,
        flow: Any = None,
        kind: Any = None,
        where: Callable[[Request], bool] | None = None,
    ) -> CrewRule:
        """Replies for matching kickoffs: ``fake_crews.on(crew="research").reply(...)``.

        ``agent`` matches any of the crew's agent roles; ``inputs`` a dict
        matches when those keys have those values (a subset); ``kind`` is
        ``"crew"`` or ``"agent"`` (declarative ``call: agent`` steps).
        """
        given = {
            "crew": crew,
            "agent": agent,
            "inputs": inputs,
            "method": method,
            "flow": flow,
            "kind": kind,
        }
        if kind is not None and kind not in ("crew", "agent"):
            raise _usage(f'fake_crews.on(kind={kind!r}): kind is "crew" or "agent".')
        conditions = tuple((k, v) for k, v in given.items() if v is not None)
        if not conditions and where is None:
            raise _usage(
                "fake_crews.on() needs at least one condition (crew=, agent=, inputs=, "
                "method=, flow=, kind= or where=); for results in kickoff order use "
                'fake_crews.reply("...").'
            )
        return CrewRule(self, Match(caller=conditions, where=where))

    def _add(
        self,
        values: tuple[Any, ...],
        match: Match | None,
        times: Times,
        optional: bool,
        latency: float = 0.0,
    ) -> None:
        if not values:
            raise _usage(
                'reply() needs at least one value: fake_crews.reply("the crew\'s answer").'
            )
        latency = check_duration("fake_crews.reply(latency=...)", latency)

        def verb(value: Any, extra: str) -> str:
            if value is RUN_FOR_REAL:
                return f"run_for_real({extra[2:]})"
            return f"reply({_label(value)}{extra})"

        self._script_each(values, match, times, optional, verb, {"latency": latency})

    # -- reading ----------------------------------------------------------------
    @property
    def calls(self) -> list[Exchange]:
        """Every kickoff so far (``.caller``, ``.data["inputs"]``, ``.reply``)."""
        return list(self.script.exchanges)

    def inputs(self, crew: str | None = None) -> list[dict[str, Any]]:
        """The inputs each kickoff received (of crew ``crew`` only, if given)."""
        return [
            dict(exchange.data.get("inputs") or {})
            for exchange in self.script.exchanges
            if crew is None or exchange.caller.get("crew") == crew
        ]

    def take(self, request: Request) -> tuple[Exchange, Any]:
        exchange = self.script.take(request)
        return exchange, exchange.resolve()

    # -- virtual time --------------------------------------------------------------
    def _latency(self, exchange: Exchange) -> float:
        seconds = float(exchange.entry.options.get("latency") or 0.0) if exchange.entry else 0.0
        if seconds:
            usage.note(str(exchange.caller.get("method", "")), virtual_seconds=seconds)
        return seconds

    def wait(self, exchange: Exchange) -> None:
        """A sync kickoff's latency: overlaps with sibling threads' waits."""
        seconds = self._latency(exchange)
        if seconds and self.session is not None:
            sleep_on(self.session.clock, seconds)

    async def await_latency(self, exchange: Exchange) -> None:
        """An async kickoff's latency: a virtual sleep other tasks run during."""
        seconds = self._latency(exchange)
        if not seconds:
            return
        running = asyncio.get_running_loop()
        if isinstance(running, _loop.DeterministicEventLoop) and _loop.active_scheduler():
            await asyncio.sleep(seconds)
        elif self.session is not None:
            sleep_on(self.session.clock, seconds)

    def record(self, request: Request, outcome: tuple[tuple[str, str], ...]) -> None:
        if self.session is None:
            return
        caller = request.caller
        kind = "agent.kickoff" if caller.get("kind") == "agent" else "crew.kickoff"
        name = _first(caller.get("agent")) if caller.get("kind") == "agent" else caller.get("crew")
        fields = [
            ("method", str(caller.get("method", "-"))),
            ("inputs", render_value(caller.get("inputs"))),
        ]
        self.session.record(TraceEvent(kind=kind, name=str(name), fields=(*fields, *outcome)))


def _usage(message: str) -> Exception:
    from pytest_flows._internal.errors import FlowsUsageError

    return FlowsUsageError(message)
