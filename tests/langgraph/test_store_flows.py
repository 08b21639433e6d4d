"""The store through the harness: ``flows.run`` with ``flow_store`` requested writes every
thread through the flows checkpointer, a crash point stops it, and the persistence
properties run on ``flows.run`` (seeded scheduler) as they do on bare ``invoke``."""

from __future__ import annotations

import dataclasses
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from test_store_graphs import GRAPHS, approval_graph, loop_graph, send_graph

from pytest_flows.adapters import CrashPoint, SimulatedCrash
from pytest_flows.langgraph._persistence import checkpoint_saver
from pytest_flows.langgraph._properties import (
    GraphCase,
    assert_crash_resume,
    check_time_travel,
    crash_points,
)

LOOP_INPUTS = GRAPHS["loop"][1]


@dataclasses.dataclass
class Ticket:
    title: str


class Holding(TypedDict):
    ticket: Any


def test_flows_run_writes_every_durable_write_into_flow_store(flows, flow_store):
    run = flows.run(loop_graph(rounds=1).compile(), LOOP_INPUTS, durability="sync")

    saves = flow_store.history(run.thread_id)
    assert [s.method for s in saves][:4] == [
        "put step -1 (input)",
        "put_writes __start__: branch:to:a, notes, rounds",
        "put step 0 (loop)",
        "put_writes a: branch:to:b, branch:to:c, notes, rounds",
    ]
    assert [r.id for r in flow_store.checkpoints()] == run.checkpoints
    assert flow_store.checkpoints()[-1].state == run.values
    assert isinstance(run.graph.checkpointer, type(checkpoint_saver(flow_store)))


def test_a_crash_point_stops_flows_run_and_the_thread_resumes(flows, flow_store):
    graph = loop_graph(rounds=2).compile()
    whole = flows.run(graph, LOOP_INPUTS, durability="sync")

    with flow_store.crash_at(CrashPoint(5)), pytest.raises(SimulatedCrash):
        flows.run(
            graph, LOOP_INPUTS, config={"configurable": {"thread_id": "t"}}, durability="sync"
        )
    resumed = flows.run(graph, None, config={"configurable": {"thread_id": "t"}}, durability="sync")

    assert resumed.values == whole.values
    # it went on from the durable step 1: no write of the run is repeated
    assert [s.method for s in flow_store.history("t")] == [
        s.method for s in flow_store.history(whole.thread_id)
    ]


def test_an_interrupted_thread_resumes_from_flow_store(flows, flow_store):
    graph = approval_graph().compile()
    paused = flows.run(graph, GRAPHS["approval"][1])

    done = flows.run(graph, Command(resume="yes"), config=paused.config)

    assert paused.status == "interrupted"
    assert done.values["log"] == ["write", "review", "publish"]
    assert any("review: __resume__" in s.method for s in flow_store.history(done.thread_id))


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_crash_resume_through_flows_run(flows, flow_store, durability):
    case = GraphCase(
        send_graph,
        GRAPHS["send"][1],
        store=flow_store,
        durability=durability,
        flows=flows,
    )

    for point in crash_points(case):
        assert_crash_resume(case, point)


def test_time_travel_through_flows_run(flows, flow_store):
    build, inputs, answers = GRAPHS["approval"]
    case = GraphCase(build, inputs, store=flow_store, answers=answers, flows=flows)
    assert case.saver is checkpoint_saver(flow_store)  # the saver flows.run uses

    check_time_travel(case, max_examples=10)


def test_the_same_seed_writes_the_same_history(flows, flow_store):
    # parallel workers' writes land in completion order; the seed fixes it
    first = flows.run(send_graph().compile(), GRAPHS["send"][1], durability="sync")
    second = flows.run(send_graph().compile(), GRAPHS["send"][1], durability="sync")

    def writes(thread: str) -> list[str]:
        return [s.method for s in flow_store.history(thread) if "send#" in s.method]

    assert len(writes(first.thread_id)) == 3
    assert writes(first.thread_id) == writes(second.thread_id)


def test_flows_run_stores_through_the_serializer_the_graph_was_compiled_with(flows, flow_store):
    # Compared with the bare runtime: the same graph on its own strict InMemorySaver.
    def build() -> Any:
        builder = StateGraph(Holding)
        builder.add_node("keep", lambda state: {"ticket": state["ticket"]})
        builder.add_edge(START, "keep")
        builder.add_edge("keep", END)
        strict = JsonPlusSerializer(allowed_msgpack_modules=None)
        return builder.compile(checkpointer=InMemorySaver(serde=strict))

    bare = build()
    bare.invoke({"ticket": Ticket("x")}, {"configurable": {"thread_id": "t"}})
    expected = bare.get_state({"configurable": {"thread_id": "t"}}).values["ticket"]

    run = flows.run(build(), {"ticket": Ticket("x")})

    assert not isinstance(expected, Ticket)  # strict msgpack drops the unlisted type
    assert run.values["ticket"] == expected
    assert flow_store.checkpoints()[-1].state == {"ticket": expected}
