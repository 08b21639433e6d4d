"""A purchase-approval flow: it checkpoints each step and pauses for a manager."""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback
from crewai.flow.persistence import persist
from crewai.state.checkpoint_config import CheckpointConfig
from pydantic import BaseModel


class PurchaseState(BaseModel):
    item: str = ""
    amount: int = 0
    status: str = "new"


@persist()
class ApprovalFlow(Flow[PurchaseState]):
    @start()
    def price(self) -> int:
        self.state.status = "priced"
        return self.state.amount

    @listen(price)
    @human_feedback(
        message="Approve this purchase?",
        emit=["approved", "rejected"],
        llm="gpt-4o-mini",
        default_outcome="rejected",
    )
    def ask_manager(self) -> str:
        return f"{self.state.item} for {self.state.amount}"

    @listen("approved")
    def order(self) -> str:
        self.state.status = "ordered"
        return f"ordered {self.state.item}"

    @listen("rejected")
    def decline(self) -> str:
        self.state.status = "declined"
        return f"declined {self.state.item}"


def checkpointed() -> CheckpointConfig:
    """A checkpoint after every method, as the service configures it."""
    return CheckpointConfig(on_events=["method_execution_finished"])
