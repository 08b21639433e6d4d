"""Two agents ask for tool approval in the same superstep; the human approves."""

from __future__ import annotations

import af_bookings
import pytest
from af_bookings import build_workflow
from agent_framework import Content

from pytest_flows import call_tool
from pytest_flows.agent_framework import FlowsChatClient, explore_seeds, requests


@pytest.fixture(autouse=True)
def _fresh_bookings():
    af_bookings.BOOKED.clear()


def script(fake_llm) -> None:
    fake_llm.on(agent="flights").reply(call_tool("book_flight", city="Oslo"), "Flight booked.")
    fake_llm.on(agent="hotels").reply(call_tool("book_hotel", city="Oslo"), "Hotel booked.")


def approve(request: Content) -> Content:
    return request.to_function_approval_response(approved=True)


def test_both_bookings_wait_for_approval(flows, fake_llm):
    script(fake_llm)
    fake_llm.allow_unused()  # the final answers come after the approvals

    run = flows.run(build_workflow(FlowsChatClient()), "Oslo")

    assert run.status == "IDLE_WITH_PENDING_REQUESTS"
    assert sorted(p.executor for p in run.pending) == ["flights", "hotels"]
    assert af_bookings.BOOKED == []


def test_approved_bookings_run_the_tools(flows, fake_llm, human):
    script(fake_llm)
    requests(human).on(request=Content).respond(approve, times=2)

    run = flows.run(build_workflow(FlowsChatClient()), "Oslo")

    assert run.outputs == ["flights: Flight booked. | hotels: Hotel booked."]
    assert sorted(af_bookings.BOOKED) == ["flight:Oslo", "hotel:Oslo"]


def test_the_trace_is_the_same_under_every_seed(flows, fake_llm, human):
    # Every seed's run asks again: script by what the conversation holds (a call
    # that already saw its tool's result answers), not by order.
    for agent, name in (("flights", "book_flight"), ("hotels", "book_hotel")):
        first = fake_llm.on(agent=agent, where=lambda r: not r.data["tools_called"])
        first.reply(call_tool(name, city="Oslo"), times="always")
        fake_llm.on(agent=agent).reply(f"{agent.title()[:-1]} booked.", times="always")
    requests(human).on(request=Content).respond(approve, times="always")

    exploration = explore_seeds(
        flows, lambda: build_workflow(FlowsChatClient()), "Oslo", seeds=range(8)
    )

    exploration.assert_deterministic()
    assert exploration.runs[0].outputs == ["flights: Flight booked. | hotels: Hotel booked."]


def test_the_trace_of_two_approvals(flows, fake_llm, human, snapshot):
    script(fake_llm)
    requests(human).on(request=Content).respond(approve, times=2)

    run = flows.run(build_workflow(FlowsChatClient()), "Oslo")

    assert run.trace.render() == snapshot  # the same text under every --flows-seed
