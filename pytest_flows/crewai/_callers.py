"""Who is asking: the user's flow method, and what crewai machinery calls an LLM.

crewai's own ``current_flow_method_name`` is overwritten by internal flows (an
Agent's executor is a Flow whose methods are ``call_llm_native_tools`` and
friends), so the fakes keep their own record: a stream sink sets a ContextVar
whenever a *user* flow method starts. Sinks run synchronously inside
``emit()`` in the emitting task's context, so the value follows that method
into its threads and tasks, including its ``@human_feedback`` step.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator
from typing import Any

from crewai.events.types.flow_events import MethodExecutionStartedEvent
from crewai.events.types.llm_events import LLMCallCompletedEvent
from crewai.events.types.tool_usage_events import ToolUsageErrorEvent, ToolUsageFinishedEvent
from crewai.flow.flow_context import current_flow_method_name, current_flow_name

from pytest_flows.adapters import TraceEvent, note_usage, render_value
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._compat import add_stream_sink, reset_stream_sinks

__all__ = [
    "FlowCaller",
    "crewai_purpose",
    "flow_caller",
    "llm_uses",
    "stream_sink",
    "tool_uses",
    "tracking",
]

_user_method: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "pytest_flows_user_method", default=None
)


class FlowCaller(dict[str, Any]):
    """``{"flow": ..., "method": ...}`` with only the keys that are known."""


def _sink(source: Any, event: Any) -> None:
    if isinstance(event, MethodExecutionStartedEvent) and not compat.is_crewai_internal(source):
        _user_method.set((str(event.flow_name), str(event.method_name)))


@contextlib.contextmanager
def stream_sink(sink: Callable[[Any, Any], None]) -> Iterator[None]:
    """``sink(source, event)`` sees every crewai event emitted in this context, until exit."""
    token = add_stream_sink(sink)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # reset from another context
            reset_stream_sinks(token)


def tracking() -> contextlib.AbstractContextManager[None]:
    """Record the running user flow method for the fakes, until exit."""
    return stream_sink(_sink)


@contextlib.contextmanager
def tool_uses(record: Callable[[TraceEvent], None]) -> Iterator[None]:
    """Record each tool an agent runs (``tool.used``): what the scripted tool call did."""

    def sink(source: Any, event: Any) -> None:
        if isinstance(event, ToolUsageFinishedEvent | ToolUsageErrorEvent):
            method = (_user_method.get() or ("", "-"))[1]
            note_usage(method, tool_calls=1, enforce=False)  # crewai's bus would log it away
            fields = [("method", method)]
            if event.agent_role:
                fields.append(("agent", str(event.agent_role)))
            fields.append(("args", render_value(event.tool_args, limit=80)))
            if isinstance(event, ToolUsageErrorEvent):
                fields.append(("error", render_value(str(event.error), limit=80)))
            else:
                fields.append(("output", render_value(event.output, limit=80)))
            record(TraceEvent(kind="tool.used", name=str(event.tool_name), fields=tuple(fields)))

    with stream_sink(sink):
        yield


@contextlib.contextmanager
def llm_uses() -> Iterator[None]:
    """Count the calls a real LLM answered (a replayed cassette, a recording) in
    ``FlowRun.usage``, with the tokens the provider reported; the fake LLM counts its own."""

    def sink(source: Any, event: Any) -> None:
        if not isinstance(event, LLMCallCompletedEvent):
            return
        if type(source).__module__.startswith("pytest_flows."):
            return
        reported = event.usage or {}
        tokens = reported.get("total_tokens") or (
            int(reported.get("prompt_tokens") or 0) + int(reported.get("completion_tokens") or 0)
        )
        method = (_user_method.get() or ("", "-"))[1]
        note_usage(method, llm_calls=1, tokens=int(tokens or 0), enforce=False)

    with stream_sink(sink):
        yield


def flow_caller() -> FlowCaller:
    caller = FlowCaller()
    current = _user_method.get()
    if current is not None:
        caller["flow"], caller["method"] = current
        return caller
    flow = current_flow_name.get()
    method = current_flow_method_name.get()
    if flow:
        caller["flow"] = flow
    if method and method != "unknown":
        caller["method"] = method
    return caller


# crewai functions that call an LLM for a purpose other than an agent's work,
# most specific first (classify_intent calls _collapse_to_outcome).
_PURPOSE_FRAMES: tuple[tuple[str, str], ...] = (
    ("classify_intent", "intent"),
    ("can_answer_from_history", "history"),
    ("answer_from_history_turn", "history"),
    ("_call_router_llm", "router"),
    ("converse_turn", "converse"),
    ("_pre_review_with_lessons", "learn"),
    ("_distill_and_store_lessons", "learn"),
    ("_collapse_to_outcome", "feedback"),
)
PURPOSE_FUNCTIONS = tuple(name for name, _ in _PURPOSE_FRAMES)
_MAX_DEPTH = 40


def crewai_purpose() -> tuple[str | None, dict[str, Any]]:
    """The purpose of the LLM call being made, from crewai frames on the stack.

    Returns the purpose (or None) and, for feedback classification, the
    ``feedback`` text and ``outcomes`` the runtime passed.
    """
    seen: dict[str, Any] = {}
    memory = False
    frame: Any = sys._getframe(1)
    depth = 0
    while frame is not None and depth < _MAX_DEPTH:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("crewai."):
            seen.setdefault(frame.f_code.co_name, frame)
            memory = memory or module.startswith("crewai.memory.")
        frame = frame.f_back
        depth += 1
    for name, purpose in _PURPOSE_FRAMES:
        found = seen.get(name)
        if found is None:
            continue
        extras: dict[str, Any] = {}
        if name == "_collapse_to_outcome":
            outcomes = found.f_locals.get("outcomes")
            if outcomes is not None:
                extras["outcomes"] = [str(o) for o in outcomes]
            extras["feedback"] = found.f_locals.get("feedback")
            extras["flow"] = found.f_locals.get("self")
        return purpose, extras
    if memory:
        return "memory", {}
    return None, {}
