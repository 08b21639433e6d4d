"""A support workflow with two agents: a classifier (structured output) routes the
message; an order agent looks orders up with a tool before it answers.

    message -> classifier -> order_agent (tool: order_status) -> reply
                          -> human_handoff

In production ``build_workflow(OpenAIChatClient(...))``; in tests the client is
answered by ``fake_llm`` (any chat client is, while the fixture is requested).
"""

from __future__ import annotations

from typing import Any, Literal, Never

from agent_framework import (
    Agent,
    AgentExecutorRequest,
    AgentExecutorResponse,
    Case,
    Default,
    Executor,
    Message,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    tool,
)
from pydantic import BaseModel

ORDERS = {"A-17": "shipped on Monday", "B-02": "waiting for stock"}
LOOKUPS: list[str] = []


@tool
def order_status(order_id: str) -> str:
    """Where an order is."""
    LOOKUPS.append(order_id)
    return ORDERS.get(order_id, "no such order")


class Triage(BaseModel):
    category: Literal["order", "other"]
    order_id: str | None = None


def is_order(response: AgentExecutorResponse) -> bool:
    triage = response.agent_response.value
    return isinstance(triage, Triage) and triage.category == "order"


class ToOrderAgent(Executor):
    """Hands the customer's message (and the order id the classifier found) on."""

    @handler
    async def forward(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[AgentExecutorRequest]
    ) -> None:
        triage = response.agent_response.value
        assert isinstance(triage, Triage)
        question = response.full_conversation[0].text
        prompt = f"{question}\n(order id: {triage.order_id})"
        await ctx.send_message(
            AgentExecutorRequest(messages=[Message("user", [prompt])], should_respond=True)
        )


class Reply(Executor):
    @handler
    async def reply(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.yield_output(response.agent_response.text)


class Handoff(Executor):
    @handler
    async def handoff(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.yield_output("A person will get back to you.")


def build_workflow(client: Any) -> Workflow:
    classifier = Agent(
        client=client,
        name="classifier",
        instructions="Classify the customer's message.",
        default_options={"response_format": Triage},
    )
    order_agent = Agent(
        client=client,
        name="orders",
        instructions="Answer questions about orders. Look them up first.",
        tools=[order_status],
    )
    forward = ToOrderAgent(id="forward")
    reply, handoff = Reply(id="reply"), Handoff(id="handoff")
    return (
        WorkflowBuilder(start_executor=classifier, name="support", output_from=[reply, handoff])
        .add_switch_case_edge_group(
            classifier,
            [Case(condition=is_order, target=forward), Default(target=handoff)],
        )
        .add_edge(forward, order_agent)
        .add_edge(order_agent, reply)
        .build()
    )
