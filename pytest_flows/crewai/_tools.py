"""``fake_tools`` for crewai: tool bodies answered by the test's script.

While bound, the *body* of every crewai tool - a ``@tool`` function, a
``BaseTool`` subclass's ``_run`` / ``_arun`` - asks the script
(:class:`~pytest_flows._internal.fakes.tool_script.FakeTools`) first. What surrounds the body
still runs as crewai runs it: argument validation, ``max_usage_count``, the
tool cache, tool-usage events, hooks, the text (ReAct) and native
tool-calling loops. So a scripted reply is cached, counted and reported
exactly as the real tool's result would be.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from crewai.events.types.agent_events import (
    AgentExecutionStartedEvent,
    LiteAgentExecutionStartedEvent,
)
from crewai.tools.base_tool import BaseTool

from pytest_flows.adapters import FakeTools
from pytest_flows.crewai import _callers as callers
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._seams import SEAMS

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = ["FakeTools", "install"]

_BASE = "crewai.tools.base_tool"


def _tool_classes() -> list[type]:
    seen: list[type] = []
    pending: list[type] = [BaseTool]
    while pending:
        cls = pending.pop()
        subclasses: list[type] = cls.__subclasses__()
        for sub in subclasses:
            if sub not in seen:
                seen.append(sub)
                pending.append(sub)
    return seen


def _names(tool: Any) -> tuple[str, ...]:
    return compat.tool_names(str(getattr(tool, "name", type(tool).__name__)))


def _agents_tools(fake: FakeTools) -> Callable[[Any, Any], None]:
    """A sink noting each starting agent's tools, so a scripted name that is none of
    them is reported with the names they go by."""

    def sink(source: Any, event: Any) -> None:
        if isinstance(event, AgentExecutionStartedEvent | LiteAgentExecutionStartedEvent):
            for tool in event.tools or ():
                fake.know(*_names(tool))

    return sink


def _sync_body(fake: FakeTools, original: Callable[..., Any]) -> Callable[..., Any]:
    def _run(self: Any, *args: Any, **kwargs: Any) -> Any:
        def real() -> Any:
            return original(self, *args, **kwargs)

        return fake.call(self, args, kwargs, real, dict(callers.flow_caller()), _names(self))

    _run.__pytest_flows_fake__ = True  # type: ignore[attr-defined]
    return _run


def _async_body(fake: FakeTools, original: Callable[..., Any]) -> Callable[..., Any]:
    async def _arun(self: Any, *args: Any, **kwargs: Any) -> Any:
        async def real() -> Any:
            return await original(self, *args, **kwargs)

        return await fake.acall(self, args, kwargs, real, dict(callers.flow_caller()), _names(self))

    _arun.__pytest_flows_fake__ = True  # type: ignore[attr-defined]
    return _arun


@contextlib.contextmanager
def install(session: FlowsSession, fake: FakeTools) -> Iterator[None]:
    """Bind ``fake`` for one test: every tool class's body asks its script first."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(callers.tracking())
        stack.enter_context(callers.stream_sink(_agents_tools(fake)))
        # Tool.run calls self.func directly; BaseTool.run is the same steps
        # (validate, claim a use, run the body) through self._run, which we wrap.
        stack.enter_context(SEAMS[f"{_BASE}:Tool.run"].replace(BaseTool.__dict__["run"]))
        for cls in _tool_classes():
            for name, wrap in (("_run", _sync_body), ("_arun", _async_body)):
                original = cls.__dict__.get(name)
                if original is None or getattr(original, "__pytest_flows_fake__", False):
                    continue
                if getattr(original, "__isabstractmethod__", False):
                    continue
                stack.enter_context(
                    SEAMS[f"{_BASE}:BaseTool.{name}"].shadow(cls, wrap(fake, original))
                )
        yield
