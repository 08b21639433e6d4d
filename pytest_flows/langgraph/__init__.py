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

from pytest_flows.langgraph._human import Interrupts, interrupts
from pytest_flows.langgraph._run import GraphRun, PendingInterrupt
from pytest_flows.langgraph._seams import check_patch_points

__all__ = ["GraphRun", "Interrupts", "PendingInterrupt", "check_patch_points", "interrupts"]
