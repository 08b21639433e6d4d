"""pytest-flows: deterministic, offline tests for agentic flows on their real runtime.

Importing this package never imports crewai or agent_framework, and the names
below load on first use, so the plugin's start-up stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_flows.errors import FlowsError, FlowsUsageError, NetworkBlockedError
    from pytest_flows.loop import Scheduler, VirtualClock
    from pytest_flows.run import FlowRun
    from pytest_flows.session import FlowsSession
    from pytest_flows.trace import Trace, TraceEvent

__version__ = "0.1.0"

_EXPORTS = {
    "FlowRun": "pytest_flows.run",
    "FlowsError": "pytest_flows.errors",
    "FlowsSession": "pytest_flows.session",
    "FlowsUsageError": "pytest_flows.errors",
    "NetworkBlockedError": "pytest_flows.errors",
    "Scheduler": "pytest_flows.loop",
    "Trace": "pytest_flows.trace",
    "TraceEvent": "pytest_flows.trace",
    "VirtualClock": "pytest_flows.loop",
}

__all__ = [
    "FlowRun",
    "FlowsError",
    "FlowsSession",
    "FlowsUsageError",
    "NetworkBlockedError",
    "Scheduler",
    "Trace",
    "TraceEvent",
    "VirtualClock",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_flows' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
