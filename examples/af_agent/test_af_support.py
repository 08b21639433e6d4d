"""The tests a user writes for an agent workflow: scripted model, real tools, offline."""

from __future__ import annotations

import af_support
import pytest
from af_support import build_workflow

from pytest_flows import ProviderError, call_tool, stream
from pytest_flows.agent_framework import FlowsChatClient

QUESTION = "Where is my order A-17?"


@pytest.fixture(autouse=True)
def _no_lookups_yet():
    af_support.LOOKUPS.clear()


def test_an_order_question_is_looked_up_and_answered(flows, fake_llm):
    fake_llm.on(agent="classifier").reply({"category": "order", "order_id": "A-17"})
    fake_llm.on(agent="orders").reply(
        call_tool("order_status", order_id="A-17"),
        "Your order A-17 shipped on Monday.",
    )

    run = flows.run(build_workflow(FlowsChatClient()), QUESTION)

    assert run.outputs == ["Your order A-17 shipped on Monday."]
    assert af_support.LOOKUPS == ["A-17"]  # the real tool ran
    order_calls = [c for c in fake_llm.calls if c.caller["agent"] == "orders"]
    assert "(order id: A-17)" in order_calls[0].prompt
    tool_results = [
        content.result
        for message in order_calls[1].messages
        for content in message.contents
        if content.type == "function_result"
    ]
    assert tool_results == ["shipped on Monday"]


def test_anything_else_goes_to_a_person(flows, fake_llm):
    fake_llm.on(agent="classifier").reply({"category": "other"})

    run = flows.run(build_workflow(FlowsChatClient()), "I love your shop!")

    assert run.outputs == ["A person will get back to you."]
    assert [c.caller["agent"] for c in fake_llm.calls] == ["classifier"]


def test_the_trace_shows_the_model_calls(flows, fake_llm, snapshot):
    fake_llm.on(agent="classifier").reply({"category": "order", "order_id": "B-02"})
    fake_llm.on(agent="orders").reply(call_tool("order_status", order_id="B-02"), "Soon!")

    run = flows.run(build_workflow(FlowsChatClient()), "Where is B-02?")

    assert run.trace.render() == snapshot


def test_streaming_and_slow_models_cost_no_time(flows, fake_llm):
    fake_llm.on(agent="classifier").reply({"category": "order", "order_id": "A-17"}, latency=5)
    fake_llm.on(agent="orders").reply(
        call_tool("order_status", order_id="A-17"),
        stream(["Shipped ", "on ", "Monday."], interval=1.0),
        latency=10,
    )

    run = flows.run(build_workflow(FlowsChatClient()), QUESTION, stream=True)

    assert run.outputs == ["Shipped on Monday."]
    assert flows.clock.monotonic() == pytest.approx(5 + 10 + 10 + 2)


def test_a_model_outage_fails_the_run(flows, fake_llm):
    fake_llm.on(agent="classifier").reply(ProviderError("overloaded", status_code=503))

    run = flows.run(build_workflow(FlowsChatClient()), QUESTION, raise_on_error=False)

    assert isinstance(run.error, ProviderError)
    assert run.status == "FAILED"
