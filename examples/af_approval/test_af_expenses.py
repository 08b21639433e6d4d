"""The tests a user writes for a request_info / @response_handler approval workflow."""

from __future__ import annotations

from af_expenses import (
    ALLOWED_CHECKPOINT_TYPES,
    ApprovalRequest,
    Claim,
    Decision,
    build_workflow,
)

from pytest_flows.agent_framework import checkpoint_storage, requests

TAXI = Claim("ana", 80, "taxi to the airport")
LAPTOP = Claim("bo", 1800, "laptop")


def test_a_small_claim_needs_finance_only(flows, human):
    requests(human).on(request=ApprovalRequest, data={"role": "finance"}).respond(Decision(True))

    run = flows.run(build_workflow(), TAXI)

    assert run.outputs == ["PAID 80 to ana: taxi to the airport"]
    assert run.state == {"approvals": ["finance:True"]}
    assert [r.caller["method"] for r in human.requests] == ["finance"]


def test_a_large_claim_needs_the_manager_first(flows, human):
    requests(human).on(executor="manager").respond(Decision(True))
    requests(human).on(executor="finance").respond(Decision(True))

    run = flows.run(build_workflow(), LAPTOP)

    assert run.outputs == ["PAID 1800 to bo: laptop"]
    assert run.state == {"approvals": ["manager:True", "finance:True"]}


def test_a_rejection_stops_the_claim(flows, human):
    requests(human).on(executor="manager").respond(Decision(False, "use the pool laptop"))

    run = flows.run(build_workflow(), LAPTOP)

    assert run.outputs == ["REJECTED by manager (use the pool laptop): laptop"]


def test_the_answer_can_depend_on_the_request(flows, human):
    requests(human).respond(lambda request: Decision(request.claim.amount < 100), times="always")

    assert flows.run(build_workflow(), TAXI).outputs[0].startswith("PAID")
    assert flows.run(build_workflow(), Claim("cy", 120, "dinner")).outputs[0].startswith("REJECTED")


def test_without_a_human_the_workflow_waits(flows):
    run = flows.run(build_workflow(), TAXI)

    assert run.status == "IDLE_WITH_PENDING_REQUESTS"
    request = run.request()
    assert request.executor == "finance"
    assert request.data == ApprovalRequest("finance", TAXI)
    assert request.response_type is Decision

    done = flows.run(run.flow, responses={request.request_id: Decision(True)})
    assert done.outputs == ["PAID 80 to ana: taxi to the airport"]


def test_pause_and_resume_in_a_new_process(flows, flow_store, human):
    checkpoint_storage(flow_store).allow(*ALLOWED_CHECKPOINT_TYPES)
    requests(human).on(executor="manager").respond(Decision(True))
    requests(human).on(executor="finance").pause()  # finance is away: the claim waits

    paused = flows.run(build_workflow(), LAPTOP)
    assert paused.status == "IDLE_WITH_PENDING_REQUESTS"
    assert paused.request().executor == "finance"

    # Days later, another process: rebuild the workflow, restore the pause, answer.
    requests(human).on(executor="finance").respond(Decision(True))
    done = flows.run(build_workflow(), checkpoint_id=paused.last_checkpoint)

    assert done.outputs == ["PAID 1800 to bo: laptop"]
    # The manager answered before the pause was saved: not asked again.
    assert [r.caller["method"] for r in human.requests] == ["manager", "finance", "finance"]
    assert [e.get("by") for e in done.trace.of_kind("request.answered")] == ["human"]
    assert done.state == {"approvals": ["manager:True", "finance:True"]}


def test_the_trace_of_an_approval(flows, human, snapshot):
    requests(human).on(executor="finance").respond(Decision(True, "ok"))

    run = flows.run(build_workflow(), TAXI)

    assert run.trace.render() == snapshot
