"""pytest-flows: deterministic, offline tests for agentic flows on their real runtime.

Importing this package never imports crewai or agent_framework.
"""

from pytest_flows.errors import FlowsError, FlowsUsageError, NetworkBlockedError
from pytest_flows.loop import Scheduler, VirtualClock
from pytest_flows.run import FlowRun
from pytest_flows.session import FlowsSession
from pytest_flows.trace import Trace, TraceEvent

__version__ = "0.1.0"

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
