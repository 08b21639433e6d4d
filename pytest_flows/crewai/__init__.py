"""The CrewAI Flows adapter.

``import pytest_flows`` never imports crewai; importing this package does, first
thing (see below). The adapter proper (:mod:`pytest_flows.crewai._adapter`) is
loaded by the plugin the moment crewai is imported.
"""

# First, before any module of this package: the plugin loads the adapter the
# moment crewai is imported, and that must not find one of our modules half-imported
# (a test module whose first import is, say, pytest_flows.crewai._patches would fail
# collection with "partially initialized module").
import crewai  # noqa: F401

from pytest_flows.crewai._crews import crew_output
from pytest_flows.crewai._memory import FakeEmbedder, FlowMemory, InMemoryStorage
from pytest_flows.crewai._patches import check_patch_points

__all__ = ["FakeEmbedder", "FlowMemory", "InMemoryStorage", "check_patch_points", "crew_output"]
