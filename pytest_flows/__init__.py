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
    from pytest_flows.adapters import AdapterBase, AdapterSpec, register_adapter
    from pytest_flows.crew_script import FakeCrews
    from pytest_flows.errors import (
        FlowsDeadlockError,
        FlowsError,
        FlowsUsageError,
        FlowsWarning,
        NetworkBlockedError,
        NoMethodRanWarning,
    )
    from pytest_flows.exploration import explore
    from pytest_flows.golden.migrations import assert_resumes_old_states, old_states
    from pytest_flows.human_script import ScriptedHuman
    from pytest_flows.llm_script import LLMScript
    from pytest_flows.loop import Scheduler, VirtualClock
    from pytest_flows.races import RaceOutcomes, RaceResult, race_of
    from pytest_flows.recording import (
        CassetteMismatchError,
        PromptDriftError,
        Recording,
        RecordingBlockedError,
        use_cassette,
    )
    from pytest_flows.replies import (
        ProviderError,
        RateLimitError,
        Stream,
        ToolCall,
        call_tool,
        stream,
    )
    from pytest_flows.run import FlowRun
    from pytest_flows.script import ALWAYS, ScriptError, UnscriptedRequest, UnusedReplies
    from pytest_flows.session import FlowsSession
    from pytest_flows.snapshot import (
        CheckpointRoundTrip,
        checkpoint_round_trip,
        normalized,
        snapshot_text,
    )
    from pytest_flows.state_properties import (
        assert_crash_resume,
        assert_fork_isolated,
        assert_time_travel,
        check_crash_resume,
        check_fork_isolation,
        check_time_travel,
    )
    from pytest_flows.store import (
        CheckpointNotFoundError,
        CrashPoint,
        FlowStore,
        InvalidStateIdError,
        NotACheckpointError,
        SimulatedCrash,
        StateCodecError,
        StoreCorruptedError,
        StoreError,
    )
    from pytest_flows.strategies import crash_points, scheduler_seeds, schedules
    from pytest_flows.syrupy_extension import FlowsSnapshotExtension
    from pytest_flows.tool_script import FakeTools
    from pytest_flows.trace import Trace, TraceEvent
    from pytest_flows.trajectory import TrajectoryMismatch
    from pytest_flows.usage import BudgetExceeded, Usage

__version__ = "0.1.0"

#: Public name -> the internal module that defines it (imported on first use).
_EXPORTS = {
    # the harness and what a run returns
    "FlowsSession": "pytest_flows.session",
    "FlowRun": "pytest_flows.run",
    "Trace": "pytest_flows.trace",
    "TraceEvent": "pytest_flows.trace",
    "Usage": "pytest_flows.usage",
    "Scheduler": "pytest_flows.loop",
    "VirtualClock": "pytest_flows.loop",
    # the fixtures' types
    "LLMScript": "pytest_flows.llm_script",
    "FakeTools": "pytest_flows.tool_script",
    "FakeCrews": "pytest_flows.crew_script",
    "ScriptedHuman": "pytest_flows.human_script",
    "FlowStore": "pytest_flows.store",
    "Recording": "pytest_flows.recording",
    # scripting replies
    "ALWAYS": "pytest_flows.script",
    "ToolCall": "pytest_flows.replies",
    "Stream": "pytest_flows.replies",
    "call_tool": "pytest_flows.replies",
    "stream": "pytest_flows.replies",
    "ProviderError": "pytest_flows.replies",
    "RateLimitError": "pytest_flows.replies",
    # exploring schedules
    "explore": "pytest_flows.exploration",
    "race_of": "pytest_flows.races",
    "RaceOutcomes": "pytest_flows.races",
    "RaceResult": "pytest_flows.races",
    # state properties
    "CrashPoint": "pytest_flows.store",
    "SimulatedCrash": "pytest_flows.store",
    "check_crash_resume": "pytest_flows.state_properties",
    "check_time_travel": "pytest_flows.state_properties",
    "check_fork_isolation": "pytest_flows.state_properties",
    "assert_crash_resume": "pytest_flows.state_properties",
    "assert_time_travel": "pytest_flows.state_properties",
    "assert_fork_isolated": "pytest_flows.state_properties",
    "crash_points": "pytest_flows.strategies",
    "scheduler_seeds": "pytest_flows.strategies",
    "schedules": "pytest_flows.strategies",
    # snapshots and golden files
    "FlowsSnapshotExtension": "pytest_flows.syrupy_extension",
    "CheckpointRoundTrip": "pytest_flows.snapshot",
    "checkpoint_round_trip": "pytest_flows.snapshot",
    "normalized": "pytest_flows.snapshot",
    "snapshot_text": "pytest_flows.snapshot",
    "assert_resumes_old_states": "pytest_flows.golden.migrations",
    "old_states": "pytest_flows.golden.migrations",
    # recording
    "use_cassette": "pytest_flows.recording",
    # writing a framework adapter
    "AdapterBase": "pytest_flows.adapters",
    "AdapterSpec": "pytest_flows.adapters",
    "register_adapter": "pytest_flows.adapters",
    # errors and warnings
    "FlowsError": "pytest_flows.errors",
    "FlowsUsageError": "pytest_flows.errors",
    "FlowsWarning": "pytest_flows.errors",
    "NoMethodRanWarning": "pytest_flows.errors",
    "NetworkBlockedError": "pytest_flows.errors",
    "FlowsDeadlockError": "pytest_flows.errors",
    "ScriptError": "pytest_flows.script",
    "UnscriptedRequest": "pytest_flows.script",
    "UnusedReplies": "pytest_flows.script",
    "BudgetExceeded": "pytest_flows.usage",
    "TrajectoryMismatch": "pytest_flows.trajectory",
    "StoreError": "pytest_flows.store",
    "StoreCorruptedError": "pytest_flows.store",
    "NotACheckpointError": "pytest_flows.store",
    "InvalidStateIdError": "pytest_flows.store",
    "StateCodecError": "pytest_flows.store",
    "CheckpointNotFoundError": "pytest_flows.store",
    "PromptDriftError": "pytest_flows.recording",
    "CassetteMismatchError": "pytest_flows.recording",
    "RecordingBlockedError": "pytest_flows.recording",
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
