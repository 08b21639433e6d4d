"""An Agent Framework workflow recorded in production by the flight recorder tests.

Agent Framework's OpenAI clients are a separate package (agent-framework-openai, not
installed here), so the agent's chat client is a small custom ``BaseChatClient`` that
POSTs to an OpenAI-compatible ``/chat/completions`` endpoint with httpx: the tests
point it at the loopback server in tests/crewai/loopback_openai.py.
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
)

INSTRUCTIONS = "Write one line about the topic."


class HttpChatClient(FunctionInvocationLayer, BaseChatClient):
    """Chat completions over HTTP at ``OPENAI_BASE_URL``."""

    model = "gpt-4o-mini"

    def _inner_get_response(
        self, *, messages: Any, stream: bool, options: Any, **kwargs: Any
    ) -> Any:
        async def respond() -> ChatResponse:
            payload = {
                "model": self.model,
                "messages": [
                    {"role": str(getattr(m.role, "value", m.role)), "content": m.text}
                    for m in messages
                ],
            }
            async with httpx.AsyncClient() as client:
                reply = await client.post(
                    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                    json=payload,
                    headers={"authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
                )
            text = reply.json()["choices"][0]["message"]["content"]
            return ChatResponse(messages=[Message("assistant", [Content.from_text(text)])])

        return respond()


class Publish(Executor):
    @handler
    async def publish(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.yield_output(f"published: {response.agent_response.text}")


def build_writer() -> Any:
    writer = Agent(client=HttpChatClient(), name="writer", instructions=INSTRUCTIONS)
    publish = Publish(id="publish")
    return (
        WorkflowBuilder(start_executor=writer, name="writer-flow", output_from=[publish])
        .add_edge(writer, publish)
        .build()
    )
