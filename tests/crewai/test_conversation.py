"""The conversation fixture on real conversational flows (seed 002)."""

from __future__ import annotations

from typing import Any

import pytest
from crewai_versions import needs_conversational_flows

pytest.importorskip("crewai.flow.conversational", reason=needs_conversational_flows)

from crewai.flow.conversational import ConversationConfig, ConversationState, RouterConfig
from crewai.flow.flow import Flow, listen
from crewai.flow.persistence import persist

from pytest_flows._internal.fakes.replies import ProviderError


@ConversationConfig(defer_trace_finalization=True)
class QuickStartSupport(Flow[ConversationState]):
    """The seed's quick start: routing in code."""

    def route_turn(self, context: dict[str, Any]) -> str:
        message = (self.state.current_user_message or "").lower()
        if "order" in message:
            return "order"
        if "goodbye" in message:
            return "goodbye"
        return "help"

    @listen("order")
    def handle_order(self) -> str:
        reply = "Your order is on its way."
        self.append_assistant_message(reply)
        return reply

    @listen("help")
    def handle_help(self) -> str:
        reply = "How can I help?"
        self.append_assistant_message(reply)
        return reply

    @listen("goodbye")
    def handle_goodbye(self) -> str:
        reply = "Goodbye!"
        self.append_assistant_message(reply)
        return reply


@persist()
@ConversationConfig(llm="gpt-4o-mini")
class ShopAssistant(Flow[ConversationState]):
    """Routing by the LLM router; sessions persist."""

    @listen("ORDER")
    def handle_order(self) -> str:
        """Questions about an existing order: status, delivery, tracking."""
        return "Order 42 ships today."

    @listen("REFUND")
    def handle_refund(self) -> str:
        """The customer wants their money back."""
        number = self.ask("Which order number?")
        return f"Refund for order {number} started."


@ConversationConfig(
    llm="gpt-4o-mini",
    router=RouterConfig(
        route_descriptions={"ORDER": "Anything about orders."},
        fallback_intent="HUMAN",
        default_intent="converse",
    ),
)
class StrictRouter(Flow[ConversationState]):
    @listen("ORDER")
    def handle_order(self) -> str:
        """Questions about an existing order."""
        return "Order found."

    @listen("HUMAN")
    def handle_human(self) -> str:
        """Escalate to a person."""
        return "Connecting you to a person."


@ConversationConfig(default_intents=["ORDER", "OTHER"], intent_llm="gpt-4o-mini", llm="gpt-4o")
class Classified(Flow[ConversationState]):
    @listen("ORDER")
    def handle_order(self) -> str:
        return "Order desk."

    @listen("OTHER")
    def handle_other(self) -> str:
        return "Front desk."


def test_the_seeds_quick_start_turn_by_turn(flows: Any, conversation: Any) -> None:
    chat = conversation.start(QuickStartSupport)

    first = chat.send("Where is my order?")
    second = chat.send("How do returns work?")

    assert (first.route, first.routed_by, first.handler, first.reply) == (
        "order",
        "code",
        "handle_order",
        "Your order is on its way.",
    )
    assert (second.route, second.handler) == ("help", "handle_help")
    assert [m.content for m in second.state.messages] == [
        "Where is my order?",
        "Your order is on its way.",
        "How do returns work?",
        "How can I help?",
    ]
    assert str(chat.transcript) == (
        "user: Where is my order?\n"
        "  -> order (code) · handle_order\n"
        "assistant: Your order is on its way.\n"
        "user: How do returns work?\n"
        "  -> help (code) · handle_help\n"
        "assistant: How can I help?\n"
    )


