"""An Agent Framework workflow recorded in production by the flight recorder tests.

Agent Framework's OpenAI clients are a separate package (agent-framework-openai, not
installed here), so the agent's chat client is a small custom ``BaseChatClient`` that
POSTs to an OpenAI-compatible ``/chat/completions`` endpoint with httpx: the tests
point it at the loopback server in tests/crewai/loopback_openai.py.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
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
    response_handler,
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

        if stream:
            return self._stream(respond())
        return respond()

    def _stream(self, answer: Any) -> Any:
        from agent_framework import ChatResponseUpdate, ResponseStream

        async def updates() -> Any:
            response = await answer
            for word in response.text.split(" "):
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(word + " ")])

        return ResponseStream(updates(), finalizer=ChatResponse.from_updates)


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


@dataclass
class Approval:
    """What the reviewer is asked (``request_info``); the answer is a :class:`Verdict`."""

    draft: str


@dataclass
class Verdict:
    approved: bool
    note: str = ""


class Review(Executor):
    """Asks a human to approve the agent's line (``request_info`` / ``@response_handler``)."""

    @handler
    async def review(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.request_info(Approval(draft=response.agent_response.text), Verdict)

    @response_handler
    async def on_verdict(
        self, request: Approval, verdict: Verdict, ctx: WorkflowContext[Never, str]
    ) -> None:
        word = "approved" if verdict.approved else "rejected"
        await ctx.yield_output(f"{word} ({verdict.note}): {request.draft}")


def build_review() -> Any:
    writer = Agent(client=HttpChatClient(), name="writer", instructions=INSTRUCTIONS)
    review = Review(id="review")
    return (
        WorkflowBuilder(start_executor=writer, name="review-flow", output_from=[review])
        .add_edge(writer, review)
        .build()
    )


def build_titled(title: str) -> Any:
    """A workflow built by a function that needs an argument: the recorder cannot call
    it again, so the record names no factory (unless record_flows(factories=...)).
    (Not shared with build_writer: the recorder names the function that calls build().)"""
    writer = Agent(client=HttpChatClient(), name="writer", instructions=INSTRUCTIONS)
    publish = Publish(id="publish")
    return (
        WorkflowBuilder(start_executor=writer, name=title, output_from=[publish])
        .add_edge(writer, publish)
        .build()
    )
