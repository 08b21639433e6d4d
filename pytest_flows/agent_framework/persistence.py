"""Agent Framework's side of ``flow_store``: checkpoints written into the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_flows.agent_framework.checkpoints import (
    CheckpointRules,
    FlowsCheckpointStorage,
    check_rules,
)

if TYPE_CHECKING:
    from pytest_flows.session import FlowsSession

__all__ = ["AgentFrameworkStoreBackend", "checkpoint_storage"]


class AgentFrameworkStoreBackend:
    """What ``flow_store`` knows about Agent Framework: its checkpoint storage.

    While ``flow_store`` is requested, ``backend.storage`` (a
    :class:`FlowsCheckpointStorage` writing into the store) is the checkpoint
    storage of every ``flows.run`` that does not pass its own. It applies the
    rules of the storage each workflow was built with (``"memory"`` for
    ``InMemoryCheckpointStorage``, ``"file"`` otherwise) until the test chooses.
    """

    framework = "agent_framework"

    def __init__(self, store: Any, session: FlowsSession | None = None) -> None:
        self.store = store
        self.session = session
        self.storage = FlowsCheckpointStorage(store=store)
        self.storage.use_rules(None)  # follow each run's workflow

    def allow(self, *types: type | str) -> None:
        """Let the restricted unpickler rebuild these types (as ``allowed_checkpoint_types``)."""
        self.storage.allow(*types)

    def accepts(self, target: object) -> bool:
        from agent_framework import Workflow, WorkflowCheckpoint

        from pytest_flows.run import FlowRun

        if isinstance(target, FlowRun):
            return isinstance(target.flow, Workflow)
        return isinstance(target, Workflow | WorkflowCheckpoint)

    def round_trip(self, state: Any) -> list[Any]:
        return self.storage.round_trip(state)[1]

    def state_id(self, state: Any) -> str | None:
        return None


def checkpoint_storage(
    flow_store: Any, *, rules: CheckpointRules | None = None
) -> FlowsCheckpointStorage:
    """The Agent Framework checkpoint storage behind ``flow_store`` in this test.

    By default it applies the rules of the storage each workflow was built with;
    ``rules="file"`` checks every checkpoint as ``FileCheckpointStorage`` would
    (strict: for a workflow that uses ``InMemoryCheckpointStorage`` today and a
    durable storage tomorrow), ``rules="memory"`` as ``InMemoryCheckpointStorage``.
    """
    backend = flow_store.backend("agent_framework")
    storage: FlowsCheckpointStorage = backend.storage
    if rules is not None:
        storage.use_rules(check_rules(rules, "checkpoint_storage(flow_store, rules=...)"))
    return storage