def test_the_llm_router_and_converse_are_scripted_by_route_and_answer(
    flows: Any, conversation: Any, fake_llm: Any
) -> None:
    chat = conversation.start(ShopAssistant)

    order = chat.send("Where is my parcel?", route="ORDER")
    small_talk = chat.send("Thanks!", route="converse", answer="You're welcome.")

    assert (order.route, order.routed_by, order.reply) == ("ORDER", "llm", "Order 42 ships today.")
    assert (small_talk.handler, small_talk.reply) == ("converse_turn", "You're welcome.")
    assert order.router_call is not None
    assert order.router_call.prompt == "Where is my parcel?"
    converse_messages = small_talk.llm_calls[-1].messages
    assert [m["content"] for m in converse_messages[1:]] == [
        "Where is my parcel?",
        "Order 42 ships today.",
        "Thanks!",
    ]


def test_a_new_handlers_docstring_reaches_the_router(flows: Any, conversation: Any) -> None:
    chat = conversation.start(ShopAssistant)
    turn = chat.send("hello", route="converse", answer="Hi!")
    assert turn.catalogue == {
        "ORDER": "Questions about an existing order: status, delivery, tracking.",
        "REFUND": "The customer wants their money back.",
        "converse": "Ordinary chat, follow-ups, summaries, clarifications, and questions "
        "answerable from prior conversation history.",
        "end": "User signals the conversation is finished (goodbye, exit, done).",
    }


def test_route_descriptions_override_docstrings(flows: Any, conversation: Any) -> None:
    chat = conversation.start(StrictRouter)
    turn = chat.send("my order?", route="ORDER")
    assert turn.catalogue["ORDER"] == "Anything about orders."
    assert turn.catalogue["HUMAN"] == "Escalate to a person."


def test_an_invalid_route_falls_back_to_the_fallback_intent(flows: Any, conversation: Any) -> None:
    chat = conversation.start(StrictRouter)
    turn = chat.send("asdf", route="NOT_A_ROUTE")
    assert (turn.route, turn.routed_by, turn.why) == (
        "HUMAN",
        "fallback",
        'router said "NOT_A_ROUTE"',
    )
    assert turn.reply == "Connecting you to a person."


def test_a_failing_router_falls_back_too(flows: Any, conversation: Any) -> None:
    chat = conversation.start(StrictRouter)
    chat.router_fails(ProviderError("overloaded", status_code=529))
    turn = chat.send("anyone?")
    assert (turn.route, turn.routed_by) == ("HUMAN", "fallback")
    assert turn.why == "router failed: ProviderError('overloaded')"


def test_a_pre_classified_intent_routes_the_turn(flows: Any, conversation: Any) -> None:
    chat = conversation.start(Classified)
    chat.classify_as("ORDER")
    turn = chat.send("I ordered a lamp")
    assert (turn.route, turn.routed_by, turn.reply) == ("ORDER", "intent", "Order desk.")


def test_the_session_resumes_in_a_fresh_instance(flows: Any, conversation: Any) -> None:
    chat = conversation.start(ShopAssistant)
    chat.send("Where is my parcel?", route="ORDER")
    first_flow = chat.flow

    chat.resume()
    turn = chat.send("bye", route="end")

    assert chat.flow is not first_flow
    assert turn.state.id == chat.session_id
    assert [m.content for m in turn.state.messages] == [
        "Where is my parcel?",
        "Order 42 ships today.",
        "bye",
        "Conversation ended.",
    ]
    assert turn.state.last_intent == "end"
    assert turn.state.ended is True
    assert "-- resumed in a fresh ShopAssistant --" in str(chat.transcript)


def test_sessions_side_by_side_stay_isolated(flows: Any, conversation: Any) -> None:
    alice = conversation.start(ShopAssistant)
    bob = conversation.start(ShopAssistant)

    alice.send("parcel?", route="ORDER")
    bob.send("hi", route="converse", answer="Hello Bob.")
    alice.resume()
    alice.send("thanks", route="converse", answer="Bye Alice.")

    assert alice.session_id != bob.session_id
    assert [m.content for m in alice.state.messages] == [
        "parcel?",
        "Order 42 ships today.",
        "thanks",
        "Bye Alice.",
    ]
    assert [m.content for m in bob.state.messages] == ["hi", "Hello Bob."]


