"""A sync graph's pool runs its worker loops on the scheduler's kept workers: what a node
can see of its thread is compared with the bare runtime's."""

from __future__ import annotations

import contextvars
import re
import threading
import time
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from pytest_flows import FlowsSession

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("lg_kept_pool_mark", default="")


def _extend(left: list[Any], right: list[Any]) -> list[Any]:
    return left + right


class Seen(TypedDict, total=False):
    seen: Annotated[list[Any], _extend]


def _seeing_graph(width: int) -> Any:
    """``width`` parallel nodes, each noting its thread's name, its context's mark and
    how many of its siblings ran at the same time (it sleeps in between)."""
    running = {"now": 0, "most": 0}
    lock = threading.Lock()

    def node(state: Seen) -> Seen:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        time.sleep(0.01)
        with lock:
            running["now"] -= 1
        name = threading.current_thread().name
        return {"seen": [(name, MARK.get(), running["most"])]}

    builder = StateGraph(Seen)
    names = [f"n{i}" for i in range(width)]
    for name in names:
        builder.add_node(name, node)
        builder.add_edge(START, name)
        builder.add_edge(name, END)
    return builder.compile()


def _names(seen: list[Any]) -> set[str]:
    # "ThreadPoolExecutor-<pool>_<worker>": the pool's number differs from run to run
    return {re.sub(r"-\d+_", "-N_", name) for name, _, _ in seen}


def test_a_node_sees_the_thread_name_and_context_a_bare_pool_gives() -> None:
    graph = _seeing_graph(3)
    MARK.set("caller")
    bare = graph.copy(update={"checkpointer": InMemorySaver()})
    bare_seen = bare.invoke({"seen": []}, {"configurable": {"thread_id": "1"}})["seen"]
    with FlowsSession(test_id="kept-pool-names") as flows:
        runs = [flows.run(graph, {"seen": []}) for _ in range(3)]
    for run in runs:
        seen = run.values["seen"]
        # the name LangGraph's pool gives its thread (logging's threadName), not the
        # kept worker's own
        assert _names(seen) <= {f"ThreadPoolExecutor-N_{i}" for i in range(3)}
        assert _names(bare_seen) <= {f"ThreadPoolExecutor-N_{i}" for i in range(3)}
        # each job in a copy of its submitter's context, as bare (LangGraph copies it)
        assert {mark for _, mark, _ in seen} == {mark for _, mark, _ in bare_seen} == {"caller"}


def test_runs_after_the_first_start_no_thread() -> None:
    # bare, each invoke starts its pool's threads; here the second run's nodes run on
    # the threads the first run started (the OS's thread ids, which it does not reuse soon)
    def node(state: Seen) -> Seen:
        return {"seen": [threading.get_native_id()]}

    builder = StateGraph(Seen)
    for name in ("a", "b", "c"):
        builder.add_node(name, node)
        builder.add_edge(START, name)
    graph = builder.compile()
    with FlowsSession(test_id="kept-pool-starts") as flows:
        first = set(flows.run(graph, {"seen": []}).values["seen"])
        before = threading.active_count()
        later = [set(flows.run(graph, {"seen": []}).values["seen"]) for _ in range(3)]
        assert threading.active_count() == before
    assert all(ids <= first for ids in later), (first, later)


@pytest.mark.parametrize("limit", [1, 2])
def test_max_concurrency_still_bounds_the_pool(limit: int) -> None:
    # LangGraph's pool has max_workers=max_concurrency; the kept workers keep its bound:
    # at most ``limit`` nodes in flight (each sleeps, so without the bound all 4 would be)
    graph = _seeing_graph(4)
    with FlowsSession(test_id="kept-pool-bound", seed=3) as flows:
        run = flows.run(graph, {"seen": []}, config={"max_concurrency": limit})
    assert max(most for _, _, most in run.values["seen"]) == limit
    assert len(_names(run.values["seen"])) <= limit


def test_without_a_bound_the_sleeping_nodes_overlap_as_bare() -> None:
    graph = _seeing_graph(4)
    with FlowsSession(test_id="kept-pool-unbound") as flows:
        run = flows.run(graph, {"seen": []})
    assert max(most for _, _, most in run.values["seen"]) == 4
