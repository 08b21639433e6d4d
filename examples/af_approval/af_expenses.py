"""An expense approval workflow with a human in the loop.

    claim -> check -> (manager approval if over the limit) -> finance approval -> pay | reject

``Approver`` asks a person with ``ctx.request_info(ApprovalRequest, Decision)``
and continues in its ``@response_handler`` once they answer; the workflow
pauses (``IDLE_WITH_PENDING_REQUESTS``) until then, possibly across processes
(restore the checkpoint, answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Never

from agent_framework import (
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)

#: Claims above this need a manager before finance.
MANAGER_LIMIT = 500

ALLOWED_CHECKPOINT_TYPES = [
    "af_expenses:Claim",
    "af_expenses:ApprovalRequest",
    "af_expenses:Decision",
]


@dataclass
class Claim:
    employee: str
    amount: int
    purpose: str


@dataclass
class ApprovalRequest:
    role: str
    claim: Claim


@dataclass
class Decision:
    approved: bool
    note: str = ""


class Check(Executor):
    @handler
    async def check(self, claim: Claim, ctx: WorkflowContext[Claim, str]) -> None:
        if claim.amount <= 0:
            await ctx.yield_output(f"INVALID: {claim.employee} claimed {claim.amount}")
            return
        route = "manager" if claim.amount > MANAGER_LIMIT else "finance"
        await ctx.send_message(claim, target_id=route)


class Approver(Executor):
    """Asks ``role`` to approve; passes approved claims to ``next``."""

    def __init__(self, role: str) -> None:
        super().__init__(id=role)
        self.role = role

    @handler
    async def ask(self, claim: Claim, ctx: WorkflowContext[Claim, str]) -> None:
        await ctx.request_info(ApprovalRequest(self.role, claim), Decision)

    @response_handler
    async def decided(
        self, request: ApprovalRequest, decision: Decision, ctx: WorkflowContext[Claim, str]
    ) -> None:
        approvals = ctx.get_state("approvals", [])
        ctx.set_state("approvals", [*approvals, f"{self.role}:{decision.approved}"])
        if decision.approved:
            await ctx.send_message(request.claim)
        else:
            why = f" ({decision.note})" if decision.note else ""
            await ctx.yield_output(f"REJECTED by {self.role}{why}: {request.claim.purpose}")


class Pay(Executor):
    @handler
    async def pay(self, claim: Claim, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"PAID {claim.amount} to {claim.employee}: {claim.purpose}")


def build_workflow(checkpoint_storage: object = None) -> Workflow:
    check = Check(id="check")
    manager, finance = Approver("manager"), Approver("finance")
    pay = Pay(id="pay")
    return (
        WorkflowBuilder(
            start_executor=check, name="expenses", checkpoint_storage=checkpoint_storage
        )
        .add_edge(check, manager)
        .add_edge(check, finance)
        .add_edge(manager, finance)
        .add_edge(finance, pay)
        .build()
    )
