"""Each run's trace holds exactly its own events: side by side, in a helper thread, nested."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from crewai.flow.flow import Flow, listen, start
from dispatch_flows import FanOut, Loop, Routing

from pytest_flows import FlowsSession


def _solo(flows: FlowsSession, flow: type[Flow[Any]], **kwargs: Any) -> str:
    """The trace of ``flow`` run on its own, in this test's harness."""
    return flows.run(flow, **kwargs).trace.render()


def _in_thread(work: Any) -> Any:
    result: dict[str, Any] = {}

    def body() -> None:
        try:
            result["value"] = work()
        except BaseException as exc:  # surfaced in the test thread
            result["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


@pytest.mark.asyncio
async def test_gathered_runs_each_keep_exactly_their_own_events(flows: FlowsSession) -> None:
    fan, routing, loop = await asyncio.gather(
        flows.arun(FanOut),
        flows.arun(Routing, inputs={"priority": "high"}),
        flows.arun(Loop),
    )

    assert fan.trace.names("flow.started") == ["FanOut"]
    assert routing.trace.names("flow.started") == ["Routing"]
    assert loop.trace.names("flow.started") == ["Loop"]
    # event for event what each flow does when it runs alone
    assert fan.trace.render() == _solo(flows, FanOut)
    assert routing.trace.render() == _solo(flows, Routing, inputs={"priority": "high"})
    assert loop.trace.render() == _solo(flows, Loop)
    # the test's trace still holds everything, the three gathered runs interleaved
    gathered = len(fan.trace) + len(routing.trace) + len(loop.trace)
    assert len(flows.trace) == 2 * gathered


def test_a_run_in_a_helper_thread_records_its_trace(flows: FlowsSession) -> None:
    run = _in_thread(lambda: flows.run(Routing, inputs={"priority": "low"}))

    assert run.output == "queued"
    assert "router chose classify label=routine" in run.trace.lines()
    assert run.trace.render() == _solo(flows, Routing, inputs={"priority": "low"})


def test_kickoff_in_a_helper_thread_lands_in_the_test_trace(flows: FlowsSession) -> None:
    output = _in_thread(lambda: Routing().kickoff(inputs={"priority": "high"}))

    assert output == "paged"
    assert flows.trace.names("flow.finished") == ["Routing"]
    assert "method finished page output='paged'" in flows.trace.lines()


def test_a_thread_started_inside_a_flow_method_reports_to_that_run(flows: FlowsSession) -> None:
    class Spawner(Flow):  # type: ignore[type-arg]
        @start()
        def spawn(self) -> str:
            return str(_in_thread(lambda: Routing().kickoff(inputs={"priority": "low"})))

    run = flows.run(Spawner)

    assert run.trace.names("flow.started") == ["Spawner", "Routing"]
    assert "method finished spawn output='queued'" in run.trace.lines()


class Parcel:
    """A plain object: its default repr carries a memory address."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.weight = 2
        self._handle = object()


class Shipping(Flow):  # type: ignore[type-arg]
    @start()
    def pack(self) -> Parcel:
        return Parcel("books")

    @listen(pack)
    def ship(self, parcel: Parcel) -> list[Parcel]:
        return [parcel]


def test_plain_object_outputs_render_without_an_address(flows: FlowsSession) -> None:
    run = flows.run(Shipping)

    lines = run.trace.lines()
    assert "method finished pack output=Parcel(label='books', weight=2)" in lines
    assert "method finished ship output=[\"Parcel(label='books', weight=2)\"]" in lines
    assert "0x" not in run.trace.render()
