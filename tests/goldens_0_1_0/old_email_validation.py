"""A sub-workflow whose requests the parent intercepts (the shape of Agent
Framework's ``sub_workflow_request_interception`` sample).

    parent:  coordinator -> validation (WorkflowExecutor) -> coordinator
    inner:   format_check -> domain_check

The inner workflow checks an address's format, then asks whether its domain is
approved with ``ctx.request_info(DomainCheck, bool)``. The request leaves the
sub-workflow as a ``SubWorkflowRequestMessage`` that the parent's coordinator
intercepts: a domain in its cache is answered at once
(``request.create_response(...)``), any other is asked of a person with the
coordinator's own ``request_info``. Each ``DomainCheck`` carries a fresh
``uuid4`` id, which the trace normalizes (``<uuid:N>``), whole even where a
long value is cut.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Never

from agent_framework import (
    Executor,
    SubWorkflowRequestMessage,
    SubWorkflowResponseMessage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutor,
    handler,
    response_handler,
)

ALLOWED_CHECKPOINT_TYPES = [
    "old_email_validation:DomainCheck",
    "old_email_validation:Verdict",
]


@dataclass
class DomainCheck:
    domain: str
    email: str
    id: str = field(default_factory=lambda: str(uuid.uuid4()))


@dataclass
class Verdict:
    email: str
    valid: bool
    reason: str


class FormatCheck(Executor):
    @handler
    async def check(self, email: str, ctx: WorkflowContext[DomainCheck, Verdict]) -> None:
        if "@" not in email:
            await ctx.yield_output(Verdict(email, False, "no @"))
            return
        await ctx.send_message(DomainCheck(domain=email.split("@")[1], email=email))


class DomainCheckExecutor(Executor):
    @handler
    async def ask(self, check: DomainCheck, ctx: WorkflowContext[Never, Verdict]) -> None:
        await ctx.request_info(check, bool)

    @response_handler
    async def answered(
        self, check: DomainCheck, approved: bool, ctx: WorkflowContext[Never, Verdict]
    ) -> None:
        reason = "domain approved" if approved else "domain not approved"
        await ctx.yield_output(Verdict(check.email, approved, reason))


def build_validation() -> Workflow:
    format_check = FormatCheck(id="format_check")
    domain_check = DomainCheckExecutor(id="domain_check")
    return (
        WorkflowBuilder(start_executor=format_check, name="email_validation")
        .add_edge(format_check, domain_check)
        .build()
    )


class Coordinator(Executor):
    """Sends each address to the sub-workflow; answers its domain checks from a cache
    or asks a person; collects the verdicts."""

    def __init__(self, cache: dict[str, bool]) -> None:
        super().__init__(id="coordinator")
        self.cache = dict(cache)
        self.waiting: dict[str, SubWorkflowRequestMessage] = {}

    @handler
    async def start(self, emails: list[str], ctx: WorkflowContext[str]) -> None:
        for email in emails:
            await ctx.send_message(email)

    @handler
    async def intercept(
        self,
        request: SubWorkflowRequestMessage,
        ctx: WorkflowContext[SubWorkflowResponseMessage],
    ) -> None:
        check = request.source_event.data
        if not isinstance(check, DomainCheck):
            raise TypeError(f"unexpected sub-workflow request {check!r}")
        if check.domain in self.cache:
            await ctx.send_message(request.create_response(self.cache[check.domain]))
        else:
            self.waiting[check.id] = request
            await ctx.request_info(check, bool)

    @response_handler
    async def answered(
        self,
        check: DomainCheck,
        approved: bool,
        ctx: WorkflowContext[SubWorkflowResponseMessage],
    ) -> None:
        await ctx.send_message(self.waiting.pop(check.id).create_response(approved))

    @handler
    async def collect(self, verdict: Verdict, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{verdict.email}: {'valid' if verdict.valid else 'invalid'}")


def build_workflow(cache: dict[str, bool] | None = None) -> Workflow:
    coordinator = Coordinator(cache if cache is not None else {"example.com": True})
    validation = WorkflowExecutor(build_validation(), id="validation")
    return (
        WorkflowBuilder(start_executor=coordinator, name="email_intake")
        .add_edge(coordinator, validation)
        .add_edge(validation, coordinator)
        .build()
    )
