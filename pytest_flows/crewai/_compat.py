"""What differs between the crewai versions the adapter supports, in one place.

The rest of the adapter imports these names from here instead of from crewai,
so an older crewai costs a branch in this module and nowhere else:

* ``crewai.events.stream_context`` (context-scoped event sinks, which the
  adapter records the trace through) is missing in crewai 1.14.x and 1.15.0
  (1.15.10 has it). There the same registry lives here, and the event bus publishes to it from
  ``_prepare_event``, the step every synchronous ``emit`` takes (as 1.15 does).
* ``crewai.llms.retry`` (the rate-limit retry of every LLM call) is new in
  crewai 1.15.23. Older versions make one attempt and let the error through,
  so here the retry runs the attempt once and never asks for a delay.
* ``FlowFailedEvent`` (a flow that raised) is missing in 1.14.x and 1.15.0; there a
  failed flow emits only ``MethodExecutionFailedEvent``, so the stand-in here is
  a class no event is an instance of.
* ``PendingFeedbackContext.execution_uuid`` and ``crewai.execution`` are missing
  in 1.15.10 and older; their contexts are built without it.
* Declarative ``call: agent`` steps (``crewai.flow.runtime._actions``, missing
  in 1.14.x) and conversational flows (``crewai.flow.conversational_mixin``,
  missing in 1.15.10 and older): where they are missing there is nothing to
  mark or patch, and those features of the harness are not available.
* crewai 1.14.x builds a flow's graph once per class (``Flow.flow_definition()``);
  1.15 gives each flow its own ``_definition`` (conversational flows extend
  it). :func:`flow_definition` reads whichever this crewai has.
* crewai 1.14.x hands out ``flow.state`` wrapped in a ``StateProxy`` (writes under
  a lock); 1.15 hands out the state itself. :func:`bare_state` is the state.
* ``Flow.is_crewai_internal`` (crewai's own flows, such as the agent executor, that
  are not the user's) is new in 1.15; crewai 1.14.x runs its ``AgentExecutor``
  (``crewai.experimental.agent_executor``) as a flow without the marker.
  :func:`is_crewai_internal` reads the marker, else the flow class's module.
* crewai 1.14.x emits no ``FlowFailedEvent`` (see above): there the adapter writes
  the ``flow failed`` trace line itself (``HAS_FLOW_FAILED_EVENT``).
* ``BaseLLM._effective_stream`` (a call-scoped stream override) is new in 1.15;
  crewai 1.14.x streams when ``llm.stream`` says so.
* ``Flow._resolve_feedback_provider`` and ``_request_human_feedback(method_name=)``
  are new in 1.15: crewai 1.14.x picks a ``@human_feedback`` step's provider inside
  the decorator's closure (``crewai/flow/human_feedback.py``,
  ``_build_feedback_context``), where :mod:`pytest_flows.crewai._human_patches`
  takes it over instead.
* ``@human_feedback(learn=True)``'s helpers became module functions of
  ``crewai.flow.human_feedback`` in 1.15 (closures in 1.14.x).
* ``crewai.utilities.string_utils.sanitize_tool_name`` (the name the model,
  the tool-usage events and the trace use for a tool) may be missing in older
  versions; there a tool goes by its declared name only (:func:`tool_names`).
* ``SQLiteFlowPersistence`` encodes states with ``json.dumps(default=
  _json_default)`` since 1.15.23; older versions call ``json.dumps`` without
  a default (a state field json cannot encode fails the save).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import importlib.util
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = [
    "HAS_EFFECTIVE_STREAM",
    "HAS_FEEDBACK_PROVIDER_RESOLVER",
    "HAS_FLOW_FAILED_EVENT",
    "HAS_INSTANCE_DEFINITION",
    "HAS_RATE_LIMIT_RETRY",
    "HAS_SQLITE_JSON_DEFAULT",
    "HAS_STREAM_CONTEXT",
    "SQLITE_ENCODE_CALL",
    "FlowFailedEvent",
    "add_stream_sink",
    "agent_action",
    "arun_with_rate_limit_retry",
    "bare_state",
    "conversational_mixin",
    "effective_stream",
    "execution_uuid_fields",
    "flow_definition",
    "get_retry_delay_seconds",
    "is_crewai_internal",
    "reset_stream_sinks",
    "retry_after_seconds",
    "run_with_rate_limit_retry",
    "sqlite_json_default",
    "tool_names",
]

_T = TypeVar("_T")
StreamSink = Callable[[Any, Any], None]


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


HAS_STREAM_CONTEXT = _has_module("crewai.events.stream_context")
HAS_RATE_LIMIT_RETRY = _has_module("crewai.llms.retry")
_RUNTIME: Any = importlib.import_module("crewai.flow.runtime")
_RUNTIME_FLOW: Any = _RUNTIME.Flow
#: each flow has its own graph, ``flow._definition`` (crewai >= 1.15)
HAS_INSTANCE_DEFINITION = "_definition" in _RUNTIME_FLOW.__private_attributes__
#: ``Flow._resolve_feedback_provider`` picks a feedback step's provider (crewai >= 1.15)
HAS_FEEDBACK_PROVIDER_RESOLVER = hasattr(_RUNTIME_FLOW, "_resolve_feedback_provider")
#: ``BaseLLM._effective_stream``, the call-scoped stream mode (crewai >= 1.15)
HAS_EFFECTIVE_STREAM = hasattr(
    importlib.import_module("crewai.llms.base_llm").BaseLLM, "_effective_stream"
)
HAS_SQLITE_JSON_DEFAULT = hasattr(
    importlib.import_module("crewai.flow.persistence.sqlite"), "_json_default"
)


# -- stream sinks ---------------------------------------------------------------------

_stream_sinks: contextvars.ContextVar[tuple[StreamSink, ...]] = contextvars.ContextVar(
    "pytest_flows_crewai_stream_sinks", default=()
)


def _own_add_stream_sink(sink: StreamSink) -> contextvars.Token[tuple[StreamSink, ...]]:
    return _stream_sinks.set((*_stream_sinks.get(), sink))


def _own_reset_stream_sinks(token: contextvars.Token[tuple[StreamSink, ...]]) -> None:
    _stream_sinks.reset(token)


def _publish(source: Any, event: Any) -> None:
    for sink in _stream_sinks.get():
        sink(source, event)


def publishing(prepare: Callable[[Any, Any, Any], None]) -> Callable[[Any, Any, Any], None]:
    """``CrewAIEventsBus._prepare_event`` that also hands the event to this context's sinks."""
    if getattr(prepare, "_pytest_flows_publishes", False):
        return prepare

    @functools.wraps(prepare)
    def prepare_and_publish(bus: Any, source: Any, event: Any) -> None:
        prepare(bus, source, event)
        # after the ids are set, as crewai 1.15 publishes: sinks see the finished event
        _publish(source, event)

    prepare_and_publish._pytest_flows_publishes = True  # type: ignore[attr-defined]
    return prepare_and_publish


