"""A content approval flow: ask the requester for a brief, draft a post, have an
editor approve it, route on the editor's verdict.

The editor answers in the terminal by default; in production the team plugs
in a Slack provider that pauses the flow until the editor replies (see
``SlackReviewFlow``). The tests in ``test_approval_flow.py`` script both.
"""

from __future__ import annotations

from typing import Any

from crewai import LLM
from crewai.flow.async_feedback.types import HumanFeedbackPending, PendingFeedbackContext
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback
from pydantic import BaseModel

VERDICTS = ["approved", "rejected", "needs_changes"]


class PostState(BaseModel):
    topic: str = ""
    audience: str = ""
    draft: str = ""
    published: str = ""


class ApprovalFlow(Flow[PostState]):
    @start()
    def intake(self) -> str:
        self.state.topic = self.ask("What should the post be about?") or "our roadmap"
        # Requesters often wander off: after five minutes, write for everyone.
        audience = self.ask("Who is it for?", timeout=300)
        self.state.audience = audience or "everyone"
        return self.state.topic

    @listen(intake)
    @human_feedback(
        message="Approve this post?",
        emit=VERDICTS,
        llm="gpt-4o-mini",
        default_outcome="needs_changes",
    )
    def draft_post(self) -> str:
        self.state.draft = str(
            LLM("gpt-4o").call(
                f"Write a short post about {self.state.topic} for {self.state.audience}."
            )
        )
        return self.state.draft

    @listen("approved")
    def publish(self) -> str:
        self.state.published = self.state.draft
        return f"PUBLISHED: {self.state.draft}"

    @listen("rejected")
    def archive(self) -> str:
        return "archived"

    @listen("needs_changes")
    def revise(self) -> str:
        notes = self.last_human_feedback.feedback if self.last_human_feedback else ""
        revised = LLM("gpt-4o").call(f"Revise this post: {self.state.draft}\nEditor notes: {notes}")
        self.state.draft = str(revised)
        return f"REVISED: {self.state.draft}"


class SlackReviews:
    """Posts the draft to the editors' channel and pauses the flow until they reply."""

    def request_feedback(self, context: PendingFeedbackContext, flow: Any) -> str:
        # (the real one posts to Slack here)
        raise HumanFeedbackPending(context=context)


class SlackReviewFlow(Flow[PostState]):
    @start()
    @human_feedback(
        message="Approve this post?",
        emit=VERDICTS,
        llm="gpt-4o-mini",
        provider=SlackReviews(),
    )
    def draft_post(self) -> str:
        self.state.draft = str(LLM("gpt-4o").call(f"Write a short post about {self.state.topic}."))
        return self.state.draft

    @listen("approved")
    def publish(self) -> str:
        return f"PUBLISHED: {self.state.draft}"

    @listen("rejected")
    def archive(self) -> str:
        return "archived"

    @listen("needs_changes")
    def revise(self) -> str:
        return "back to the writer"
