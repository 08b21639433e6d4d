"""Every reach into crewai that crewai does not promise to keep, declared once.

Each :class:`~pytest_flows._internal.contract.seams.Seam` names what the harness patches, the
private functions it calls and the private attributes it reads, why, and what it
relies on there. :func:`check_patch_points` resolves all of them (the test suite
calls it): after a crewai upgrade it fails once, listing each seam that moved,
the installed crewai and the supported range. A new private reach gets its line
here in the same change; code patches through ``SEAM.replace``/``SEAM.shadow`` or
:func:`pytest_flows._internal.contract.seams.replaced`.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_flows.adapters import Registry, Seam, framework_versions
from pytest_flows.adapters import check_seams as check
from pytest_flows.crewai import _compat as compat

__all__ = ["RECORDER_SEAMS", "SEAMS", "check_patch_points"]

_FLOW = "crewai.flow.runtime:Flow"
_BUS = "crewai.events.event_bus:CrewAIEventsBus"
_BASE_LLM = "crewai.llms.base_llm:BaseLLM"
_MIXIN = "crewai.flow.conversational_mixin:_ConversationalMixin"
_SQLITE = "crewai.flow.persistence.sqlite:SQLiteFlowPersistence"
_JSON_PROVIDER = "crewai.state.provider.json_provider:JsonProvider"
_SQLITE_PROVIDER = "crewai.state.provider.sqlite_provider:SqliteProvider"
_TOOL = "crewai.tools.base_tool"


def _has_fields(*names: str) -> Any:
    def probe(model: Any) -> str | None:
        missing = [n for n in names if n not in getattr(model, "model_fields", {})]
        return f"lost the fields {missing}" if missing else None

    return probe


def _locals(*names: str) -> Any:
    def probe(function: Any) -> str | None:
        missing = [n for n in names if n not in function.__code__.co_varnames]
        return f"has no locals {missing}" if missing else None

    return probe


def _coroutine(function: Any) -> str | None:
    import inspect

    return None if inspect.iscoroutinefunction(function) else "is no longer a coroutine function"


def _property(found: Any) -> str | None:
    if isinstance(found, property) and found.fget is not None:
        return None
    return "is no longer a property with a getter"


def _own_new(new: Any) -> str | None:
    from crewai.llm import LLM

    return None if "__new__" in vars(LLM) else "is inherited (LLM no longer routes in __new__)"


# crewai 1.14.x keeps the graph on the class (Flow.flow_definition()), 1.15 on each flow
_FLOW_PRIVATE = (
    *(("_definition",) if compat.HAS_INSTANCE_DEFINITION else ()),
    "_methods",
    "_completed_methods",
    "_is_execution_resuming",
)

# -- the runtime: event bus, races, flow state, the flow's graph -------------------------
RUNTIME = (
    Seam(
        "crewai.events.utils.console_formatter:ConsoleFormatter.handle_method_status",
        "patch",
        "a quiet run skips drawing the method-status panels nobody prints (shadowed on the "
        "event listener's formatter)",
    ),
    Seam(
        f"{_BUS}._ensure_executor_initialized",
        "call",
        "the bus's background loop is started outside any test (see loop.py)",
        params=("self",),
    ),
    Seam(
        f"{_BUS}.emit",
        "patch",
        "inline_event_bus replaces the bus's _sync_executor so sync handlers run inline",
        source=("self._sync_executor.submit(",),
    ),
    Seam(
        f"{_BUS}._prepare_event",
        "patch",
        "on crewai < 1.15 compat.py publishes every event to the context's sinks from it",
        params=("self", "source", "event"),
    ),
    Seam(
        f"{_BUS}._track_future",
        "read",
        "the handlers in flight (async ones on the bus's own loop) finish before virtual "
        "time jumps (crewai/patches.py, foreign_work.py)",
        source=("self._futures_lock", "self._pending_futures.add(future)"),
    ),
    Seam(
        f"{_BUS}._record_event",
        "patch",
        "while a schedule is followed, the run's EventRecord takes its lock quietly "
        "(_own_work.py: the order of two threads' adds is no part of an outcome)",
        params=("self", "event"),
        source=("self._runtime_state.event_record.add(event)",),
    ),
    Seam(
        "crewai.state.event_record:EventRecord.add",
        "read",
        "_own_work.py swaps the condition of the record's free RWLock (EventRecord._lock) "
        "for a quiet one; add takes it as a write lock and waits for nothing inside",
        source=("with self._lock.w_locked():",),
    ),
    Seam(
        "crewai.utilities.rw_lock:RWLock.__init__",
        "read",
        "_own_work.py reads _writer and _readers (swap only while free) and sets _cond",
        source=("self._cond = Condition()", "self._readers = 0", "self._writer = False"),
    ),
    Seam(
        f"{_BUS}.reset_runtime_state",
        "call",
        "no RuntimeState leaks between tests",
    ),
    Seam(
        f"{_BUS}._initialize",
        "read",
        "scoped_handlers reads the handler tables under the bus's lock",
        source=("self._rwlock = ", "self._sync_handlers", "self._async_handlers"),
    ),
    Seam(
        f"{_FLOW}._execute_racing_listeners",
        "patch",
        "ordered_races starts or_ racers in the seeded order",
        params=("self", "racing_listeners", "other_listeners", "result", "triggering_event_id"),
        source=("self._execute_single_listener(", "as_completed"),
    ),
    Seam(
        f"{_FLOW}._execute_single_listener",
        "patch",
        "shadowed per flow during a race to see how each racer ended",
    ),
    Seam(
        f"{_FLOW}._find_triggered_methods",
        "patch",
        "replaced while recording: a completed method's look at each and_/or_ listener "
        "it counts towards is recorded for exploration (recorded_triggers); shadowed per "
        "flow during a race: a racer's check of the or_ listeners it may fire",
        params=("self", "trigger_method", "router_only"),
        source=("_fired_or_listeners",),
    ),
    Seam(
        f"{_FLOW}._clear_or_listeners",
        "patch",
        "replaced while recording: clearing the fired or_ listeners (a method run again "
        "in a cycle, crewai re-arms every or_) is a write of each or_ listener's fires: key",
        params=("self",),
        source=("_fired_or_listeners.clear()",),
    ),
    Seam(
        f"{_FLOW}._rearm_or_listeners_for_trigger",
        "patch",
        "replaced while recording: re-arming the fired or_ listeners a router's label "
        "feeds (a router's fresh signal in a cycle) is a write of each such or_ "
        "listener's fires: key",
        params=("self", "trigger", "rearmable"),
        source=("_fired_or_listeners.discard(listener_name)",),
    ),
    Seam(
        f"{_FLOW}.state",
        "patch",
        "every read of flow.state is a switch point of the thread scheduler",
        probe=_property,
    ),
    Seam(
        f"{_FLOW}.__private_attributes__",
        "read",
        "the flow's graph, methods, completed methods and resume flag are read",
        probe=lambda found: next(
            (f"no longer declares {name}" for name in _FLOW_PRIVATE if name not in found),
            None,
        ),
    ),
    Seam(
        f"{_FLOW}._listener_methods",
        "read",
        "the flow's graph is read from self._definition (crewai 1.14: flow_definition())",
        source=("_definition" if compat.HAS_INSTANCE_DEFINITION else "flow_definition()",),
    ),
    Seam(
        "crewai.flow.flow_definition:FlowMethodDefinition",
        "read",
        "trace lines name each method's start/listen/router condition",
        probe=_has_fields("start", "listen", "router", "human_feedback"),
    ),
    Seam(
        "crewai.flow.flow_definition:FlowDefinition",
        "read",
        "FlowDefinition.methods maps names to method definitions",
        probe=_has_fields("methods"),
    ),
    # crewai 1.14.x has no declarative `call: agent` steps (compat.agent_action())
    *(
        (
            Seam(
                "crewai.flow.runtime._actions:AgentAction.run",
                "patch",
                "marks a declarative `call: agent` step so fake_crews tells its kickoff apart",
                source=("kickoff_async(",),
                probe=_coroutine,
            ),
        )
        if compat.agent_action() is not None
        else ()
    ),
)

# -- the LLM fake (crewai/llm.py, llm_routing.py, callers.py) ----------------------------
_LLM_CALLS = {
    "_emit_call_started_event": ("self", "messages", "tools", "callbacks"),
    "_format_messages": ("self", "messages"),
    "_invoke_before_llm_call_hooks": ("self", "messages", "from_agent"),
    "_emit_call_failed_event": ("self", "error", "from_task", "from_agent"),
    "_emit_stream_chunk_event": ("self", "chunk", "from_task", "from_agent"),
    "_track_token_usage_internal": ("self", "usage_data"),
    "_emit_call_completed_event": ("self", "response", "call_type", "from_task", "from_agent"),
    "_invoke_after_llm_call_hooks": ("self", "messages", "response", "from_agent"),
    "_handle_tool_execution": ("self", "function_name", "function_args", "available_functions"),
}
#: crewai functions whose frames tell the fake what an LLM call is for (callers.py).
_CONVERSATIONAL_PURPOSES = {
    "classify_intent": _MIXIN,
    "can_answer_from_history": _MIXIN,
    "answer_from_history_turn": _MIXIN,
    "_call_router_llm": _MIXIN,
    "converse_turn": _MIXIN,
}
_LESSON_PURPOSES = {
    "_pre_review_with_lessons": "crewai.flow.human_feedback",
    "_distill_and_store_lessons": "crewai.flow.human_feedback",
}
# crewai 1.14.x: no (non-experimental) conversational flows, and the lesson helpers
# are closures inside the @human_feedback decorator (their frames keep the same
# names: declared with the decorator's seam below)
_HAS_CONVERSATIONAL = compat.conversational_mixin() is not None
_LESSONS_IN_MODULE = hasattr(
    importlib.import_module("crewai.flow.human_feedback"), "_pre_review_with_lessons"
)
_PURPOSE_OWNERS = {
    **(_CONVERSATIONAL_PURPOSES if _HAS_CONVERSATIONAL else {}),
    **(_LESSON_PURPOSES if _LESSONS_IN_MODULE else {}),
}  # and Flow._collapse_to_outcome, declared with the human fake's patches


def _dotted(owner: str, name: str) -> str:
    return f"{owner}.{name}" if ":" in owner else f"{owner}:{name}"


LLM = (
    *(
        Seam(
            f"{_BASE_LLM}.{name}",
            "call",
            "the fake LLM emits crewai's own events and runs its hooks",
            params=params,
        )
        for name, params in _LLM_CALLS.items()
    ),
    *(
        (
            Seam(
                f"{_BASE_LLM}._effective_stream",
                "call",
                "a scripted string reply is streamed in chunks when the call streams",
                params=("self",),
            ),
        )
        if compat.HAS_EFFECTIVE_STREAM
        else ()  # crewai 1.14.x: llm.stream decides
    ),
    # crewai < 1.15.23 has no rate-limit retry (one attempt): nothing to opt out of.
    *(
        (
            Seam(
                f"{_BASE_LLM}._wrap_call_method",
                "read",
                "a method marked _crewai_rate_limit_wrapped is not wrapped in a real-time retry",
                source=("_crewai_rate_limit_wrapped",),
            ),
            Seam(
                "crewai.llms.retry:_retry_after_seconds",
                "call",
                "the fake reads a Retry-After hint as crewai does",
            ),
        )
        if compat.HAS_RATE_LIMIT_RETRY
        else ()
    ),
    Seam(
        "crewai.llm:LLM.__new__",
        "patch",
        'LLM("model") returns the fake\'s handle while fake_llm is bound',
        probe=_own_new,
    ),
    Seam(f"{_BASE_LLM}.call", "patch", "LLMs built before the test answer from the fake"),
    Seam(f"{_BASE_LLM}.acall", "patch", "LLMs built before the test answer from the fake"),
    Seam(
        "crewai.llm:LLM.supports_function_calling",
        "patch",
        "routed LLMs take native tool calls",
    ),
    Seam(f"{_BASE_LLM}.supports_stop_words", "patch", "routed LLMs take no stop words"),
    *(
        Seam(_dotted(owner, name), "read", "an LLM call's purpose is read off this frame")
        for name, owner in _PURPOSE_OWNERS.items()
    ),
    *(
        (
            Seam(
                f"{_MIXIN}.route_turn",
                "patch",
                "fake_chat records what each flow class's route_turn returned",
                params=("self", "context"),
            ),
        )
        if _HAS_CONVERSATIONAL
        else ()
    ),
)

# -- the human fake (crewai/human.py, human_patches.py) -----------------------------------
HUMAN = (
    *(
        (
            Seam(
                f"{_FLOW}._resolve_feedback_provider",
                "patch",
                "@human_feedback steps with a provider ask the scripted human",
                params=("self", "feedback_definition"),
            ),
        )
        if compat.HAS_FEEDBACK_PROVIDER_RESOLVER
        else (
            Seam(
                "crewai.flow.async_feedback.types:PendingFeedbackContext",
                "patch",
                "crewai 1.14: its construction in the decorator's _build_feedback_context "
                "is where a step's provider is taken over (the closure's provider cell)",
            ),
            Seam(
                "crewai.flow.human_feedback:_build_human_feedback_runtime_decorator",
                "read",
                "crewai 1.14: the provider is the closure's `provider`, else flow_config's; "
                "a learn=True step's LLM calls are told apart by its closures' frames",
                source=(
                    "def _pre_review_with_lessons(",
                    "def _distill_and_store_lessons(",
                    "from crewai.flow.async_feedback.types import PendingFeedbackContext",
                    "effective_provider = provider",
                    "effective_provider = flow_config.hitl_provider",
                ),
            ),
        )
    ),
    Seam(
        f"{_FLOW}._resolve_input_provider",
        "patch",
        "Flow.ask() asks the scripted human",
        params=("self",),
    ),
    Seam(
        f"{_FLOW}._collapse_to_outcome",
        "patch",
        "an explicit outcome skips the classifying LLM; its frame marks a feedback LLM call",
        params=("self", "feedback", "outcomes", "llm"),
    ),
    Seam(
        f"{_FLOW}._request_human_feedback",
        "read",
        "the console path's input() is answered from this frame's locals",
        params=(
            "self",
            "message",
            "output",
            "metadata",
            "emit",
            # crewai 1.14.x: the method name is the feedback context's, not a parameter
            *(("method_name",) if compat.HAS_FEEDBACK_PROVIDER_RESOLVER else ()),
        ),
        source=("input(",),
    ),
    Seam(
        f"{_FLOW}.ask",
        "patch",
        "the scripted provider sees ask(timeout=...)",
        params=("self", "message", "timeout", "metadata"),
    ),
    Seam(
        "crewai.flow.human_feedback:_serialize_llm_for_context",
        "call",
        "a paused step's PendingFeedbackContext is built as crewai builds it",
    ),
    Seam(
        "crewai.flow.persistence.factory:_factory",
        "read",
        "the human fake's fallback store steps aside for a registered one",
    ),
)

# -- flow_store (crewai/persistence.py, checkpoints.py, store_patches.py) -----------------
_PROVIDER_METHODS = ("checkpoint", "acheckpoint", "from_checkpoint", "afrom_checkpoint", "prune")
_SQLITE_METHODS = (
    "init_db",
    "save_state",
    "load_state",
    "save_pending_feedback",
    "load_pending_feedback",
    "clear_pending_feedback",
)

STORE = (
    Seam(
        f"{_SQLITE}._to_state_dict",
        "call",
        "flow_store encodes states as SQLiteFlowPersistence does",
    ),
    *(
        (
            Seam(
                "crewai.flow.persistence.sqlite:_json_default",
                "call",
                "flow_store encodes states as SQLiteFlowPersistence does",
            ),
        )
        if compat.HAS_SQLITE_JSON_DEFAULT
        else ()  # crewai < 1.15.23: json.dumps without a default
    ),
    Seam(
        f"{_SQLITE}._save_state_sql",
        "read",
        "the codec flow_store mirrors",
        source=(compat.SQLITE_ENCODE_CALL,),
    ),
    *(
        Seam(
            f"{_SQLITE}.{name}",
            "patch",
            "@persist(SQLiteFlowPersistence(...)) reads and writes the store",
        )
        for name in _SQLITE_METHODS
    ),
    Seam(
        "crewai.state.provider.json_provider:_build_path",
        "call",
        "a routed JSON checkpoint gets the location crewai would give it",
    ),
    Seam(
        "crewai.state.provider.sqlite_provider:_make_id",
        "call",
        "a routed SQLite checkpoint gets the id crewai would give it",
    ),
    *(
        Seam(f"{owner}.{name}", "patch", "checkpoints are read from and written to the store")
        for owner in (_JSON_PROVIDER, _SQLITE_PROVIDER)
        for name in _PROVIDER_METHODS
    ),
    Seam(
        "crewai.state.provider.utils:detect_provider",
        "patch",
        "a restore from the store's location finds the store's provider",
    ),
    Seam(
        "crewai.state.runtime:RuntimeState.from_checkpoint",
        "read",
        "detect_provider is looked up per call (so the patch is seen)",
        source=("from crewai.state.provider.utils import detect_provider",),
    ),
    Seam(
        f"{_FLOW}.kickoff_async",
        "read",
        "a load_state call is told apart (resume, fork, load) from kickoff's locals",
        probe=_locals("restore_uuid", "restore_from_state_id"),
    ),
)

# -- fake_crews, fake_tools (crewai/crews.py, tools.py) and the adapter's set-up ----------
CREWS = (
    Seam("crewai.crew:Crew.kickoff", "patch", "fake_crews answers crew kickoffs"),
    Seam("crewai.crew:Crew.akickoff", "patch", "fake_crews answers crew kickoffs"),
    Seam(
        "crewai.crew:Crew.kickoff_async",
        "patch",
        "fake_crews answers crew kickoffs, on a worker thread as crewai does",
        source=("asyncio.to_thread(self.kickoff",),
    ),
    Seam(
        "crewai.agent.core:Agent.kickoff_async",
        "patch",
        "fake_crews answers declarative agent steps",
    ),
    Seam(
        "crewai.agent.core:Agent._execute_without_timeout",
        "read",
        "a scripted sync kickoff in a running loop fails as crewai's real one does",
        source=("invoked synchronously from within a running",),
    ),
    Seam(
        f"{_TOOL}:Tool.run",
        "patch",
        "fake_tools runs Tool through BaseTool.run (the same steps, with self.func)",
        source=("self._claim_usage()", "self.func("),
    ),
    Seam(
        f"{_TOOL}:BaseTool.run",
        "read",
        "a tool run claims a use, then calls self._run",
        source=("self._claim_usage()", "self._run("),
    ),
    Seam(
        f"{_TOOL}:BaseTool.arun", "read", "an async run calls self._arun", source=("self._arun(",)
    ),
    Seam(f"{_TOOL}:BaseTool._run", "patch", "fake_tools wraps each tool's body"),
    Seam(f"{_TOOL}:BaseTool._arun", "patch", "fake_tools wraps each tool's body"),
    Seam(
        f"{_TOOL}:Tool._run",
        "read",
        "a Tool's body is its func",
        source=("return self.func(",),
    ),
    Seam(
        "crewai.state.checkpoint_listener:_ensure_handlers_registered",
        "call",
        "checkpoint handlers are registered before any test scopes the bus's handlers",
    ),
    Seam(
        "crewai.memory.unified_memory:_default_embedder",
        "patch",
        "flow_memory: a Memory that chose no embedder embeds with the fake one",
    ),
    Seam(
        "crewai.memory.unified_memory:Memory.model_post_init",
        "read",
        "a Memory whose storage is a spec string asks the registered factory first",
        source=("resolve_memory_storage(self.storage)",),
    ),
    Seam(
        "crewai.events.utils.console_formatter:_disable_version_check",
        "read",
        "a quiet test sets crewai's own switch: no version check panel, no PyPI call",
        probe=lambda found: None if hasattr(found, "set") else "is no longer a ContextVar",
    ),
    Seam(
        "crewai_core.printer:_suppress_console_output",
        "read",
        "the console is silenced for a test and restored after it",
    ),
)

SEAMS = Registry("crewai", __name__, *RUNTIME, *LLM, *HUMAN, *STORE, *CREWS)

# -- the flight recorder (pytest_flows/recorder/_crewai.py) ------------------------------
# Its own registry: the recorder patches in production, through capture.Patches (it
# imports no harness), some of the targets the harness patches too.
_REC = "the flight recorder"
RECORDER = (
    Seam(
        "crewai.flow.runtime:Flow.kickoff_async",
        "patch",
        f"{_REC} records a sampled run: its events (a stream sink), outcome and end",
        params=("self", "inputs"),
    ),
    Seam(
        "crewai.flow.runtime:Flow.kickoff",
        "patch",
        f"{_REC} writes a synchronous run's record after kickoff returns",
    ),
    Seam(
        "crewai.flow.runtime:Flow.stream_events",
        "patch",
        f"{_REC} marks a streamed run (its consumer got the events as frames)",
    ),
    Seam(
        "crewai.flow.runtime:Flow.astream",
        "patch",
        f"{_REC} marks a streamed run (its consumer got the events as frames)",
    ),
    Seam(
        "crewai.flow.persistence.decorators:PersistenceDecorator.persist_state",
        "patch",
        f"{_REC} records each @persist save (crewAI emits no event for it)",
        params=("cls", "flow_instance", "method_name", "persistence_instance"),
    ),
    Seam(
        "crewai.llms.base_llm:BaseLLM._handle_tool_execution",
        "patch",
        f"{_REC} records (and a replay answers) the functions an LLM call runs itself",
        params=("self", "function_name", "function_args", "available_functions"),
    ),
)
RECORDER_SEAMS = Registry("crewai", __name__, *RECORDER)


def check_patch_points() -> None:
    """Raise :class:`~pytest_flows._internal.contract.seams.SeamsMoved` naming every crewai
    seam that moved.

    Covers every declaration above (the flight recorder's too) and the stdlib's seams,
    so one call vets every patch a crewai test or recording gets.
    """
    from pytest_flows.adapters import check_stdlib_seams

    installed, supported = framework_versions("crewai")
    check((*SEAMS, *RECORDER_SEAMS), owner="crewai", installed=installed, supported=supported)
    check_stdlib_seams()
