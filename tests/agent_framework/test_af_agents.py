"""Agents in a workflow, offline: fake_llm backs their chat client; tools really run."""

from __future__ import annotations

import af_workflows as wf
import pytest
from agent_framework import (
    AgentResponseUpdate,
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)

from pytest_flows._internal.fakes.replies import ProviderError, call_tool, stream
from pytest_flows._internal.fakes.script import ScriptReplyError, UnscriptedRequest
from pytest_flows.agent_framework import FlowsChatClient


@pytest.fixture(autouse=True)
def _fresh_weather_calls():
    wf.WEATHER_CALLS.clear()


def test_an_agent_calls_a_real_tool_and_answers(flows, fake_llm):
    fake_llm.on(agent="weather").reply(
        call_tool("get_weather", city="Oslo"), "It is sunny in Oslo.", latency=20
    )

    run = flows.run(wf.build_weather(FlowsChatClient()), "Weather in Oslo?")

    assert run.outputs == ["[weather] It is sunny in Oslo."]
    assert wf.WEATHER_CALLS == ["Oslo"]  # the real tool ran
    first, second = fake_llm.calls
    assert first.caller == {
        "flow": "weather-report",
        "method": "weather",
        "agent": "weather",
        "purpose": "agent",
        "model": "fake-model",
    }
    assert first.prompt == "Weather in Oslo?"
    assert first.tools == ["get_weather"]
    # the second model call sees the tool's result
    results = [c for m in second.messages for c in m.contents if c.type == "function_result"]
    assert [r.result for r in results] == ["sunny, 21C in Oslo"]
    assert flows.clock.monotonic() == pytest.approx(40)  # two 20 s calls, virtual
    assert run.trace.lines()[3:5] == [
        "llm call weather purpose=agent agent='weather' model='fake-model' "
        'tools=get_weather({"city": "Oslo"})',
        "llm call weather purpose=agent agent='weather' model='fake-model' "
        "reply='It is sunny in Oslo.'",
    ]


def test_streaming_updates_reach_the_workflow_output(flows, fake_llm):
    fake_llm.reply(stream(["It is ", "sunny ", "in Oslo."]))

    run = flows.run(wf.build_weather(FlowsChatClient(), output_agent=True), "Oslo?", stream=True)

    updates = [o for o in run.outputs if isinstance(o, AgentResponseUpdate)]
    assert [u.text for u in updates] == ["It is ", "sunny ", "in Oslo."]


def test_structured_output_is_parsed_by_the_response_format(flows, fake_llm):
    fake_llm.on(agent="judge").reply({"approved": True, "reason": "well argued"})

    run = flows.run(wf.build_judge(FlowsChatClient()), "Judge this essay.")

    assert run.outputs == ["approve: well argued"]
    (call,) = fake_llm.calls
    assert call.response_model is wf.Verdict


def test_a_production_chat_client_answers_from_the_script(flows, fake_llm):
    class ProviderClient(FunctionInvocationLayer, BaseChatClient):
        """Stands in for a provider's client: it would go to the network."""

        def _inner_get_response(self, *, messages, stream, options, **kwargs):
            raise AssertionError("the provider was called")

    fake_llm.reply(call_tool("get_weather", city="Bergen"), "Rain in Bergen.")

    run = flows.run(wf.build_weather(ProviderClient()), "Bergen?")

    assert run.outputs == ["[weather] Rain in Bergen."]
    assert wf.WEATHER_CALLS == ["Bergen"]


def test_an_unscripted_model_call_fails_with_a_suggestion(flows, fake_llm):
    with pytest.raises(UnscriptedRequest) as raised:
        flows.run(wf.build_weather(FlowsChatClient()), "Oslo?")

    message = str(raised.value)
    assert "unscripted LLM call #1" in message
    assert 'fake_llm.on(agent="weather").reply(' in message


def test_a_scripted_call_to_an_unknown_tool_is_a_script_error(flows, fake_llm):
    fake_llm.reply(call_tool("get_wether", city="Oslo"))

    with pytest.raises(ScriptReplyError, match=r"tool 'get_wether', but it offered: get_weather"):
        flows.run(wf.build_weather(FlowsChatClient()), "Oslo?")


def test_a_provider_error_fails_the_agent_executor(flows, fake_llm):
    fake_llm.reply(ProviderError("model overloaded", status_code=503))

    run = flows.run(wf.build_weather(FlowsChatClient()), "Oslo?", raise_on_error=False)

    assert isinstance(run.error, ProviderError)
    assert "llm call weather" in run.trace.render()
    assert run.trace.of_kind("executor.failed")[0].name == "weather"


def test_agent_framework_responses_pass_through(flows, fake_llm):
    fake_llm.reply(ChatResponse(messages=[Message("assistant", [Content.from_text("Fog.")])]))

    run = flows.run(wf.build_weather(FlowsChatClient()), "London?")

    assert run.outputs == ["[weather] Fog."]
