"""``fake_crews``: scripted ``CrewOutput`` s for crew kickoffs and declarative agent steps.

While bound, ``Crew.kickoff``/``kickoff_async``/``akickoff`` (so also
``kickoff_for_each`` and declarative ``call: crew`` steps) and declarative
``call: agent`` steps answer from the script instead of running agents. A
rule may also let a crew run for real (on ``fake_llm``).

Request keys: ``caller`` has ``flow``, ``method``, ``kind`` (``crew`` or
``agent``), ``crew`` (the crew's name), ``agent`` (the agents' roles) and
``inputs``; ``prompt`` is the inputs as sorted JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from crewai.agent.core import Agent
from crewai.crew import Crew
from crewai.utilities.agent_utils import is_inside_event_loop
from pydantic import BaseModel

from pytest_flows import loop as _loop
from pytest_flows import usage
from pytest_flows._durations import check_duration
from pytest_flows.crewai import callers, patches
from pytest_flows.crewai.crew_outputs import (
    CrewReply,
    crew_output,
    error_fields,
    summary,
    to_agent_output,
    to_crew_output,
)
from pytest_flows.script import (
    Exchange,
    Match,
    Request,
    Script,
    Times,
    code,
    short,
)
from pytest_flows.threads import sleep_on
from pytest_flows.trace import TraceEvent, render_value

if TYPE_CHECKING:
    from pytest_flows.session import FlowsSession

__all__ = ["RUN_FOR_REAL", "CrewReply", "CrewRule", "FakeCrews", "crew_output", "install"]

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


class CrewRule:
    """Replies for the kickoffs :meth:`FakeCrews.on` described."""

    def __init__(self, owner: FakeCrews, match: Match) -> None:
        self._owner = owner
        self._match = match

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


class FakeCrews:
    """Scripted crew results (the ``fake_crews`` fixture)."""

    def __init__(self, session: FlowsSession | None = None) -> None:
        self.session = session
        self.script = Script(
            fixture=_FIXTURE,
            noun="crew kickoff",
            reply_noun="crew result",
            suggest=_suggest,
            describe=_describe,
        )

    # -- scripting -------------------------------------------------------------
    def reply(
        self, *values: Any, times: Times = 1, optional: bool = False, latency: float = 0.0
    ) -> FakeCrews:
        """Answer the next kickoffs, in order, with ``values``.

        A value is text (the raw output), a pydantic model or dict (structured
        output, validated against the last task's ``output_pydantic`` /
        ``output_json``), a :func:`crew_output`, a ``CrewOutput``, an
        exception to raise, ``RUN_FOR_REAL``, or a callable ``f(request)``
        (it receives the :class:`~pytest_flows.script.Request`:
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
        prefix = _FIXTURE if match is None else f"{_FIXTURE}.on({match.describe()})"
        extra = "" if times == 1 else f", times={code(times)}"
        for value in values:
            verb = (
                f"run_for_real({extra[2:]})"
                if value is RUN_FOR_REAL
                else f"reply({_label(value)}{extra})"
            )
            self.script.add(
                value,
                match=match,
                times=times,
                optional=optional,
                label=f"{prefix}.{verb}",
                options={"latency": latency},
            )

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

    def allow_unused(self) -> None:
        """Don't fail this test for scripted results nobody used."""
        self.script.check_unused = False

    # -- answering (called by the patches) -------------------------------------------
    def _request_for_crew(self, crew: Any, inputs: Any, entry: str) -> Request:
        tasks = list(getattr(crew, "tasks", None) or [])
        # YAML `role: >` leaves a trailing newline nobody means to match.
        roles = [
            str(a.role).strip()
            for a in getattr(crew, "agents", None) or []
            if getattr(a, "role", None)
        ]
        for task in tasks:
            role = getattr(getattr(task, "agent", None), "role", None)
            if role and str(role).strip() not in roles:
                roles.append(str(role).strip())
        last = tasks[-1] if tasks else None
        model = None
        if last is not None:
            model = getattr(last, "output_pydantic", None) or getattr(last, "output_json", None)
        caller: dict[str, Any] = dict(callers.flow_caller())
        caller.update(
            kind="crew", crew=str(getattr(crew, "name", None) or "crew").strip(), agent=roles
        )
        caller["inputs"] = dict(inputs or {})
        return Request(
            caller=caller,
            prompt=json.dumps(caller["inputs"], sort_keys=True, default=str),
            response_model=model,
            purpose="crew",
            data={
                "inputs": dict(inputs or {}),
                "entry": entry,
                "tasks": [
                    str(getattr(t, "name", None) or getattr(t, "description", "")).strip()
                    for t in tasks
                ],
            },
        )

    def _request_for_agent(self, agent: Any, prompt: Any, response_format: Any) -> Request:
        caller: dict[str, Any] = dict(callers.flow_caller())
        caller.update(kind="agent", agent=[str(getattr(agent, "role", "agent")).strip()])
        text = prompt if isinstance(prompt, str) else json.dumps(prompt, default=str)
        caller["inputs"] = {"input": text}
        return Request(
            caller=caller,
            prompt=text,
            messages=[] if isinstance(prompt, str) else list(prompt),
            response_model=response_format,
            purpose="agent-step",
            data={"inputs": {"input": text}, "entry": "agent step"},
        )

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


# -- the patches -------------------------------------------------------------------------
_real: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "pytest_flows_real_crew", default=False
)