def test_finishing_the_session_gives_one_flow_start_and_one_finish(
    flows: Any, conversation: Any
) -> None:
    chat = conversation.start(QuickStartSupport)
    chat.send("order?")
    chat.send("help")
    assert flows.trace.names("flow.finished") == []

    chat.finish()

    assert flows.trace.names("flow.started") == ["QuickStartSupport"]
    assert flows.trace.names("flow.finished") == ["QuickStartSupport"]


def test_a_streamed_turn_has_its_frames_in_order(flows: Any, conversation: Any, human: Any) -> None:
    chat = conversation.start(ShopAssistant)
    human.answer("42")

    turn = chat.stream("I want my money back", route="REFUND")

    assert turn.result == "Refund for order 42 started."
    assert turn.asked == [("Which order number?", "42")]
    kinds = [(f.channel, f.type) for f in turn.frames]
    assert kinds[0] == ("flow", "conversation_turn_started")
    assert kinds[-1] == ("flow", "conversation_turn_completed")
    assert kinds.index(("flow", "conversation_route_selected")) < kinds.index(
        ("flow", "flow_input_requested")
    )
    assert str(chat.transcript).splitlines()[1:3] == [
        "  -> REFUND (llm) · handle_refund",
        "  ask: Which order number? => 42",
    ]


@pytest.mark.parametrize(
    ("lines", "eof"), [(["order?", "exit"], False), (["order?", "QUIT"], False), (["order?"], True)]
)
def test_chat_is_driven_with_scripted_lines(
    flows: Any, conversation: Any, lines: list[str], eof: bool
) -> None:
    chat = conversation.start(QuickStartSupport)

    printed = chat.chat(lines, eof=eof)

    assert printed[0] == "\nAssistant: Your order is on its way."
    assert printed[1:] == ([""] if eof else [])  # chat() prints a newline on EOF
    assert len(chat.turns) == 1
    assert flows.trace.names("flow.finished") == ["QuickStartSupport"]


def test_chat_needs_an_exit_when_eof_is_off(flows: Any, conversation: Any) -> None:
    chat = conversation.start(QuickStartSupport)
    with pytest.raises(Exception, match=r'end them with "exit" or "quit"'):
        chat.chat(["order?"], eof=False)


HELP_DESK = """
schema: crewai.flow/v1
name: HelpDesk
persist:
  enabled: true
conversational:
  llm: gpt-4o-mini
methods:
  handle_billing:
    listen: BILLING
    description: Invoices, payments and refunds.
    do:
      call: expression
      expr: "'Billing will email you.'"
"""


def test_a_declarative_conversational_flow(flows: Any, conversation: Any) -> None:
    chat = conversation.start(HELP_DESK)

    turn = chat.send("Why was I charged twice?", route="BILLING")
    chat.resume()
    again = chat.send("ok", route="converse", answer="Anything else?")

    assert (turn.route, turn.handler, turn.reply) == (
        "BILLING",
        "handle_billing",
        "Billing will email you.",
    )
    assert turn.catalogue["BILLING"] == "Invoices, payments and refunds."
    assert len(again.state.messages) == 4


def test_naming_a_handler_like_its_route_gives_crewais_error(conversation: Any) -> None:
    @ConversationConfig(llm="gpt-4o-mini")
    class Loops(Flow[ConversationState]):
        @listen("order")
        def order(self) -> str:
            return "again"

    with pytest.raises(
        ValueError,
        match=r"so this handler would re-run in a loop\. Rename the handler "
        r"\(for example, handle_order\)",
    ):
        conversation.start(Loops)


def test_the_transcript_snapshot(flows: Any, conversation: Any, snapshot: Any) -> None:
    chat = conversation.start(ShopAssistant)
    chat.send("Where is my parcel?", route="ORDER")
    chat.send("Great, thanks", route="converse", answer="Anything else?")
    chat.resume()
    chat.send("No, bye", route="end")
    chat.finish()

    assert chat.transcript.render() == snapshot
