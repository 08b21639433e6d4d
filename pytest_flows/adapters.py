"""For adapter authors: everything a framework adapter needs, in one public module.

A test never imports this (its names are in :mod:`pytest_flows`); an adapter for
a framework pytest-flows does not ship with does (the project's tests hold one,
written against this module alone). ``docs/architecture.md`` walks through writing one.
Everything else under ``pytest_flows._internal`` may change without notice.
"""

from __future__ import annotations

from pytest_flows._internal.contract.adapters import (
    ENTRY_POINT_GROUP,
    Adapter,
    AdapterBase,
    AdapterSpec,
    Binding,
    register_adapter,
)
from pytest_flows._internal.contract.registry import RecorderPart
from pytest_flows._internal.contract.seams import Registry, Seam, replaced
from pytest_flows._internal.contract.seams import check as check_seams
from pytest_flows._internal.contract.seams import framework_versions as framework_versions
from pytest_flows._internal.coverage import notes as _coverage_notes
from pytest_flows._internal.coverage.model import Branch, FlowGraph, Item, Link, Node
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.crew_script import RUN_FOR_REAL, FakeCrews
from pytest_flows._internal.fakes.human_script import PAUSE, ScriptedHuman, is_pause
from pytest_flows._internal.fakes.llm_script import (
    LLMScript,
    check_offered,
    llm_call_event,
    tool_calls_of,
    tools_summary,
)
from pytest_flows._internal.fakes.script import Match as Match
from pytest_flows._internal.fakes.script import Request, plain
from pytest_flows._internal.fakes.script import UnscriptedRequest as UnscriptedRequest
from pytest_flows._internal.fakes.tool_script import FakeTools
from pytest_flows._internal.golden.adapters import GoldenAdapter
from pytest_flows._internal.golden.breaks import GoldenBreak
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.session import FlowsSession
from pytest_flows._internal.state.codec import FieldChange, differences
from pytest_flows._internal.state.property_runs import Outcome
from pytest_flows._internal.state.store import FlowStore
from pytest_flows._internal.state.store_records import (
    CheckpointRecord,
    CrashPoint,
    SimulatedCrash,
    StateSave,
    StoreBackend,
    StoreCorruptedError,
)
from pytest_flows._internal.trace import TraceEvent
from pytest_flows._internal.trace import render_value as render_value

__all__ = [
    "ENTRY_POINT_GROUP",
    "PAUSE",
    "RUN_FOR_REAL",
    "Adapter",
    "AdapterBase",
    "AdapterSpec",
    "Binding",
    "Branch",
    "CheckpointRecord",
    "CrashPoint",
    "FakeCrews",
    "FakeTools",
    "FieldChange",
    "FlowGraph",
    "FlowRun",
    "FlowStore",
    "FlowsSession",
    "FlowsUsageError",
    "GoldenAdapter",
    "GoldenBreak",
    "Item",
    "LLMScript",
    "Link",
    "Match",
    "Node",
    "Outcome",
    "RecorderPart",
    "Registry",
    "Request",
    "ScriptedHuman",
    "Seam",
    "SimulatedCrash",
    "StateSave",
    "StoreBackend",
    "StoreCorruptedError",
    "TraceEvent",
    "UnscriptedRequest",
    "check_offered",
    "check_seams",
    "differences",
    "framework_versions",
    "is_pause",
    "llm_call_event",
    "note_started",
    "plain",
    "register_adapter",
    "render_value",
    "replaced",
    "tool_calls_of",
    "tools_summary",
]


def note_started(adapter: AdapterBase, name: str, flow: object) -> None:
    """Tell ``--flows-cov`` that a run of ``flow`` starts now, under the ``name`` its
    ``flow.started`` (or ``workflow.started``) trace event carries: call it right before
    emitting that event. The graph (``adapter.graph(flow)``) is built only while
    coverage collects; never raises."""
    _coverage_notes.note(adapter.name, name, lambda: adapter.graph(flow))
