"""For adapter authors: everything a framework adapter needs, in one public module.

A test never imports this (its names are in :mod:`pytest_flows`); an adapter for
a framework pytest-flows does not ship with does (the project's tests hold one,
written against this module alone). ``docs/architecture.md`` walks through writing one.
Everything else under ``pytest_flows._internal`` may change without notice.
"""

from __future__ import annotations

from pytest_flows._internal.adapters import (
    ENTRY_POINT_GROUP,
    Adapter,
    AdapterBase,
    AdapterSpec,
    Binding,
    register_adapter,
)
from pytest_flows._internal.codec import FieldChange, differences
from pytest_flows._internal.crew_script import RUN_FOR_REAL, FakeCrews
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.human_script import PAUSE, ScriptedHuman, is_pause
from pytest_flows._internal.llm_script import (
    LLMScript,
    check_offered,
    llm_call_event,
    tool_calls_of,
    tools_summary,
)
from pytest_flows._internal.property_runs import Outcome
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.script import Request, plain
from pytest_flows._internal.seams import Registry, Seam, replaced
from pytest_flows._internal.session import FlowsSession
from pytest_flows._internal.store import FlowStore
from pytest_flows._internal.store_records import SimulatedCrash, StoreBackend
from pytest_flows._internal.tool_script import FakeTools
from pytest_flows._internal.trace import TraceEvent

__all__ = [
    "ENTRY_POINT_GROUP",
    "PAUSE",
    "RUN_FOR_REAL",
    "Adapter",
    "AdapterBase",
    "AdapterSpec",
    "Binding",
    "FakeCrews",
    "FakeTools",
    "FieldChange",
    "FlowRun",
    "FlowStore",
    "FlowsSession",
    "FlowsUsageError",
    "LLMScript",
    "Outcome",
    "Registry",
    "Request",
    "ScriptedHuman",
    "Seam",
    "SimulatedCrash",
    "StoreBackend",
    "TraceEvent",
    "check_offered",
    "differences",
    "is_pause",
    "llm_call_event",
    "plain",
    "register_adapter",
    "replaced",
    "tool_calls_of",
    "tools_summary",
]
