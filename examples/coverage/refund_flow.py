"""A refund desk: a router, a human review with outcomes, and an or_ join."""

from __future__ import annotations

from typing import Literal

from crewai.flow.flow import Flow, listen, or_, router, start
from crewai.flow.human_feedback import human_feedback
from pydantic import BaseModel


class Refund(BaseModel):
    amount: float = 0.0
    flagged: bool = False
    decision: str = ""


class RefundFlow(Flow[Refund]):
    @start()
    def receive(self) -> float:
        return self.state.amount

    @router(receive)
    def check(self) -> Literal["auto_approve", "needs_review", "fraud"]:
        if self.state.flagged:
            return "fraud"
        return "auto_approve" if self.state.amount <= 50 else "needs_review"

    @listen("needs_review")
    @human_feedback(message="Approve this refund?", emit=["approved", "denied"], llm="gpt-4o-mini")
    def review(self) -> str:
        return f"refund of {self.state.amount:.2f}"

    @listen(or_("auto_approve", "approved"))
    def pay(self) -> str:
        self.state.decision = "paid"
        return "paid"

    @listen("denied")
    def deny(self) -> str:
        self.state.decision = "denied"
        return "denied"

    @listen("fraud")
    def block(self) -> str:
        self.state.decision = "blocked"
        return "blocked"

    @listen(or_(pay, deny))
    def tell_customer(self) -> str:
        return f"Your refund was {self.state.decision}."
