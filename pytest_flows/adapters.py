"""For adapter authors: everything a framework adapter needs, in one public module.

A test never imports this (its names are in :mod:`pytest_flows`); an adapter for
a framework pytest-flows does not ship with does (the project's tests hold one,
written against this module alone). ``docs/architecture.md`` walks through writing one.
Everything else under ``pytest_flows._internal`` may change without notice.
"""

from __future__ import annotations

# Every name an adapter needs, each listed in docs/reference.md: an adapter imports
# pytest-flows only from here (an import-linter contract in pyproject.toml holds it).
from pytest_flows._internal.contract.adapters import (
    ENTRY_POINT_GROUP,
    Adapter,
    AdapterBase,
    AdapterSpec,
    Binding,
    bind_fake,
    declared_seams,
    framework_versions,
    register_adapter,
)
from pytest_flows._internal.contract.registry import RecorderPart
from pytest_flows._internal.contract.seams import Registry, Seam, replaced
from pytest_flows._internal.contract.seams import check as check_seams
from pytest_flows._internal.coverage.model import Branch, FlowGraph, Item, Link, Node
from pytest_flows._internal.coverage.notes import note as note_graph
from pytest_flows._internal.deprecation import missing_name, warn_moved
from pytest_flows._internal.durations import check_duration
from pytest_flows._internal.errors import (
    FlowsError,
    FlowsUsageError,
    FlowsWarning,
    NoMethodRanWarning,
)
from pytest_flows._internal.exploration.seeding import reseeded, runs_by_seed
from pytest_flows._internal.fakes.crew_script import (
    RUN_FOR_REAL,
    CrewReply,
    CrewRule,
    FakeCrews,
    crew_output,
)
from pytest_flows._internal.fakes.human_script import (
    PAUSE,
    TIMEOUT,
    USE_PROVIDER,
    ScriptedHuman,
    entry_label,
    is_pause,
    occurrence,
)
from pytest_flows._internal.fakes.llm_script import (
    LLMScript,
    check_offered,
    llm_call_event,
    placeholder,
    tool_calls_of,
    tools_summary,
)
from pytest_flows._internal.fakes.replies import ProviderError, Stream, ToolCall
from pytest_flows._internal.fakes.script import (
    Exchange,
    Match,
    Request,
    ScriptError,
    ScriptReplyError,
    Times,
    UnscriptedRequest,
    code,
    plain,
    short,
)
from pytest_flows._internal.fakes.tool_script import FakeTools
from pytest_flows._internal.fakes.usage import note as note_usage
from pytest_flows._internal.golden.adapters import GoldenAdapter
from pytest_flows._internal.golden.breaks import GoldenBreak
from pytest_flows._internal.golden.replay import Scripted, jsonable, owned_class
from pytest_flows._internal.isolation import in_isolation
from pytest_flows._internal.normal_form import Normalizer, elide
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime.foreign_work import foreign_work
from pytest_flows._internal.runtime.kept_workers import (
    KeptThread,
    keeps_workers,
    start_on_kept_worker,
)
from pytest_flows._internal.runtime.loop import (
    DeterministicEventLoop,
    Scheduler,
    active_scheduler,
)
from pytest_flows._internal.runtime.outside_state import (
    mutated_after,
    overlapping,
    shared_outside,
)
from pytest_flows._internal.runtime.participants import (
    LAST_WRITE,
    RESULT_WANTED_BY,
    internal_lock,
    note_caveat,
    record_access,
    running_task,
    sleep_on,
    switch_point,
    track_container,
)
from pytest_flows._internal.runtime.participants import current as current_participant
from pytest_flows._internal.runtime.participants import recording as recording_accesses
from pytest_flows._internal.runtime.stdlib_seams import SEAMS as STDLIB_SEAMS
from pytest_flows._internal.runtime.stdlib_seams import QuietLock, check_stdlib_seams
from pytest_flows._internal.session import FlowsSession
from pytest_flows._internal.state.codec import FieldChange, differences, find_unserializable
from pytest_flows._internal.state.property_runs import Outcome
from pytest_flows._internal.state.store import FlowStore
from pytest_flows._internal.state.store_records import (
    CheckpointNotFoundError,
    CheckpointRecord,
    CrashPoint,
    NotACheckpointError,
    PendingFeedback,
    SimulatedCrash,
    StateCodecError,
    StateSave,
    StoreBackend,
    StoreCorruptedError,
    decode_stored,
)
from pytest_flows._internal.trace import MAX_VALUE_CHARS, TraceEvent, render_value

__all__ = [
    "ENTRY_POINT_GROUP",
    "LAST_WRITE",
    "MAX_VALUE_CHARS",
    "PAUSE",
    "RESULT_WANTED_BY",
    "RUN_FOR_REAL",
    "STDLIB_SEAMS",
    "TIMEOUT",
    "USE_PROVIDER",
    "Adapter",
    "AdapterBase",
    "AdapterSpec",
    "Binding",
    "Branch",
    "CheckpointNotFoundError",
    "CheckpointRecord",
    "CrashPoint",
    "CrewReply",
    "CrewRule",
    "DeterministicEventLoop",
    "Exchange",
    "FakeCrews",
    "FakeTools",
    "FieldChange",
    "FlowGraph",
    "FlowRun",
    "FlowStore",
    "FlowsError",
    "FlowsSession",
    "FlowsUsageError",
    "FlowsWarning",
    "GoldenAdapter",
    "GoldenBreak",
    "Item",
    "KeptThread",
    "LLMScript",
    "Link",
    "Match",
    "NoMethodRanWarning",
    "Node",
    "Normalizer",
    "NotACheckpointError",
    "Outcome",
    "PendingFeedback",
    "ProviderError",
    "QuietLock",
    "RecorderPart",
    "Registry",
    "Request",
    "Scheduler",
    "ScriptError",
    "ScriptReplyError",
    "Scripted",
    "ScriptedHuman",
    "Seam",
    "SimulatedCrash",
    "StateCodecError",
    "StateSave",
    "StoreBackend",
    "StoreCorruptedError",
    "Stream",
    "Times",
    "ToolCall",
    "TraceEvent",
    "UnscriptedRequest",
    "active_scheduler",
    "bind_fake",
    "check_duration",
    "check_offered",
    "check_seams",
    "check_stdlib_seams",
    "code",
    "crew_output",
    "current_participant",
    "declared_seams",
    "decode_stored",
    "differences",
    "elide",
    "entry_label",
    "find_unserializable",
    "foreign_work",
    "framework_versions",
    "in_isolation",
    "internal_lock",
    "is_pause",
    "jsonable",
    "keeps_workers",
    "llm_call_event",
    "missing_name",
    "mutated_after",
    "note_caveat",
    "note_graph",
    "note_started",
    "note_usage",
    "occurrence",
    "overlapping",
    "owned_class",
    "placeholder",
    "plain",
    "record_access",
    "recording_accesses",
    "register_adapter",
    "render_value",
    "replaced",
    "reseeded",
    "running_task",
    "runs_by_seed",
    "shared_outside",
    "short",
    "sleep_on",
    "start_on_kept_worker",
    "switch_point",
    "tool_calls_of",
    "tools_summary",
    "track_container",
    "warn_moved",
]


def note_started(adapter: AdapterBase, name: str, flow: object) -> None:
    """Tell ``--flows-cov`` that a run of ``flow`` starts now, under the ``name`` its
    ``flow.started`` (or ``workflow.started``) trace event carries: call it right before
    emitting that event. The graph (``adapter.graph(flow)``) is built only while
    coverage collects; never raises."""
    note_graph(adapter.name, name, lambda: adapter.graph(flow))
