"""``human`` answers request_info: in the run, after a restore, with a strict ledger."""

from __future__ import annotations

import af_workflows as wf
import pytest

from pytest_flows._internal.fakes.script import ScriptReplyError, UnscriptedRequest
from pytest_flows.agent_framework import FlowsCheckpointStorage, requests


def storage() -> FlowsCheckpointStorage:
    return FlowsCheckpointStorage(allowed_types=[wf.ReviewRequest])


def test_the_human_answers_within_the_run(flows, human):
    requests(human).on(request=wf.ReviewRequest).respond(True)

    run = flows.run(wf.build_approval(), "owls")

    assert run.status == "IDLE"
    assert run.outputs == ["PUBLISHED: Draft about owls [ok legal]"]
    (asked,) = human.requests
    assert asked.caller["method"] == "legal"
    assert asked.caller["request"] == "ReviewRequest"
    assert asked.reply is True
    lines = run.trace.lines()
    assert "workflow resumed approval responses=[<uuid:1>]" in lines
    assert "request answered <uuid:1> answer=True by=human" in lines


def test_answers_match_by_data_pattern_and_fields(flows, human):
    requests(human).on(data={"reviewer": "editor"}).respond(False)
    requests(human).on(data=r"reviewer='legal'").respond(True)

    run = flows.run(wf.build_approval(reviewers=2), "owls")

    assert run.outputs == ["REJECTED by editor: Draft about owls [ok legal]"]
    assert [r.caller["method"] for r in human.requests] == ["legal", "editor"]


def test_a_text_answer_on_the_human_needs_a_str_request(flows, human):
    human.answer("sure")

    with pytest.raises(ScriptReplyError, match=r"expects bool, but human\.answer"):
        flows.run(wf.build_approval(), "owls")


def test_an_unscripted_request_fails_with_the_line_that_answers_it(flows, human):
    with pytest.raises(UnscriptedRequest) as raised:
        flows.run(wf.build_approval(), "owls")

    message = str(raised.value)
    assert "unscripted request_info #1 from executor 'legal' of workflow 'approval'" in message
    assert "expects: bool" in message
    assert 'requests(human).on(executor="legal", request=ReviewRequest).respond(True)' in message


def test_pause_leaves_the_request_pending(flows, human):
    requests(human).on(executor="legal").pause()

    run = flows.run(wf.build_approval(), "owls")

    assert run.status == "IDLE_WITH_PENDING_REQUESTS"
    assert run.request().executor == "legal"


def test_the_human_answers_after_a_restore_and_is_not_asked_twice(flows, human):
    checkpoints = storage()
    requests(human).on(executor="legal").respond(True)
    requests(human).on(executor="editor").pause()
    paused = flows.run(wf.build_approval(checkpoints, reviewers=2), "owls")
    assert paused.request().executor == "editor"
    assert [r.caller["method"] for r in human.requests] == ["legal", "editor"]

    # later, in a new process: restore the pause and let the human decide
    requests(human).on(executor="editor").respond(True)
    done = flows.run(
        wf.build_approval(checkpoints, reviewers=2), checkpoint_id=checkpoints.latest_id()
    )

    assert done.outputs == ["PUBLISHED: Draft about owls [ok legal] [ok editor]"]
    # legal was answered before the checkpoint: only the editor is asked again
    assert [r.caller["method"] for r in human.requests] == ["legal", "editor", "editor"]
    # restored and answered in one call (run(checkpoint_id=..., responses=...))
    (answered,) = done.trace.of_kind("request.answered")
    assert answered.name == "<uuid:2>" and answered.get("by") == "human"
    assert done.trace.lines()[:3] == [
        "workflow started approval checkpoint=<uuid:1>",
        "workflow restored <uuid:1> superstep=4",
        "request answered <uuid:2> answer=True by=human",
    ]


def test_caller_responses_and_human_answers_mix(flows, human):
    checkpoints = storage()
    requests(human).on(executor="editor").respond(True)
    workflow = wf.build_approval(checkpoints, reviewers=2)
    requests(human).on(executor="legal").pause()
    paused = flows.run(workflow, "owls")

    done = flows.run(workflow, responses={paused.request().request_id: True})

    assert done.outputs == ["PUBLISHED: Draft about owls [ok legal] [ok editor]"]
    answered = [(e.get("by")) for e in done.trace.of_kind("request.answered")]
    assert answered == ["caller", "human"]


def test_a_callable_answer_sees_the_request_data_and_takes_virtual_time(flows, human):
    requests(human).respond(lambda request: "legal" in request.reviewer, after=3600)

    run = flows.run(wf.build_approval(), "owls")

    assert run.outputs == ["PUBLISHED: Draft about owls [ok legal]"]
    assert flows.clock.monotonic() == pytest.approx(3600)
