"""Exploring LangGraph graphs: a schedule replays, store ops are switch points and
recorded accesses, and what seeds reach a complete search holds."""

from __future__ import annotations

import asyncio
import operator
import time
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.runtime.schedule import Chooser
from pytest_flows.langgraph._explore import JoinOrder, store_keys


class Notes(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]


def counter_graph(*, asynchronous: bool = False) -> Any:
    """Two parallel nodes read-modify-write one store key; a join reports it."""
    store = InMemoryStore()
    builder = StateGraph(Notes)

    def bump(name: str) -> Any:
        def node(state: Notes, *, store: BaseStore) -> Notes:
            item = store.get(("c",), "n")
            n = item.value["n"] if item else 0
            store.put(("c",), "n", {"n": n + 1, "by": name})
            return {"notes": [name]}

        async def anode(state: Notes, *, store: BaseStore) -> Notes:
            item = await store.aget(("c",), "n")
            await asyncio.sleep(0.01)
            n = item.value["n"] if item else 0
            await store.aput(("c",), "n", {"n": n + 1, "by": name})
            return {"notes": [name]}

        return anode if asynchronous else node

    def join(state: Notes, *, store: BaseStore) -> Notes:
        item = store.get(("c",), "n")
        return {"notes": [f"n={item.value['n']} by={item.value['by']}"]}

    for name in ("a", "b"):
        builder.add_node(name, bump(name))
        builder.add_edge(START, name)
    builder.add_node("join", join)
    builder.add_edge(["a", "b"], "join")
    builder.add_edge("join", END)
    return builder.compile(store=store)


def sleepers_graph() -> Any:
    """Three parallel nodes that sleep, each on a pool worker of its own, and a join."""
    builder = StateGraph(Notes)

    def sleeper(name: str) -> Any:
        def node(state: Notes) -> Notes:
            time.sleep(0.01)
            return {"notes": [name]}

        return node

    for name in ("a", "b", "c"):
        builder.add_node(name, sleeper(name))
        builder.add_edge(START, name)
    builder.add_node("join", lambda state: {"notes": ["join"]})
    builder.add_edge(["a", "b", "c"], "join")
    builder.add_edge("join", END)
    return builder.compile()


def _choices(build: Any, **kwargs: Any) -> list[tuple[str, int]]:
    with FlowsSession(test_id="lg-explore") as flows:
        chooser = Chooser([])
        with flows.scheduler.following(chooser):
            flows.run(build(), {"notes": []}, raise_on_error=False, **kwargs)
    return [(c.kind, len(c.options)) for c in chooser.choices]


def test_one_schedule_of_a_sync_parallel_graph_makes_the_same_choices_every_run():
    # LangGraph makes and shuts down a pool per run; shutdown joined its workers in a
    # set's (address) order, so the default schedule ended with 123, 126 or 129 choice
    # points from run to run and explore() stopped: "ran differently from the run it
    # was derived from". Now the joins follow start order.
    runs = {tuple(_choices(sleepers_graph)) for _ in range(8)}
    assert len(runs) == 1, sorted(len(r) for r in runs)


def test_a_langgraph_pool_joins_its_workers_in_the_order_they_started():
    from concurrent.futures import ThreadPoolExecutor

    from langchain_core.runnables.config import ContextThreadPoolExecutor

    from pytest_flows.langgraph._explore import ordered_pool_joins

    with ordered_pool_joins():  # what flows.run(graph, ...) runs the graph under
        pool = ContextThreadPoolExecutor(max_workers=2)
        other = ThreadPoolExecutor(max_workers=1)  # the user's, or another framework's
    try:
        assert isinstance(pool._threads, JoinOrder)  # type: ignore[attr-defined]
        assert type(other._threads) is set  # type: ignore[attr-defined]
    finally:
        pool.shutdown()
        other.shutdown()
    order = JoinOrder([3, 1, 2])
    order.add(1)
    order.discard(3)
    assert list(order) == [1, 2] and order == {1, 2}


def test_outside_a_flows_test_a_pool_is_the_stdlib_one():
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        assert type(pool._threads) is set  # type: ignore[attr-defined]
    finally:
        pool.shutdown()


def test_store_ops_are_recorded_accesses_named_by_node():
    with FlowsSession(seed=3, test_id="lg-explore") as flows:
        chooser = Chooser([])
        with flows.scheduler.following(chooser):
            run = flows.run(counter_graph(), {"notes": []})
    assert run.values["notes"][-1] == "n=2 by=b"
    touched = {
        (step.method, key, key in step.writes)
        for step in chooser.steps
        for key in (*step.reads, *step.writes)
        if key.startswith("store:")
    }
    assert ("a", "store:c/n", False) in touched and ("a", "store:c/n", True) in touched
    assert ("b", "store:c/n", True) in touched and ("join", "store:c/n", False) in touched


