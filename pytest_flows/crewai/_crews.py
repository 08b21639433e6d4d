"""crewai's side of ``fake_crews`` (:mod:`pytest_flows._internal.fakes.crew_script`): scripted
``CrewOutput`` s for crew kickoffs and declarative agent steps.

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
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from crewai.agent.core import Agent
from crewai.crew import Crew
from crewai.utilities.agent_utils import is_inside_event_loop

from pytest_flows.adapters import RUN_FOR_REAL, CrewReply, CrewRule, FakeCrews, Request, crew_output
from pytest_flows.crewai import _callers as callers
from pytest_flows.crewai import _patches as patches
from pytest_flows.crewai._crew_outputs import (
    error_fields,
    summary,
    to_agent_output,
    to_crew_output,
)
from pytest_flows.crewai._seams import SEAMS

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = [  # the scripting side is the core's (crew_script); importable from here too
    "RUN_FOR_REAL",
    "CrewReply",
    "CrewRule",
    "FakeCrews",
    "crew_output",
    "install",
    "request_for_agent",
    "request_for_crew",
]


# -- the requests --------------------------------------------------------------------------
def request_for_crew(crew: Any, inputs: Any, entry: str) -> Request:
    tasks = list(getattr(crew, "tasks", None) or [])
    # YAML `role: >` leaves a trailing newline nobody means to match.
    roles = [
        str(a.role).strip() for a in getattr(crew, "agents", None) or [] if getattr(a, "role", None)
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
    caller.update(kind="crew", crew=str(getattr(crew, "name", None) or "crew").strip(), agent=roles)
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


def request_for_agent(agent: Any, prompt: Any, response_format: Any) -> Request:
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
        request = request_for_crew(self, inputs, entry)
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
        request = request_for_crew(self, inputs, entry)
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
        request = request_for_agent(self, messages, response_format)
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
        kickoff = _scripted_kickoff(fake, originals["kickoff"], "kickoff")
        stack.enter_context(SEAMS["crewai.crew:Crew.kickoff"].replace(kickoff))
        kickoff_async = _scripted_kickoff_async(
            fake, originals["kickoff"], originals["kickoff_async"]
        )
        stack.enter_context(SEAMS["crewai.crew:Crew.kickoff_async"].replace(kickoff_async))
        akickoff = _scripted_akickoff(fake, originals["akickoff"], "akickoff")
        stack.enter_context(SEAMS["crewai.crew:Crew.akickoff"].replace(akickoff))
        agent_kickoff = _scripted_agent_kickoff(fake, Agent.__dict__["kickoff_async"])
        stack.enter_context(SEAMS["crewai.agent.core:Agent.kickoff_async"].replace(agent_kickoff))
        stack.enter_context(patches.marking_agent_steps())
        yield


def _usage(message: str) -> Exception:
    from pytest_flows.adapters import FlowsUsageError

    return FlowsUsageError(message)