if HAS_STREAM_CONTEXT:
    from crewai.events.stream_context import (
        add_stream_sink,
        reset_stream_sinks,
    )
else:
    add_stream_sink = _own_add_stream_sink
    reset_stream_sinks = _own_reset_stream_sinks
    # Process-wide and idempotent: the registry is useless unless the bus publishes to it.
    from crewai.events.event_bus import CrewAIEventsBus

    CrewAIEventsBus._prepare_event = publishing(CrewAIEventsBus._prepare_event)  # type: ignore[method-assign,assignment]


# -- rate-limit retry -------------------------------------------------------------------


def _once(attempt: Callable[[], _T], *, sleep: Callable[[float], None] | None = None) -> _T:
    return attempt()


async def _aonce(
    attempt: Callable[[], Awaitable[_T]],
    *,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> _T:
    return await attempt()


def _no_delay(retry_number: int, **_: Any) -> float:
    raise RuntimeError(  # _once never sleeps, so nothing asks for a delay
        "crewai < 1.15.23 does not retry rate-limited LLM calls; there is no retry delay"
    )


run_with_rate_limit_retry: Callable[..., Any]
arun_with_rate_limit_retry: Callable[..., Any]
get_retry_delay_seconds: Callable[..., float]
if HAS_RATE_LIMIT_RETRY:
    from crewai.llms.retry import (
        arun_with_rate_limit_retry,
        get_retry_delay_seconds,
        run_with_rate_limit_retry,
    )
else:
    run_with_rate_limit_retry = _once
    arun_with_rate_limit_retry = _aonce
    get_retry_delay_seconds = _no_delay


def retry_after_seconds(error: BaseException) -> float | None:
    """crewai's reading of a ``Retry-After`` hint on a provider error (None: no retry)."""
    if not HAS_RATE_LIMIT_RETRY:
        return None
    from crewai.llms.retry import _retry_after_seconds

    value: float | None = _retry_after_seconds(error)
    return value


# -- the SQLite persistence codec ----------------------------------------------------------


#: how ``SQLiteFlowPersistence._save_state_sql`` encodes a state, in this crewai's source
SQLITE_ENCODE_CALL = (
    "json.dumps(state_dict, default=_json_default)"
    if HAS_SQLITE_JSON_DEFAULT
    else "json.dumps(state_dict)"
)


def sqlite_json_default() -> Callable[[Any], Any] | None:
    """The ``default=`` ``SQLiteFlowPersistence`` passes to ``json.dumps`` (None: none)."""
    from crewai.flow.persistence import sqlite

    default: Callable[[Any], Any] | None = getattr(sqlite, "_json_default", None)
    return default


# -- added during crewai 1.15 -----------------------------------------------------------------


class _NeverEmitted:
    """Stands in for an event class this crewai does not have: nothing is an instance."""


_flow_events = importlib.import_module("crewai.events.types.flow_events")
FlowFailedEvent: type = getattr(_flow_events, "FlowFailedEvent", _NeverEmitted)
#: a flow that raised emits FlowFailedEvent (crewai >= 1.15)
HAS_FLOW_FAILED_EVENT = FlowFailedEvent is not _NeverEmitted


def agent_action() -> type | None:
    """``AgentAction`` of declarative ``call: agent`` steps (None: no declarative flows)."""
    if not _has_module("crewai.flow.runtime._actions"):
        return None
    action: type = importlib.import_module("crewai.flow.runtime._actions").AgentAction
    return action


def conversational_mixin() -> type | None:
    """The mixin conversational flows are built from (None: this crewai has none)."""
    if not _has_module("crewai.flow.conversational_mixin"):
        return None
    mixin: type = importlib.import_module("crewai.flow.conversational_mixin")._ConversationalMixin
    return mixin


def execution_uuid_fields() -> dict[str, Any]:
    """``PendingFeedbackContext``'s ``execution_uuid=`` argument, where it has one."""
    if not _has_module("crewai.execution"):
        return {}
    from crewai.execution import get_execution_uuid

    return {"execution_uuid": get_execution_uuid()}


def flow_definition(flow: Any) -> Any:
    """The ``FlowDefinition`` a flow runs: its own (1.15) or its class's (1.14)."""
    if not HAS_INSTANCE_DEFINITION:
        return type(flow).flow_definition()
    global _last_definition
    last = _last_definition
    if last is not None and last[0]() is flow:
        return last[1]
    definition = flow._definition
    with contextlib.suppress(TypeError):  # a flow that takes no weak reference: no reuse
        _last_definition = (weakref.ref(flow), definition)
    return definition


#: The last flow asked about and its definition. The trace reads the graph at every
#: method event, through pydantic's private-attribute lookup (a failed attribute
#: lookup first: about 3 us); crewai sets ``_definition`` once, in ``_flow_post_init``,
#: before the flow emits anything. Weak: a flow must not outlive its test here.
_last_definition: tuple[weakref.ref[Any], Any] | None = None


def effective_stream(llm: Any) -> bool | None:
    """Whether this LLM call streams: the call-scoped override (1.15) or ``llm.stream``."""
    if HAS_EFFECTIVE_STREAM:
        stream: bool | None = llm._effective_stream()
        return stream
    return getattr(llm, "stream", None)


_StateProxy: Any = getattr(_RUNTIME, "StateProxy", None)


def bare_state(flow: Any) -> Any:
    """``flow.state`` without crewai 1.14's ``StateProxy`` around it."""
    state = flow.state
    if _StateProxy is not None and isinstance(state, _StateProxy):
        return object.__getattribute__(state, "_proxy_state")
    return state


_INTERNAL_FLOW_MODULES = ("crewai.experimental.", "crewai.agents.")


def is_crewai_internal(source: Any) -> bool:
    """A flow crewai runs for itself (an agent's executor), not one the user wrote."""
    cls = type(source)
    marker = getattr(cls, "is_crewai_internal", None)
    if marker is not None:
        return bool(marker)
    # crewai 1.14.x: no marker; its own flows are the ones its modules define
    return str(getattr(cls, "__module__", "")).startswith(_INTERNAL_FLOW_MODULES)


def tool_names(name: str) -> tuple[str, ...]:
    """A tool's names: the declared one, then the sanitized one crewai shows the model."""
    try:
        from crewai.utilities.string_utils import sanitize_tool_name
    except ImportError:  # pragma: no cover - older crewai
        return (name,)
    sanitized = sanitize_tool_name(name)
    return (name,) if sanitized == name else (name, sanitized)
