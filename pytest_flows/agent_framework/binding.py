"""How the harness's fakes (``flow_store``, ``human``, ``fake_llm``) plug into Agent Framework."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pytest_flows.agent_framework.checkpoints import (
    CheckpointRules,
    FlowsCheckpointStorage,
    check_rules,
)

if TYPE_CHECKING:
    from pytest_flows.agent_framework.adapter import AgentFrameworkAdapter
    from pytest_flows.session import FlowsSession

__all__ = ["AgentFrameworkStoreBackend", "bind", "checkpoint_storage"]


def bind(
    adapter: AgentFrameworkAdapter, session: FlowsSession, kind: str, fake: Any
) -> contextlib.AbstractContextManager[None] | None:
    fakes = adapter.fakes(session)
    if kind == "store":
        if not callable(getattr(fake, "add_checkpoint", None)):
            return None
        backend = AgentFrameworkStoreBackend(fake)
        fake.register_backend(backend)
        return _setting(fakes, "storage", backend.storage)
    if kind == "human":
        if not callable(getattr(getattr(fake, "script", None), "take", None)):
            return None
        return _setting(fakes, "human", fake)
    if kind == "llm":
        from pytest_flows.agent_framework.chat import intercept_chat_clients

        stack = contextlib.ExitStack()
        stack.enter_context(_setting(fakes, "llm", fake))
        stack.enter_context(intercept_chat_clients(fake))
        return _closing(stack)
    return None


@contextlib.contextmanager
def _closing(stack: contextlib.ExitStack) -> Iterator[None]:
    with stack:
        yield


@contextlib.contextmanager
def _setting(fakes: Any, name: str, value: Any) -> Iterator[None]:
    previous = getattr(fakes, name)
    setattr(fakes, name, value)
    try:
        yield
    finally:
        setattr(fakes, name, previous)


class AgentFrameworkStoreBackend:
    """What ``flow_store`` knows about Agent Framework: its checkpoint storage.

    While ``flow_store`` is requested, ``backend.storage`` (a
    :class:`FlowsCheckpointStorage` writing into the store) is the checkpoint
    storage of every ``flows.run`` that does not pass its own. It applies the
    rules of the storage each workflow was built with (``"memory"`` for
    ``InMemoryCheckpointStorage``, ``"file"`` otherwise) until the test chooses.
    """

    framework = "agent_framework"

    def __init__(self, store: Any) -> None:
        self.store = store
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
