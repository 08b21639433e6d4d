"""LangGraph's side of ``flow_store``: the checkpointer every run uses while it is bound.

The adapter's ``bind_store`` calls :func:`store_saver`; ``flows.run`` swaps the
saver in for the graph's own checkpointer with the graph's serializer
(:meth:`FlowsCheckpointSaver.serving`), so ``flow_store.history(thread_id)`` and
``flow_store.checkpoints()`` show every durable write of every thread.
"""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from pytest_flows.adapters import FieldChange, FlowStore, FlowsUsageError, differences
from pytest_flows.langgraph._checkpoints import FRAMEWORK, FlowsCheckpointSaver

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = [
    "LangGraphStoreBackend",
    "assert_round_trip",
    "checkpoint_saver",
    "round_trip",
    "store_saver",
]

#: One backend per store: binding twice (a second activation) keeps the stored threads.
_BACKENDS: weakref.WeakKeyDictionary[FlowStore, LangGraphStoreBackend] = weakref.WeakKeyDictionary()


class LangGraphStoreBackend:
    """What ``flow_store`` knows about LangGraph: the checkpointer behind it."""

    framework = FRAMEWORK

    def __init__(self, store: FlowStore, session: FlowsSession | None = None) -> None:
        self.store = store
        self.session = session
        self.saver = FlowsCheckpointSaver(store=store)

    def accepts(self, target: object) -> bool:
        from langgraph.graph.state import StateGraph
        from langgraph.pregel import Pregel

        from pytest_flows.adapters import FlowRun

        if isinstance(target, FlowRun):
            target = target.flow
        return isinstance(target, Pregel | StateGraph | FlowsCheckpointSaver)

    def round_trip(self, state: Any) -> list[FieldChange]:
        """``state`` through the saver's serializer as a checkpoint stores a channel value."""
        return round_trip(self.saver, state)[1]

    def state_id(self, state: Any) -> str | None:
        return None  # a thread's id is in its config, not in its state

    def operations(self, flows: FlowsSession) -> Any:
        raise FlowsUsageError(
            "flow_store's crash/fork/time-travel helpers take a flow; for a LangGraph graph "
            "use pytest_flows.langgraph's check_crash_resume, check_time_travel and "
            "check_fork_isolation (GraphCase(graph, inputs, store=flow_store, ...))."
        )


def store_saver(store: FlowStore, session: FlowsSession | None = None) -> FlowsCheckpointSaver:
    """The checkpointer of ``store`` (registering LangGraph's backend with it once)."""
    backend = _BACKENDS.get(store)
    if backend is None:
        backend = _BACKENDS[store] = LangGraphStoreBackend(store, session)
        store.register_backend(backend)
    return backend.saver


def checkpoint_saver(flow_store: FlowStore) -> FlowsCheckpointSaver:
    """The LangGraph checkpointer behind ``flow_store`` in this test (to compile a graph
    with, or to read what it stored)."""
    return store_saver(flow_store)


def round_trip(saver: FlowsCheckpointSaver, value: Any) -> tuple[Any, list[FieldChange]]:
    """``value`` through ``saver``'s serializer: (what a load gives back, what changed)."""
    back = saver.serde.loads_typed(saver.serde.dumps_typed(copy.deepcopy(value)))
    return back, differences(value, back)


def assert_round_trip(saver: FlowsCheckpointSaver, value: Any) -> None:
    """Assert that ``value`` comes back from a checkpoint as it went in (a type outside
    the msgpack allowlist under ``LANGGRAPH_STRICT_MSGPACK`` comes back as its fields)."""
    _, changes = round_trip(saver, value)
    if changes:
        raise AssertionError(
            "checkpoint save -> load does not give the value back:\n"
            + "".join(f"  {change.describe()}\n" for change in changes)
            + "Allow the type in the serializer's allowed_msgpack_modules, or keep the state "
            "to types the serializer knows."
        )