def test_store_keys_order_a_search_against_puts_below_its_prefix():
    put = dict(store_keys(PutOp(("u", "1"), "k", {"v": 1})))
    assert put == {"store:u/1/k": True, "store:/*": True, "store:u/*": True, "store:u/1/*": True}
    assert store_keys(GetOp(("u", "1"), "k")) == [("store:u/1/k", False)]
    assert store_keys(SearchOp(("u",))) == [("store:u/*", False)]


def test_the_store_is_its_own_again_after_the_test():
    assert InMemoryStore.batch.__qualname__ == "InMemoryStore.batch"


def mutating_graph() -> Any:
    """``a`` appends to the list it was given; its parallel sibling ``b`` reads it."""

    class Seen(TypedDict, total=False):
        notes: Annotated[list[str], operator.add]
        seen: list[str]

    builder = StateGraph(Seen)

    def a(state: Seen) -> Seen:
        state["seen"].append("a")  # in place: the mistake the check reports
        return {"notes": ["a"]}

    def b(state: Seen) -> Seen:
        return {"notes": ["b saw " + ",".join(state["seen"])]}

    builder.add_node("init", lambda state: {"seen": []})
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "init")
    builder.add_edge("init", "a")
    builder.add_edge("init", "b")
    builder.add_edge(["a", "b"], END)
    return builder.compile()


def test_a_node_that_mutates_its_input_in_place_is_reported_while_exploring():
    import pytest

    from pytest_flows.adapters import FlowsWarning

    with (
        pytest.warns(FlowsWarning, match=r"node 'a' mutated state\['seen'\] in place") as got,
        FlowsSession(test_id="lg-explore") as flows,
    ):
        found = explore(flows, mutating_graph, {"notes": []}, max_schedules=5)
    assert "a resume from a checkpoint never does" in str(got[0].message)
    # what the report says: the sibling saw the change, the checkpoint never holds it
    values = found.outcomes[0].run.values
    assert values["seen"] == [] and "b saw a" in values["notes"]


def test_a_node_that_returns_its_update_is_not_reported():
    import warnings

    from pytest_flows.adapters import FlowsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", FlowsWarning)
        with FlowsSession(test_id="lg-explore") as flows:
            found = explore(flows, sleepers_graph, {"notes": []}, max_schedules=3)
    assert found.outcomes


def test_mutated_fields_compares_each_field_with_its_snapshot():
    from pytest_flows.langgraph._explore import _snapshot, mutated_fields

    state = {"xs": [1], "n": 1, "d": {"k": 1}}
    before = _snapshot(state)
    assert "n" not in before  # immutable: nothing to check
    state["xs"].append(2)
    assert mutated_fields(state, before) == ["xs"]


def _last_note(seed: int) -> str:
    with FlowsSession(seed=seed, test_id="lg-explore") as flows:
        return str(flows.run(counter_graph(), {"notes": []}).values["notes"][-1])


def test_seeds_order_two_parallel_sync_nodes_both_ways_each_seed_one_way():
    # Which node's put lands last is the OS's choice bare. Before each pool job drew its
    # own priority, the worker that took the first node took the second too, under every
    # one of 16 seeds ("last=b" always).
    by_seed = {seed: _last_note(seed) for seed in range(16)}
    assert set(by_seed.values()) >= {"n=2 by=a", "n=2 by=b"}, by_seed
    assert all(_last_note(seed) == by_seed[seed] for seed in (3, 11, 0))


def test_a_search_of_two_sync_nodes_bumping_one_store_key_is_complete():
    # The pool's own locks made 91 choice points a run (each a free lock a thread took),
    # and 3,000 schedules (127 s) found one outcome of two, not complete. Now its locks
    # are quiet, each job is a task of its own after the step that handed it over, and
    # the search ends: both last writers, and both lost updates (a get, the other's get,
    # both puts).
    with FlowsSession(test_id="lg-explore") as flows:
        found = explore(flows, counter_graph, {"notes": []}, max_schedules=100)
    assert found.complete, found.caveat
    lasts = {o.run.values["notes"][-1] for o in found.outcomes}
    assert lasts == {"n=2 by=a", "n=2 by=b", "n=1 by=a", "n=1 by=b"}
    assert found.schedules_run <= 20, found.schedules_run  # 14 today
    assert {_last_note(seed) for seed in range(16)} <= lasts


def test_a_run_of_two_parallel_sync_nodes_makes_few_choices():
    # 91 before the pool's bookkeeping was quiet; what is left: worker starts, blocked
    # waits, the nodes' store calls
    choices = _choices(counter_graph)
    assert len(choices) <= 40, len(choices)  # 35 today