#: crewai's own words when a sync kickoff runs inside an event loop
#: (``Agent._execute_without_timeout``); a flow's ``except RuntimeError`` sees the same.
SYNC_KICKOFF_IN_LOOP = (
    "Agent execution was invoked synchronously from within a running "
    "event loop. Use `agent.kickoff_async()` / `crew.kickoff_async()` "
    "(or `await agent.aexecute_task(...)`) when calling from async code."
)


def _refuse_sync_kickoff_in_loop(crew: Any) -> None:
    """Fail a scripted ``kickoff()`` where crewai's real one fails: inside a running loop."""
    if not getattr(crew, "tasks", None) or not is_inside_event_loop():
        return
    error = RuntimeError(SYNC_KICKOFF_IN_LOOP)
    error.add_note(
        "pytest-flows: the crew is scripted, and fails here as crewai's real kickoff "
        "does: an async flow method must `await crew.kickoff_async()` (or akickoff())."
    )
    raise error


def check_crew_seams() -> None:
    """Raise AssertionError naming the crewai behaviour fake_crews mimics that moved."""
    problems = []
    if "invoked synchronously from within a running" not in inspect.getsource(
        Agent._execute_without_timeout
    ):
        problems.append("Agent._execute_without_timeout no longer refuses a sync kickoff in a loop")
    if "asyncio.to_thread(self.kickoff" not in inspect.getsource(Crew.kickoff_async):
        problems.append("Crew.kickoff_async no longer runs kickoff on a worker thread")
    if problems:
        raise AssertionError(
            "pytest-flows' crewai crew seams moved (crewai upgrade?): " + "; ".join(problems)
        )


@contextlib.contextmanager
def _for_real() -> Iterator[None]:
    token = _real.set(True)
    try:
        yield
    finally:
        _real.reset(token)


