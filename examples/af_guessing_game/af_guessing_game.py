"""Agent Framework's own human-in-the-loop guessing game, as a module a test can import.

Follows ``python/samples/03-workflows/human-in-the-loop/guessing_game_with_human_input.py``
in microsoft/agent-framework: an agent guesses a number (structured output,
``response_format=GuessOutput``), a ``TurnManager`` asks a human through
``request_info`` whether the number is higher, lower or correct, and the loop
goes on until the human says "correct". Two changes, both for testing:

* the sample builds the agent and the graph inside ``main()`` with a hosted
  client (``AzureOpenAIResponsesClient(...).as_agent(...)``); here
  ``build_workflow(client)`` is a factory that takes the chat client, so a test
  passes ``FlowsChatClient()`` and production passes the hosted one;
* the workflow is named ("guessing_game"), so its checkpoints and trace carry
  one name in every process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_framework import (
    AgentExecutorRequest,
    AgentExecutorResponse,
    Executor,
    Message,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from pydantic import BaseModel


@dataclass
class HumanFeedbackRequest:
    """Request sent to the human for feedback on the agent's guess."""

    prompt: str


class GuessOutput(BaseModel):
    """Structured output from the agent, enforced via response_format."""

    guess: int


class TurnManager(Executor):
    """Coordinates turns between the agent and the human."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id or "turn_manager")

    @handler
    async def start(self, _: str, ctx: WorkflowContext[AgentExecutorRequest]) -> None:
        user = Message("user", ["Start by making your first guess."])
        await ctx.send_message(AgentExecutorRequest(messages=[user], should_respond=True))

    @handler
    async def on_agent_response(self, result: AgentExecutorResponse, ctx: WorkflowContext) -> None:
        last_guess = result.agent_response.value.guess
        prompt = (
            f"The agent guessed: {last_guess}. "
            "Type one of: higher (your number is higher than this guess), "
            "lower (your number is lower than this guess), correct, or exit."
        )
        await ctx.request_info(request_data=HumanFeedbackRequest(prompt=prompt), response_type=str)

    @response_handler
    async def on_human_feedback(
        self,
        original_request: HumanFeedbackRequest,
        feedback: str,
        ctx: WorkflowContext[AgentExecutorRequest, str],
    ) -> None:
        reply = feedback.strip().lower()
        if reply == "correct":
            await ctx.yield_output("Guessed correctly!")
            return
        last_guess = original_request.prompt.split(": ")[1].split(".")[0]
        feedback_text = (
            f"Feedback: {reply}. Your last guess was {last_guess}. "
            "Use this feedback to adjust and make your next guess (1-10)."
        )
        user_msg = Message("user", [feedback_text])
        await ctx.send_message(AgentExecutorRequest(messages=[user_msg], should_respond=True))


INSTRUCTIONS = (
    "You guess a number between 1 and 10. "
    "If the user says 'higher' or 'lower', adjust your next guess. "
    'You MUST return ONLY a JSON object exactly matching this schema: {"guess": <integer 1..10>}. '
    "No explanations or additional text."
)


def build_workflow(client: Any) -> Workflow:
    """The sample's loop, TurnManager <-> agent, around the chat client it is given."""
    guessing_agent = client.as_agent(
        name="GuessingAgent",
        instructions=INSTRUCTIONS,
        default_options={"response_format": GuessOutput},
    )
    turn_manager = TurnManager(id="turn_manager")
    return (
        WorkflowBuilder(start_executor=turn_manager, name="guessing_game")
        .add_edge(turn_manager, guessing_agent)
        .add_edge(guessing_agent, turn_manager)
        .build()
    )
