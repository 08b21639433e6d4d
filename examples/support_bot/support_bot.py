"""A support chat bot: the LLM router sends each message to a handler, or the
built-in ``converse`` route answers from the conversation history.

Sessions persist (``@persist``), so a web handler can answer every message with
a fresh ``SupportBot()`` and the session id - as the tests do with ``resume()``.
"""

from __future__ import annotations

from crewai import LLM
from crewai.flow.conversational import ConversationConfig, ConversationState, RouterConfig
from crewai.flow.flow import Flow, listen
from crewai.flow.persistence import persist

ORDERS = {"A-1001": "shipped on Monday", "A-1002": "waiting for stock"}


class SupportState(ConversationState):
    escalated: bool = False


@persist()
@ConversationConfig(
    llm="gpt-4o-mini",
    system_prompt="You are Pip, the support assistant of a small bike shop.",
    router=RouterConfig(fallback_intent="ESCALATE"),
)
class SupportBot(Flow[SupportState]):
    @listen("ORDER_STATUS")
    def handle_order_status(self) -> str:
        """Where an order is: shipping, delivery, tracking."""
        number = self.ask("What is your order number?", timeout=120)
        if number is None:
            return "No problem - send me the order number whenever you have it."
        status = ORDERS.get(number.strip().upper())
        if status is None:
            return f"I can't find order {number}. Could you check the number?"
        return f"Order {number.strip().upper()} is {status}."

    @listen("REPAIR")
    def handle_repair(self) -> str:
        """Booking or asking about a bike repair."""
        slot = LLM("gpt-4o-mini").call(
            f"Suggest one repair slot next week for: {self.state.current_user_message}"
        )
        return f"I can book you in {slot}."

    @listen("ESCALATE")
    def handle_escalate(self) -> str:
        """Anything the bot cannot handle: hand over to a person."""
        self.state.escalated = True
        return "Let me get a colleague for you."
