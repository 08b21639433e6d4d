"""An Agent Framework workflow a service runs: a clerk agent answers an order question
(calling the ``lookup_order`` tool), then an executor publishes the answer.

Agent Framework's OpenAI clients are a separate package (agent-framework-openai), so
the agent's chat client here is a small ``BaseChatClient`` that POSTs to an
OpenAI-compatible ``/chat/completions`` endpoint at ``OPENAI_BASE_URL`` with httpx.
"""

from __future__ import annotations

import os
from typing import Any, Never

import httpx
from agent_framework import (
    Agent,
    AgentExecutorResponse,
    BaseChatClient,
    ChatResponse,
    Content,
    Executor,
    FunctionInvocationLayer,
    Message,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    tool,
)

INSTRUCTIONS = "You answer questions about orders. Look the order up first."


class HttpChatClient(FunctionInvocationLayer, BaseChatClient):
    """Chat completions over HTTP at ``OPENAI_BASE_URL`` (not streamed)."""

    model = "gpt-4o-mini"

    def _inner_get_response(
        self, *, messages: Any, stream: bool, options: Any, **kwargs: Any
    ) -> Any:
        async def respond() -> ChatResponse:
            payload: dict[str, Any] = {"model": self.model, "messages": _wire(messages)}
            tools = [t.to_json_schema_spec() for t in (options or {}).get("tools") or ()]
            if tools:
                payload["tools"] = tools
            async with httpx.AsyncClient() as client:
                reply = await client.post(
                    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                    json=payload,
                    headers={"authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
                )
            message = reply.json()["choices"][0]["message"]
            contents = [
                Content.from_function_call(
                    call_id=call["id"],
                    name=call["function"]["name"],
                    arguments=call["function"]["arguments"],
                )
                for call in message.get("tool_calls") or ()
            ] or [Content.from_text(message["content"])]
            return ChatResponse(messages=[Message("assistant", contents)])

        return respond()


def _wire(messages: Any) -> list[dict[str, Any]]:
    """Messages as the chat-completions API takes them (a tool's result as its text)."""
    wire = []
    for m in messages:
        role = str(getattr(m.role, "value", m.role))
        results = [c for c in m.contents if c.type == "function_result"]
        content = m.text or " ".join(str(c.result) for c in results)
        wire.append({"role": role, "content": content})
    return wire


def order_system(order: str) -> str:
    """The real order system (a database, a service): production asks it."""
    return "shipped" if order.endswith("7") else "delayed: the parcel was lost"


@tool
def lookup_order(order: str) -> str:
    """Look an order up by its number."""
    return f"order {order}: {order_system(order)}"


class Publish(Executor):
    @handler
    async def publish(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        text = response.agent_response.text
        if "lost" in text:
            # The production incident: a reply this step did not expect.
            raise RuntimeError(f"cannot publish a lost-parcel answer: {text!r}")
        await ctx.yield_output(f"published: {text}")


def build_workflow() -> Any:
    """The workflow; the record names this function, so a test can build it again."""
    clerk = Agent(
        client=HttpChatClient(), name="clerk", instructions=INSTRUCTIONS, tools=[lookup_order]
    )
    publish = Publish(id="publish")
    return (
        WorkflowBuilder(start_executor=clerk, name="order-desk", output_from=[publish])
        .add_edge(clerk, publish)
        .build()
    )
