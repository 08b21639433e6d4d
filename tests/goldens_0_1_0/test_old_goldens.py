"""Golden tests as a user wrote them against pytest-flows 0.1.0 (unchanged since)."""

from __future__ import annotations

import old_bookings
import pytest
from agent_framework import Content
from old_approvals import ApprovalFlow, checkpointed
from old_bookings import build_workflow as build_bookings
from old_email_validation import DomainCheck
from old_email_validation import build_workflow as build_validation

from pytest_flows import call_tool
from pytest_flows.agent_framework import FlowsChatClient, requests


@pytest.fixture(autouse=True)
def _fresh_bookings():
    old_bookings.BOOKED.clear()


# (a) a crewAI @human_feedback run that pauses, then resumes
@pytest.mark.golden
def test_a_purchase_waits_for_the_manager(flows, flow_store, human):
    human.pause()
    inputs = {"item": "laptop", "amount": 1200}
    paused = flows.run(ApprovalFlow(checkpoint=checkpointed()), inputs=inputs)
    assert paused.state.status == "priced"

    ordered = human.resume(paused, "yes, go ahead", outcome="approved")
    assert ordered.output == "ordered laptop"


def _script_bookings(fake_llm) -> None:
    fake_llm.on(agent="flights").reply(call_tool("book_flight", city="Oslo"), "Flight booked.")
    fake_llm.on(agent="hotels").reply(call_tool("book_hotel", city="Oslo"), "Hotel booked.")


# (b) an Agent Framework workflow whose agents' tool calls need approval
@pytest.mark.golden
def test_bookings_wait_for_approval(flows, flow_store, fake_llm):
    _script_bookings(fake_llm)
    fake_llm.allow_unused()  # the final answers come after the approvals

    run = flows.run(build_bookings(FlowsChatClient()), "Oslo")

    assert run.status == "IDLE_WITH_PENDING_REQUESTS"
    assert old_bookings.BOOKED == []


@pytest.mark.golden
def test_approved_bookings_run_the_tools(flows, flow_store, fake_llm, human):
    _script_bookings(fake_llm)
    approve = lambda request: request.to_function_approval_response(approved=True)  # noqa: E731
    requests(human).on(request=Content).respond(approve, times=2)

    run = flows.run(build_bookings(FlowsChatClient()), "Oslo")

    assert run.outputs == ["flights: Flight booked. | hotels: Hotel booked."]


# (c) an Agent Framework workflow with a sub-workflow (WorkflowExecutor)
@pytest.mark.golden
def test_a_sub_workflow_request_is_answered_by_a_person(flows, human):
    requests(human).on(request=DomainCheck).respond(True)

    run = flows.run(build_validation(), ["ann@example.com", "bo@other.org"])

    assert sorted(run.outputs) == ["ann@example.com: valid", "bo@other.org: valid"]
