"""pytest-flows for LangGraph graphs (``pip install "pytest-flows[langgraph]"``).

``flows.run(graph, inputs, config=...)`` runs a real compiled graph (or a
``StateGraph`` builder, or an ``@entrypoint``) on a copy whose checkpointer is the
test's, with LangGraph's ids, versions and jitter seeded per test, and returns a
:class:`GraphRun` (values, pending interrupts, status, checkpoints, superstep
trace). ``human`` answers ``interrupt()`` (:func:`interrupts` for non-text values).

Importing this package imports ``langgraph``; ``import pytest_flows`` does not.
"""

# First, before any module of this package: the plugin loads the adapter the
# moment langgraph is imported, and that must not find one of our modules
# half-imported.
import langgraph  # noqa: F401

from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver
from pytest_flows.langgraph._human import Interrupts, interrupts
from pytest_flows.langgraph._llm import FlowsChatModel
from pytest_flows.langgraph._persistence import assert_round_trip, checkpoint_saver
from pytest_flows.langgraph._properties import (
    UPSTREAM_BUGS,
    GraphCase,
    ThreadRun,
    assert_crash_resume,
    assert_fork_isolated,
    assert_time_travel,
    check_crash_resume,
    check_fork_isolation,
    check_time_travel,
    crash_points,
)
from pytest_flows.langgraph._run import GraphRun, PendingInterrupt
from pytest_flows.langgraph._seams import check_patch_points

__all__ = [
    "UPSTREAM_BUGS",
    "FlowsChatModel",
    "FlowsCheckpointSaver",
    "GraphCase",
    "GraphRun",
    "Interrupts",
    "PendingInterrupt",
    "ThreadRun",
    "assert_crash_resume",
    "assert_fork_isolated",
    "assert_round_trip",
    "assert_time_travel",
    "check_crash_resume",
    "check_fork_isolation",
    "check_patch_points",
    "check_time_travel",
    "checkpoint_saver",
    "crash_points",
    "interrupts",
]
