"""LangGraph's backend of ``flow_store``: one saver per store, what the store shows of a
thread (history, checkpoints, snapshots), round trips through the graph's serializer."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from test_store_graphs import GRAPHS, loop_graph

from pytest_flows._internal.snapshot import snapshot_text
from pytest_flows.adapters import FlowStore, FlowsUsageError
from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver
from pytest_flows.langgraph._persistence import (
    LangGraphStoreBackend,
    assert_round_trip,
    checkpoint_saver,
    round_trip,
    store_saver,
)


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def test_store_saver_registers_one_backend_per_store() -> None:
    store = FlowStore()

    saver = store_saver(store)

    assert store_saver(store) is saver is checkpoint_saver(store)
    backend = store.backend("langgraph")
    assert isinstance(backend, LangGraphStoreBackend)
    assert backend.saver is saver
    assert store_saver(FlowStore()) is not saver


def test_the_backend_claims_graphs_and_builders_not_plain_states() -> None:
    store = FlowStore()
    store_saver(store)
    builder = loop_graph()

    assert store.backend_for(builder).framework == "langgraph"
    assert store.backend_for(builder.compile()).framework == "langgraph"
    backend = store.backend("langgraph")
    assert not backend.accepts({"notes": []})
    assert backend.state_id({"notes": []}) is None
    with pytest.raises(FlowsUsageError, match="check_crash_resume, check_time_travel"):
        backend.operations(None)


def test_flow_store_shows_a_threads_checkpoints_and_saves_in_snapshots() -> None:
    store = FlowStore()
    graph = loop_graph(rounds=1).compile(checkpointer=store_saver(store))

    graph.invoke(GRAPHS["loop"][1], cfg("t1"), durability="sync")

    checkpoints = snapshot_text(store.checkpoints()[:3])
    assert checkpoints.splitlines()[:4] == [
        "Checkpoints",
        "  checkpoint 1 trigger=step -1 (input) branch=t1 parent=none completed=[]",
        "    (empty)",
        "  checkpoint 2 trigger=step 0 (loop) branch=t1 parent=1 completed=[]",
    ]
    assert '    notes: ["a0"]' in checkpoints
    saves = snapshot_text(store.history("t1")[:2])
    assert "save 2 after put_writes __start__: branch:to:a, notes, rounds" in saves
    assert 'put: "<uuid:1>"' in saves  # checkpoint ids normalized
    # the same run twice renders the same
    again = FlowStore()
    loop_graph(rounds=1).compile(checkpointer=store_saver(again)).invoke(
        GRAPHS["loop"][1], cfg("t1"), durability="sync"
    )
    assert snapshot_text(again.checkpoints()[:3]) == checkpoints


def test_flow_store_diff_compares_two_checkpoints_values() -> None:
    store = FlowStore()
    graph = loop_graph(rounds=1).compile(checkpointer=store_saver(store))
    graph.invoke(GRAPHS["loop"][1], cfg("t1"))
    first, second = store.checkpoints()[1:3]

    diff = store.diff(first, second)

    assert "rounds" in diff and "notes" in diff


@dataclasses.dataclass
class Draft:
    text: str


def test_round_trip_through_the_savers_serializer_names_what_a_strict_one_loses() -> None:
    permissive = FlowsCheckpointSaver()
    strict = FlowsCheckpointSaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))

    assert_round_trip(permissive, {"draft": Draft("x")})
    back, changes = round_trip(strict, {"draft": Draft("x")})

    assert not isinstance(back["draft"], Draft)
    assert [c.path for c in changes] == ["draft"]
    with pytest.raises(AssertionError, match=r"(?s)does not give the value back.*draft"):
        assert_round_trip(strict, {"draft": Draft("x")})
