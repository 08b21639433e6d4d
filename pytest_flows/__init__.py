"""pytest-flows: deterministic, offline tests for agentic flows on their real runtime.

Everything a test imports comes from here (adapter-specific names from
:mod:`pytest_flows.crewai` and :mod:`pytest_flows.agent_framework`); the other
modules are internal (see ``docs/architecture.md``). ``__all__`` is the public
surface documented in ``docs/reference.md``, and a test holds the two equal.

Importing this package never imports crewai or agent_framework, and the names
below load on first use, so the plugin's start-up stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_flows._internal.contract.adapters import AdapterBase, AdapterSpec, register_adapter
    from pytest_flows._internal.errors import (
        FlowsDeadlockError,
        FlowsError,
        FlowsUsageError,
        FlowsWarning,
        NetworkBlockedError,
        NoMethodRanWarning,
    )
    from pytest_flows._internal.exploration.explore import explore
    from pytest_flows._internal.exploration.races import RaceOutcomes, RaceResult, race_of
    from pytest_flows._internal.fakes.crew_script import FakeCrews
    from pytest_flows._internal.fakes.human_script import ScriptedHuman
    from pytest_flows._internal.fakes.llm_script import LLMScript
    from pytest_flows._internal.fakes.replies import (
        ProviderError,
        RateLimitError,
        Stream,
        ToolCall,
        call_tool,
        stream,
    )
    from pytest_flows._internal.fakes.script import (
        ALWAYS,
        ScriptError,
        UnscriptedRequest,
        UnusedReplies,
    )
    from pytest_flows._internal.fakes.tool_script import FakeTools
    from pytest_flows._internal.fakes.trajectory import TrajectoryMismatch
    from pytest_flows._internal.fakes.usage import BudgetExceeded, Usage
    from pytest_flows._internal.golden.migrations import assert_resumes_old_states, old_states
    from pytest_flows._internal.recording.cassette import Recording, use_cassette
    from pytest_flows._internal.recording.drift import (
        CassetteMismatchError,
        PromptDriftError,
        RecordingBlockedError,
    )
    from pytest_flows._internal.run import FlowRun
    from pytest_flows._internal.runtime.loop import Scheduler, VirtualClock
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.snapshot import (
        CheckpointRoundTrip,
        checkpoint_round_trip,
        normalized,
        snapshot_text,
    )
    from pytest_flows._internal.state.state_properties import (
        assert_crash_resume,
        assert_fork_isolated,
        assert_time_travel,
        check_crash_resume,
        check_fork_isolation,
        check_time_travel,
    )
    from pytest_flows._internal.state.store import FlowStore
    from pytest_flows._internal.state.store_records import (
        CheckpointNotFoundError,
        CrashPoint,
        InvalidStateIdError,
        NotACheckpointError,
        SimulatedCrash,
        StateCodecError,
        StoreCorruptedError,
        StoreError,
    )
    from pytest_flows._internal.state.strategies import crash_points, scheduler_seeds, schedules
    from pytest_flows._internal.syrupy_extension import FlowsSnapshotExtension
    from pytest_flows._internal.trace import Trace, TraceEvent

__version__ = "0.2.0"

#: Public name -> the internal module that defines it (imported on first use).
_EXPORTS = {
    # the harness and what a run returns
    "FlowsSession": "pytest_flows._internal.session",
    "FlowRun": "pytest_flows._internal.run",
    "Trace": "pytest_flows._internal.trace",
    "TraceEvent": "pytest_flows._internal.trace",
    "Usage": "pytest_flows._internal.fakes.usage",
    "Scheduler": "pytest_flows._internal.runtime.loop",
    "VirtualClock": "pytest_flows._internal.runtime.loop",
    # the fixtures' types
    "LLMScript": "pytest_flows._internal.fakes.llm_script",
    "FakeTools": "pytest_flows._internal.fakes.tool_script",
    "FakeCrews": "pytest_flows._internal.fakes.crew_script",
    "ScriptedHuman": "pytest_flows._internal.fakes.human_script",
    "FlowStore": "pytest_flows._internal.state.store",
    "Recording": "pytest_flows._internal.recording.cassette",
    # scripting replies
    "ALWAYS": "pytest_flows._internal.fakes.script",
    "ToolCall": "pytest_flows._internal.fakes.replies",
    "Stream": "pytest_flows._internal.fakes.replies",
    "call_tool": "pytest_flows._internal.fakes.replies",
    "stream": "pytest_flows._internal.fakes.replies",
    "ProviderError": "pytest_flows._internal.fakes.replies",
    "RateLimitError": "pytest_flows._internal.fakes.replies",
    # exploring schedules
    "explore": "pytest_flows._internal.exploration.explore",
    "race_of": "pytest_flows._internal.exploration.races",
    "RaceOutcomes": "pytest_flows._internal.exploration.races",
    "RaceResult": "pytest_flows._internal.exploration.races",
    # state properties
    "CrashPoint": "pytest_flows._internal.state.store_records",
    "SimulatedCrash": "pytest_flows._internal.state.store_records",
    "check_crash_resume": "pytest_flows._internal.state.state_properties",
    "check_time_travel": "pytest_flows._internal.state.state_properties",
    "check_fork_isolation": "pytest_flows._internal.state.state_properties",
    "assert_crash_resume": "pytest_flows._internal.state.state_properties",
    "assert_time_travel": "pytest_flows._internal.state.state_properties",
    "assert_fork_isolated": "pytest_flows._internal.state.state_properties",
    "crash_points": "pytest_flows._internal.state.strategies",
    "scheduler_seeds": "pytest_flows._internal.state.strategies",
    "schedules": "pytest_flows._internal.state.strategies",
    # snapshots and golden files
    "FlowsSnapshotExtension": "pytest_flows._internal.syrupy_extension",
    "CheckpointRoundTrip": "pytest_flows._internal.snapshot",
    "checkpoint_round_trip": "pytest_flows._internal.snapshot",
    "normalized": "pytest_flows._internal.snapshot",
    "snapshot_text": "pytest_flows._internal.snapshot",
    "assert_resumes_old_states": "pytest_flows._internal.golden.migrations",
    "old_states": "pytest_flows._internal.golden.migrations",
    # recording
    "use_cassette": "pytest_flows._internal.recording.cassette",
    # writing a framework adapter
    "AdapterBase": "pytest_flows._internal.contract.adapters",
    "AdapterSpec": "pytest_flows._internal.contract.adapters",
    "register_adapter": "pytest_flows._internal.contract.adapters",
    # errors and warnings
    "FlowsError": "pytest_flows._internal.errors",
    "FlowsUsageError": "pytest_flows._internal.errors",
    "FlowsWarning": "pytest_flows._internal.errors",
    "NoMethodRanWarning": "pytest_flows._internal.errors",
    "NetworkBlockedError": "pytest_flows._internal.errors",
    "FlowsDeadlockError": "pytest_flows._internal.errors",
    "ScriptError": "pytest_flows._internal.fakes.script",
    "UnscriptedRequest": "pytest_flows._internal.fakes.script",
    "UnusedReplies": "pytest_flows._internal.fakes.script",
    "BudgetExceeded": "pytest_flows._internal.fakes.usage",
    "TrajectoryMismatch": "pytest_flows._internal.fakes.trajectory",
    "StoreError": "pytest_flows._internal.state.store_records",
    "StoreCorruptedError": "pytest_flows._internal.state.store_records",
    "NotACheckpointError": "pytest_flows._internal.state.store_records",
    "InvalidStateIdError": "pytest_flows._internal.state.store_records",
    "StateCodecError": "pytest_flows._internal.state.store_records",
    "CheckpointNotFoundError": "pytest_flows._internal.state.store_records",
    "PromptDriftError": "pytest_flows._internal.recording.drift",
    "CassetteMismatchError": "pytest_flows._internal.recording.drift",
    "RecordingBlockedError": "pytest_flows._internal.recording.drift",
}

__all__ = [
    "ALWAYS",
    "AdapterBase",
    "AdapterSpec",
    "BudgetExceeded",
    "CassetteMismatchError",
    "CheckpointNotFoundError",
    "CheckpointRoundTrip",
    "CrashPoint",
    "FakeCrews",
    "FakeTools",
    "FlowRun",
    "FlowStore",
    "FlowsDeadlockError",
    "FlowsError",
    "FlowsSession",
    "FlowsSnapshotExtension",
    "FlowsUsageError",
    "FlowsWarning",
    "InvalidStateIdError",
    "LLMScript",
    "NetworkBlockedError",
    "NoMethodRanWarning",
    "NotACheckpointError",
    "PromptDriftError",
    "ProviderError",
    "RaceOutcomes",
    "RaceResult",
    "RateLimitError",
    "Recording",
    "RecordingBlockedError",
    "Scheduler",
    "ScriptError",
    "ScriptedHuman",
    "SimulatedCrash",
    "StateCodecError",
    "StoreCorruptedError",
    "StoreError",
    "Stream",
    "ToolCall",
    "Trace",
    "TraceEvent",
    "TrajectoryMismatch",
    "UnscriptedRequest",
    "UnusedReplies",
    "Usage",
    "VirtualClock",
    "__version__",
    "assert_crash_resume",
    "assert_fork_isolated",
    "assert_resumes_old_states",
    "assert_time_travel",
    "call_tool",
    "check_crash_resume",
    "check_fork_isolation",
    "check_time_travel",
    "checkpoint_round_trip",
    "crash_points",
    "explore",
    "normalized",
    "old_states",
    "race_of",
    "register_adapter",
    "scheduler_seeds",
    "schedules",
    "snapshot_text",
    "stream",
    "use_cassette",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_flows' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
