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
    InMemoryCheckpointStorage,
    Message,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
    tool,
)

INSTRUCTIONS = "Write one line about the topic."


class HttpChatClient(FunctionInvocationLayer, BaseChatClient):
    """Chat completions over HTTP at ``OPENAI_BASE_URL``."""

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


def _wire(messages: Any) -> list[dict[str, Any]]:
    """Messages as the chat-completions API takes them (a tool's result as its text)."""
    wire = []
    for m in messages:
        role = str(getattr(m.role, "value", m.role))
        results = [c for c in m.contents if c.type == "function_result"]
        content = m.text or " ".join(str(c.result) for c in results)
        wire.append({"role": role, "content": content})
    return wire


#: What the order system says (a test changes it: the replay must not ask it).
ORDER_STATUS = "shipped"


@tool
def lookup_order(query: str) -> str:
    """Look up an order."""
    return f"order {query}: {ORDER_STATUS}"


@tool
def find_order(query: str) -> str:
    """Find an order (today's name of the lookup, in a test)."""
    return f"order {query}: {ORDER_STATUS}"


#: The clerk's tools (a test renames its lookup).
CLERK_TOOLS: list[Any] = [lookup_order]


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


def build_clerk() -> Any:
    """An agent with a tool: its model asks for ``lookup_order``, the agent runs it."""
    clerk = Agent(
        client=HttpChatClient(), name="clerk", instructions=INSTRUCTIONS, tools=list(CLERK_TOOLS)
    )
    publish = Publish(id="publish")
    return (
        WorkflowBuilder(start_executor=clerk, name="clerk-flow", output_from=[publish])
        .add_edge(clerk, publish)
        .build()
    )


#: How many words of the line today's code keeps in the workflow state (a test changes it).
KEEP_WORDS = 2


class Tally(Executor):
    """Keeps the start of the agent's line in the workflow state (checkpointed)."""

    @handler
    async def tally(
        self, response: AgentExecutorResponse, ctx: WorkflowContext[Never, str]
    ) -> None:
        words = response.agent_response.text.split()
        ctx.set_state("kept", " ".join(words[:KEEP_WORDS]))
        ctx.set_state("api_key", os.environ.get("OPENAI_API_KEY", ""))  # a secret in state
        await ctx.yield_output(f"kept {len(words)} words")


def build_checkpointed() -> Any:
    """A workflow that saves a checkpoint after each superstep (production would use a
    FileCheckpointStorage; the tests keep it in memory)."""
    writer = Agent(client=HttpChatClient(), name="writer", instructions=INSTRUCTIONS)
    tally = Tally(id="tally")
    return (
        WorkflowBuilder(
            start_executor=writer,
            name="checkpointed-flow",
            output_from=[tally],
            checkpoint_storage=InMemoryCheckpointStorage(),
        )
        .add_edge(writer, tally)
        .build()
    )
