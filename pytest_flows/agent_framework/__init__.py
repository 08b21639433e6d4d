"""pytest-flows for Microsoft Agent Framework workflows.

``flows.run(workflow, message)`` runs a real ``Workflow`` on the deterministic
loop and returns a :class:`WorkflowRun` (outputs, status, pending requests,
checkpoints, superstep trace). The fakes plug in at Agent Framework's extension
points: :class:`FlowsChatClient` (``fake_llm``), :class:`FlowsCheckpointStorage`
(``flow_store``), and ``request_info`` answered by ``human``.

Importing this package imports ``agent_framework``; ``import pytest_flows`` does not.
"""

# First, before any module of this package: the plugin loads the adapter the
# moment agent_framework is imported, and that must not find one of our modules
# half-imported (a test module whose first import is this package would fail
# collection with "partially initialized module ... has no attribute 'ADAPTER'").
import agent_framework  # noqa: F401

from pytest_flows.agent_framework._adapter import OutputRecord, PendingRequest, WorkflowRun
from pytest_flows.agent_framework._checkpoints import (
    CheckpointInfo,
    CheckpointRefusedError,
    CheckpointRules,
    CheckpointSaveError,
    FlowsCheckpointStorage,
)
from pytest_flows.agent_framework._human import PAUSE, RequestRule, Requests, requests
from pytest_flows.agent_framework._llm import FlowsChatClient
from pytest_flows.agent_framework._patches import check_patch_points
from pytest_flows.agent_framework._persistence import checkpoint_storage
from pytest_flows.agent_framework._properties import (
    RestoreCheck,
    SeedExploration,
    check_restore_equivalence,
    explore_seeds,
    seeded,
)

__all__ = [
    "PAUSE",
    "CheckpointInfo",
    "CheckpointRefusedError",
    "CheckpointRules",
    "CheckpointSaveError",
    "FlowsChatClient",
    "FlowsCheckpointStorage",
    "OutputRecord",
    "PendingRequest",
    "RequestRule",
    "Requests",
    "RestoreCheck",
    "SeedExploration",
    "WorkflowRun",
    "check_patch_points",
    "check_restore_equivalence",
    "checkpoint_storage",
    "explore_seeds",
    "requests",
    "seeded",
]
