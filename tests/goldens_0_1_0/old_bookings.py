"""Tool approval with two concurrent agents (the shape of Agent Framework's
``concurrent_builder_tool_approval`` sample).

    dispatch -> flights (agent) ─┐
             -> hotels  (agent) ─┴-> summary

Both agents run in the same superstep. Each books through a tool declared with
``approval_mode="always_require"``: the agent's model asks to call it, Agent
Framework turns the call into a ``function_approval_request`` (a ``Content``)
that the ``AgentExecutor`` raises with ``request_info``; the run pauses until a
human approves (``request.to_function_approval_response(True)``), then the
tool runs and the agent answers. The request id is the tool call's occurrence
id, which the fake model numbers per run (``occ-call-<n>-<k>``) and the trace
normalizes (``occ-<call:N>``): the two agents' requests read the same under
every seed.
"""

from __future__ import annotations

from typing import Never

from agent_framework import (
    AgentExecutor,
    AgentExecutorRequest,
    AgentExecutorResponse,
    Executor,
    Message,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    tool,
)

BOOKED: list[str] = []  # what the tools did (a test resets it)


@tool(approval_mode="always_require")
def book_flight(city: str) -> str:
    """Book a flight to the city."""
    BOOKED.append(f"flight:{city}")
    return f"flight to {city} booked"


@tool(approval_mode="always_require")
def book_hotel(city: str) -> str:
    """Book a hotel in the city."""
    BOOKED.append(f"hotel:{city}")
    return f"hotel in {city} booked"


class Dispatch(Executor):
    @handler
    async def dispatch(self, city: str, ctx: WorkflowContext[AgentExecutorRequest]) -> None:
        ask = Message("user", [f"Book the trip to {city}."])
        await ctx.send_message(AgentExecutorRequest(messages=[ask], should_respond=True))


class Summary(Executor):
    @handler
    async def summarize(
        self, replies: list[AgentExecutorResponse], ctx: WorkflowContext[Never, str]
    ) -> None:
        texts = sorted(f"{r.executor_id}: {r.agent_response.text}" for r in replies)
        await ctx.yield_output(" | ".join(texts))


def build_workflow(client: object) -> Workflow:
    flights = AgentExecutor(
        client.as_agent(name="flights", instructions="Book flights.", tools=[book_flight]),  # type: ignore[attr-defined]
        id="flights",
    )
    hotels = AgentExecutor(
        client.as_agent(name="hotels", instructions="Book hotels.", tools=[book_hotel]),  # type: ignore[attr-defined]
        id="hotels",
    )
    dispatch, summary = Dispatch(id="dispatch"), Summary(id="summary")
    return (
        WorkflowBuilder(start_executor=dispatch, name="bookings", output_from=[summary])
        .add_fan_out_edges(dispatch, [flights, hotels])
        .add_fan_in_edges([flights, hotels], summary)
        .build()
    )
