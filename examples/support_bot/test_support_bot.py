"""The support bot tested turn by turn, as a conversation."""

from __future__ import annotations

from support_bot import SupportBot

from pytest_flows import ProviderError


def test_an_order_status_conversation(flows, conversation, human):
    chat = conversation.start(SupportBot)
    human.on(message="order number").answer("a-1001")

    hello = chat.send("hi!", route="converse", answer="Hi, I'm Pip. How can I help?")
    status = chat.send("where is my order?", route="ORDER_STATUS")

    assert hello.handler == "converse_turn"
    assert status.route == "ORDER_STATUS"
    assert status.routed_by == "llm"
    assert status.reply == "Order A-1001 is shipped on Monday."
    assert status.asked == [("What is your order number?", "a-1001")]


def test_the_router_sees_every_route_with_its_docstring(flows, conversation, fake_llm):
    chat = conversation.start(SupportBot)
    fake_llm.on(method="handle_repair").reply("Monday at 9")
    turn = chat.send("my brakes squeak", route="REPAIR")
    assert turn.catalogue["REPAIR"] == "Booking or asking about a bike repair."
    assert set(turn.catalogue) == {"ORDER_STATUS", "REPAIR", "ESCALATE", "converse", "end"}


def test_a_customer_who_never_gives_the_number(flows, conversation, human):
    chat = conversation.start(SupportBot)
    human.on(message="order number").timeout()

    turn = chat.send("where is my order?", route="ORDER_STATUS")

    assert turn.reply == "No problem - send me the order number whenever you have it."
    assert flows.clock.monotonic() == 120  # two minutes, virtually


def test_when_the_router_is_down_a_person_takes_over(flows, conversation):
    chat = conversation.start(SupportBot)
    chat.router_fails(ProviderError("overloaded", status_code=529))

    turn = chat.send("help??")

    assert (turn.route, turn.routed_by) == ("ESCALATE", "fallback")
    assert turn.state.escalated is True


def test_a_made_up_route_escalates_too(flows, conversation):
    chat = conversation.start(SupportBot)
    turn = chat.send("refund my soul", route="SOUL_REFUNDS")
    assert turn.route == "ESCALATE"
    assert turn.why == 'router said "SOUL_REFUNDS"'


def test_the_session_survives_a_new_process(flows, conversation, fake_llm):
    chat = conversation.start(SupportBot)
    fake_llm.on(method="handle_repair").reply("Tuesday at 10")
    chat.send("can you fix a flat tyre?", route="REPAIR")

    chat.resume()  # a fresh SupportBot(), as the next web request would build
    turn = chat.send("thanks, bye", route="end")

    assert turn.state.ended is True
    assert [m.role for m in turn.state.messages] == ["user", "assistant", "user", "assistant"]


def test_a_streamed_reply(flows, conversation):
    chat = conversation.start(SupportBot)
    turn = chat.stream(
        "what are your hours?", route="converse", answer="9 to 5, Monday to Saturday."
    )
    assert turn.result == "9 to 5, Monday to Saturday."
    assert turn.frames[-1].type == "conversation_turn_completed"


def test_the_terminal_chat(flows, conversation, fake_llm):
    chat = conversation.start(SupportBot)
    chat.route_to("converse")
    chat.answer_with("Hello from Pip.")

    printed = chat.chat(["hello", "exit"])

    assert printed == ["\nAssistant: Hello from Pip."]


def test_the_transcript(flows, conversation, human, fake_llm, snapshot):
    chat = conversation.start(SupportBot)
    human.on(message="order number").answer("A-1002")
    fake_llm.on(method="handle_repair").reply("Thursday at 2pm")

    chat.send("hello", route="converse", answer="Hi, I'm Pip. How can I help?")
    chat.send("where is my order?", route="ORDER_STATUS")
    chat.resume()
    chat.send("and can you service my bike?", route="REPAIR")
    chat.send("bye", route="end")
    chat.finish()

    assert chat.transcript.render() == snapshot
