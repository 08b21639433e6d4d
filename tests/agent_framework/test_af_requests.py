"""request_info and @response_handler: pausing, answering, restoring, not re-asking."""

from __future__ import annotations

import af_workflows as wf
import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows.agent_framework import FlowsCheckpointStorage, PendingRequest


def storage() -> FlowsCheckpointStorage:
    return FlowsCheckpointStorage(allowed_types=[wf.ReviewRequest])


def test_a_request_pauses_the_workflow(flows):
    run = flows.run(wf.build_approval(), "owls")

    assert run.status == "IDLE_WITH_PENDING_REQUESTS"
    assert run.outputs == []
    request = run.request()
    assert isinstance(request, PendingRequest)
    assert request.executor == "legal"
    assert request.data == wf.ReviewRequest(reviewer="legal", draft="Draft about owls")
    assert request.request_type is wf.ReviewRequest
    assert request.response_type is bool
    assert run.trace.lines()[-2:] == [
        "request info <uuid:1> executor=legal data=ReviewRequest(reviewer='legal', "
        "draft='Draft about owls') response_type=bool",
        "workflow idle_with_pending_requests approval pending=[<uuid:1>]",
    ]


@pytest.mark.parametrize(
    ("approved", "output"),
    [
        (True, "PUBLISHED: Draft about owls [ok legal]"),
        (False, "REJECTED by legal: Draft about owls"),
    ],
)
def test_answering_the_request_runs_the_response_handler(flows, approved, output):
    workflow = wf.build_approval()
    paused = flows.run(workflow, "owls")

    done = flows.run(workflow, responses={paused.request().request_id: approved})

    assert done.status == "IDLE"
    assert done.outputs == [output]
    lines = done.trace.lines()
    assert lines[1] == f"request answered <uuid:1> answer={approved} by=caller"
    assert lines[3] == (
        f"executor invoked legal edge=response->legal request=<uuid:1> input={approved}"
    )


def test_answer_after_a_restore_on_a_fresh_workflow(flows):
    checkpoints = storage()
    paused = flows.run(wf.build_approval(checkpoints), "owls")
    request_id = paused.request().request_id

    done = flows.run(
        wf.build_approval(checkpoints),
        checkpoint_id=paused.last_checkpoint,
        responses={request_id: True},
    )

    assert done.outputs == ["PUBLISHED: Draft about owls [ok legal]"]
    # answered in the same call: the restored request is not reported as pending
    assert done.trace.of_kind("request.pending") == []


def test_restoring_re_raises_only_the_unanswered_requests(flows):
    checkpoints = storage()
    workflow = wf.build_approval(checkpoints, reviewers=2)
    first = flows.run(workflow, "owls")
    legal = first.request()
    second = flows.run(workflow, responses={legal.request_id: True})
    editor = second.request()
    assert editor.executor == "editor"

    # a new process: restore the latest checkpoint on a freshly built workflow
    restored = flows.run(
        wf.build_approval(checkpoints, reviewers=2), checkpoint_id=checkpoints.latest_id()
    )

    assert [p.request_id for p in restored.pending] == [editor.request_id]
    pending_lines = restored.trace.of_kind("request.pending")
    assert [e.get("executor") for e in pending_lines] == ["editor"]  # legal is not asked again
    assert restored.trace.of_kind("executor.invoked") == []  # nothing re-runs
    assert checkpoints.info(checkpoints.latest_id()).pending_request_ids == (editor.request_id,)

    done = flows.run(restored.flow, responses={editor.request_id: True})
    assert done.outputs == ["PUBLISHED: Draft about owls [ok legal] [ok editor]"]


def test_answering_an_unknown_request_is_the_frameworks_error(flows):
    workflow = wf.build_approval()
    flows.run(workflow, "owls")

    with pytest.raises(ValueError, match="unknown request ID: nope"):
        flows.run(workflow, responses={"nope": True})


def test_a_wrong_answer_type_is_refused(flows):
    workflow = wf.build_approval()
    paused = flows.run(workflow, "owls")

    with pytest.raises(Exception, match="bool"):
        flows.run(workflow, responses={paused.request().request_id: {"not": "a bool"}})


def test_request_without_an_id_needs_one_pending(flows):
    run = flows.run(wf.build_triage(), "hi")

    with pytest.raises(LookupError, match="exactly one pending request, there are 0"):
        run.request()
    with pytest.raises(LookupError, match="no pending request 'x'"):
        run.request("x")


def test_responses_must_be_a_mapping(flows):
    with pytest.raises(FlowsUsageError, match=r"responses=\{run.pending\[0\].request_id: True\}"):
        flows.run(wf.build_approval(), responses=[True])
