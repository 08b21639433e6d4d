"""Graphs with async nodes: flows.run(..., asynchronous=True) and flows.arun."""

from __future__ import annotations

import asyncio

import lg_graphs
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy


def _async_builder():
    async def slow(state):
        await asyncio.sleep(30)  # virtual: costs nothing
        return {"notes": ["slow"]}

    async def fast(state):
        return {"notes": ["fast"]}

    builder = StateGraph(lg_graphs.Notes)
    builder.add_node("slow", slow)
    builder.add_node("fast", fast)
    builder.add_edge(START, "slow")
    builder.add_edge(START, "fast")
    builder.add_edge(["slow", "fast"], END)
    return builder


def test_async_nodes_run_with_astream(flows):
    run = flows.run(_async_builder(), {"notes": []}, asynchronous=True)

    assert run.status == "finished"
    assert run.values["notes"] == ["fast", "slow"]  # task order, not completion order
    assert "superstep started 1 tasks=[fast, slow]" in run.trace.lines()
    assert flows.clock.monotonic() >= 30


@pytest.mark.asyncio
async def test_arun_in_an_async_test(flows):
    run = await flows.arun(_async_builder(), {"notes": []}, asynchronous=True)
    assert run.values["notes"] == ["fast", "slow"]


def test_asynchronous_must_be_a_bool(flows):
    from pytest_flows import FlowsUsageError

    with pytest.raises(FlowsUsageError, match="asynchronous='yes'"):
        flows.run(_async_builder(), {"notes": []}, asynchronous="yes")


def _flaky_builder(attempts: list[int]):
    def flaky(state):
        attempts.append(1)
        if len(attempts) < 3:
            raise ValueError("try again")
        return {"notes": ["ok"]}

    builder = StateGraph(lg_graphs.Notes)
    builder.add_node(
        "flaky",
        flaky,
        retry_policy=RetryPolicy(initial_interval=1.0, jitter=True, retry_on=ValueError),
    )
    builder.add_edge(START, "flaky")
    return builder


def test_retry_jitter_is_seeded():
    from pytest_flows import FlowsSession

    waited = {}
    for seed in (0, 0, 5):
        attempts: list[int] = []
        with FlowsSession(seed=seed, test_id="jitter") as flows:
            run = flows.run(_flaky_builder(attempts), {"notes": []})
            assert run.values["notes"] == ["ok"] and len(attempts) == 3
            waited.setdefault(seed, []).append(flows.clock.monotonic())
    # two backoffs (1 s, then 2 s) plus a jitter in [0, 1) each: the same per seed
    assert waited[0][0] == waited[0][1]
    assert 3 <= waited[0][0] < 5 and 3 <= waited[5][0] < 5
    assert waited[5][0] != waited[0][0]
