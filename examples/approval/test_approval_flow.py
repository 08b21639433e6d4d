"""The tests a user writes for the approval flow: every verdict, the LLM that
reads free-text feedback, a requester who never answers, a pause over Slack."""

from __future__ import annotations

import pytest
from approval_flow import VERDICTS, ApprovalFlow, SlackReviewFlow
from crewai.flow.async_feedback.types import HumanFeedbackPending

ROUTES = {
    "approved": "PUBLISHED: Our Q3 roadmap, in three bullets.",
    "rejected": "archived",
    "needs_changes": "REVISED: Shorter roadmap post.",
}


@pytest.fixture
def requester(human):
    human.on(message="about").answer("the Q3 roadmap")
    human.on(message="for").answer("customers")
    return human


@pytest.mark.parametrize("verdict", VERDICTS)
def test_every_verdict_takes_its_route(flows, requester, fake_llm, verdict):
    requester.on(method="draft_post").answer("my notes", outcome=verdict)
    fake_llm.on(method="draft_post").reply("Our Q3 roadmap, in three bullets.")
    fake_llm.on(method="revise").reply("Shorter roadmap post.", optional=True)

    run = flows.run(ApprovalFlow)

    assert run.output == ROUTES[verdict]
    assert run.flow.last_human_feedback.outcome == verdict


def test_the_writer_is_briefed_with_the_requesters_answers(flows, requester, fake_llm):
    requester.on(method="draft_post").answer(outcome="approved")
    fake_llm.on(method="draft_post").reply("Post.")

    flows.run(ApprovalFlow)

    assert fake_llm.calls[0].prompt == "Write a short post about the Q3 roadmap for customers."


def test_free_text_feedback_is_read_by_the_llm(flows, requester, fake_llm):
    requester.on(method="draft_post").answer("Too long, cut it in half")
    fake_llm.on(method="draft_post", purpose="call").reply("Long post.")
    fake_llm.on(purpose="feedback").reply({"outcome": "needs_changes"})
    fake_llm.on(method="revise").reply("Short post.")

    run = flows.run(ApprovalFlow)

    assert run.output == "REVISED: Short post."
    classify = next(c for c in fake_llm.calls if c.purpose == "feedback")
    assert classify.data["feedback"] == "Too long, cut it in half"
    assert "Editor notes: Too long, cut it in half" in fake_llm.calls[-1].prompt


def test_no_feedback_means_changes_are_needed(flows, requester, fake_llm):
    requester.on(method="draft_post").answer("")  # the editor just pressed Enter
    fake_llm.on(method="draft_post").reply("Post.")
    fake_llm.on(method="revise").reply("Post, revised.")

    assert flows.run(ApprovalFlow).output == "REVISED: Post, revised."


def test_a_requester_who_never_says_who_it_is_for(flows, human, fake_llm):
    human.on(message="about").answer("pricing")
    human.on(message="for").timeout()
    human.on(method="draft_post").answer(outcome="approved")
    fake_llm.reply("Pricing post.")

    run = flows.run(ApprovalFlow)

    assert run.state.audience == "everyone"
    assert flows.clock.monotonic() == 300  # the five minutes passed, virtually


def test_review_over_slack_pauses_until_the_editor_replies(flows, human, fake_llm):
    human.on(method="draft_post").pause()
    fake_llm.on(method="draft_post").reply("Slack post.")

    paused = flows.run(SlackReviewFlow, inputs={"topic": "launch"})
    assert isinstance(paused.output, HumanFeedbackPending)
    assert paused.output.context.method_output == "Slack post."

    # Later, in the webhook handler: restore the flow and pass the editor's reply on.
    done = human.resume(paused, "ship it", outcome="approved")

    assert done.output == "PUBLISHED: Slack post."
    assert done.state.topic == "launch"


def test_the_trace(flows, requester, fake_llm, snapshot):
    requester.on(method="draft_post").answer("lgtm", outcome="approved")
    fake_llm.reply("Post.")

    assert flows.run(ApprovalFlow).trace.render() == snapshot