def _scripted_kickoff(fake: FakeCrews, original: Any, entry: str) -> Any:
    def kickoff(self: Any, inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
        if _real.get():
            return original(self, inputs, *args, **kwargs)
        request = fake._request_for_crew(self, inputs, entry)
        try:
            exchange, value = fake.take(request)
            if value is RUN_FOR_REAL:
                fake.record(request, (("run", "real"),))
                with _for_real():
                    output = original(self, inputs, *args, **kwargs)
            else:
                _refuse_sync_kickoff_in_loop(self)
                fake.wait(exchange)
                output = to_crew_output(self, value, request)
        except BaseException as exc:
            fake.record(request, error_fields(exc))
            raise
        exchange.reply = output
        if value is not RUN_FOR_REAL:
            fake.record(request, summary(output))
        return output

    return kickoff


def _scripted_kickoff_async(fake: FakeCrews, original_kickoff: Any, original: Any) -> Any:
    # crewai's kickoff_async is `await asyncio.to_thread(self.kickoff, ...)`: the
    # scripted one runs on a worker thread too, so the scheduler interleaves
    # concurrent kickoffs (and their latency) as it would the real ones.
    kickoff = _scripted_kickoff(fake, original_kickoff, "kickoff_async")

    async def kickoff_async(self: Any, inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
        if _real.get() or getattr(self, "stream", False):
            return await original(self, inputs, *args, **kwargs)
        return await asyncio.to_thread(kickoff, self, inputs, *args, **kwargs)

    return kickoff_async


def _scripted_akickoff(fake: FakeCrews, original: Any, entry: str) -> Any:
    async def akickoff(self: Any, inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
        if _real.get():
            return await original(self, inputs, *args, **kwargs)
        request = fake._request_for_crew(self, inputs, entry)
        try:
            exchange, value = fake.take(request)
            if value is RUN_FOR_REAL:
                fake.record(request, (("run", "real"),))
                with _for_real():
                    output = await original(self, inputs, *args, **kwargs)
            else:
                await fake.await_latency(exchange)
                output = to_crew_output(self, value, request)
        except BaseException as exc:
            fake.record(request, error_fields(exc))
            raise
        exchange.reply = output
        if value is not RUN_FOR_REAL:
            fake.record(request, summary(output))
        return output

    return akickoff


def _scripted_agent_kickoff(fake: FakeCrews, original: Any) -> Any:
    """``Agent.kickoff_async`` inside a declarative ``call: agent`` step answers from
    the script; anywhere else the agent runs as usual."""

    async def kickoff_async(
        self: Any, messages: Any, response_format: Any = None, **kw: Any
    ) -> Any:
        if not patches.in_agent_step():
            return await original(self, messages, response_format=response_format, **kw)
        request = fake._request_for_agent(self, messages, response_format)
        try:
            exchange, value = fake.take(request)
            if value is RUN_FOR_REAL:
                fake.record(request, (("run", "real"),))
                with patches.outside_agent_step():
                    output = await original(self, messages, response_format=response_format, **kw)
            else:
                output = to_agent_output(self, value, request)
        except BaseException as exc:
            fake.record(request, error_fields(exc))
            raise
        exchange.reply = output
        if value is not RUN_FOR_REAL:
            fake.record(request, summary(output))
        return output

    return kickoff_async


@contextlib.contextmanager
def install(session: FlowsSession, fake: FakeCrews) -> Iterator[None]:
    """Bind ``fake`` for one test: crew kickoffs and agent steps answer from its script."""
    originals = {name: Crew.__dict__[name] for name in ("kickoff", "kickoff_async", "akickoff")}
    with contextlib.ExitStack() as stack:
        stack.enter_context(callers.tracking())
        setattr(Crew, "kickoff", _scripted_kickoff(fake, originals["kickoff"], "kickoff"))  # noqa: B010
        setattr(  # noqa: B010
            Crew,
            "kickoff_async",
            _scripted_kickoff_async(fake, originals["kickoff"], originals["kickoff_async"]),
        )
        setattr(Crew, "akickoff", _scripted_akickoff(fake, originals["akickoff"], "akickoff"))  # noqa: B010
        for name, original in originals.items():
            stack.callback(setattr, Crew, name, original)
        original_agent_kickoff = Agent.__dict__["kickoff_async"]
        setattr(Agent, "kickoff_async", _scripted_agent_kickoff(fake, original_agent_kickoff))  # noqa: B010
        stack.callback(setattr, Agent, "kickoff_async", original_agent_kickoff)
        stack.enter_context(patches.marking_agent_steps())
        yield


def _usage(message: str) -> Exception:
    from pytest_flows.errors import FlowsUsageError

    return FlowsUsageError(message)
