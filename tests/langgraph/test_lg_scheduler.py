"""Parallel nodes run on the deterministic scheduler: compared with the bare runtime."""

from __future__ import annotations

import lg_graphs
from langgraph.checkpoint.memory import InMemorySaver

from pytest_flows import FlowsSession


def _order(result):
    return tuple(i.value for i in result["__interrupt__"])


def test_parallel_interrupts_vary_bare_and_are_one_order_per_seed_under_the_harness():
    # What is compared: the order of `__interrupt__` that invoke returns when three
    # parallel nodes each call interrupt() (LangGraph adds each as its task completes).
    graph = lg_graphs.parallel_interrupts_builder(3).compile()

    # Bare: plain invoke (this test requests no harness), a fresh thread each time.
    bare_graph = graph.copy(update={"checkpointer": InMemorySaver()})
    bare: set[tuple[str, ...]] = set()
    for n in range(200):
        bare.add(_order(bare_graph.invoke({"notes": []}, {"configurable": {"thread_id": f"{n}"}})))
        if len(bare) > 1:
            break
    assert len(bare) > 1, f"the bare runtime showed one order in {n + 1} runs: {bare}"

    # Under the harness: each seed, in two sessions of its own, gives one order.
    by_seed: dict[int, set[tuple[str, ...]]] = {}
    for seed in range(4):
        for _ in range(2):
            with FlowsSession(seed=seed, test_id="parallel-interrupts") as flows:
                run = flows.run(graph, {"notes": []})
            by_seed.setdefault(seed, set()).add(_order(run.result))
    assert all(len(orders) == 1 for orders in by_seed.values()), by_seed
    # every order a seed gives is one the runtime can give (a permutation of the three)
    assert all(sorted(o) == ["p0?", "p1?", "p2?"] for s in by_seed.values() for o in s)


def test_a_wide_fan_out_finishes_the_same_under_every_seed():
    graph = lg_graphs.parallel_builder(6).compile()
    bare = graph.invoke({"notes": []})
    for seed in range(3):
        with FlowsSession(seed=seed, test_id="fan-out") as flows:
            run = flows.run(graph, {"notes": []})
        # LangGraph applies a superstep's writes in task order: the state never
        # depends on completion order, under any seed, as bare
        assert run.values == bare
