"""fake_llm.auto(), usage, budgets and trajectories on Agent Framework agents."""

from __future__ import annotations

import af_workflows as wf
import pytest

from pytest_flows._internal.fakes.replies import call_tool
from pytest_flows._internal.fakes.usage import BudgetExceeded
from pytest_flows.agent_framework import FlowsChatClient


@pytest.fixture(autouse=True)
def _fresh_weather_calls():
    wf.WEATHER_CALLS.clear()


def test_a_tool_using_agent_runs_on_auto_alone(flows, fake_llm):
    fake_llm.auto()

    run = flows.run(wf.build_weather(FlowsChatClient()), "Weather in Oslo?")

    assert wf.WEATHER_CALLS == ["city"]  # the real tool ran once, with schema-valid arguments
    assert run.outputs == ["[weather] auto reply"]
    assert [c.entry.label for c in fake_llm.calls] == ["fake_llm.auto(seed=0)"] * 2
    assert fake_llm.calls[0].data["tool_schemas"]["get_weather"]["required"] == ["city"]
    assert fake_llm.tool_calls.match([call_tool("get_weather", city="city")])


def test_a_structured_output_agent_runs_on_auto_alone(flows, fake_llm):
    fake_llm.auto()
    run = flows.run(wf.build_judge(FlowsChatClient()), "Judge this essay.")
    assert run.outputs == ["reject: reason"]  # seed 0: False, the field's name as text


def test_the_seed_changes_the_generated_values(flows, fake_llm):
    fake_llm.auto(seed=1)
    run = flows.run(wf.build_judge(FlowsChatClient()), "Judge this essay.")
    assert run.outputs == ["approve: reason"]


def test_usage_counts_calls_tokens_and_latency_by_executor(flows, fake_llm):
    fake_llm.on(agent="weather").reply(
        call_tool("get_weather", city="Oslo"),
        "Sunny.",
        latency=20,
        usage={"prompt_tokens": 30, "completion_tokens": 5},
    )
    run = flows.run(wf.build_weather(FlowsChatClient()), "Weather in Oslo?")
    weather = run.usage.by_method["weather"]
    assert (weather.llm_calls, weather.tokens, weather.virtual_seconds) == (2, 70, 40.0)
    assert run.usage.virtual_seconds == 40.0


def test_a_budget_fails_an_agent_that_calls_the_model_too_often(flows, fake_llm):
    fake_llm.on(agent="weather").reply(call_tool("get_weather", city="Oslo"), "Sunny.")
    fake_llm.allow_unused()  # the second call fails its budget before it takes a reply
    with pytest.raises(BudgetExceeded, match="the run used llm_calls=2, over its budget of 1"):
        flows.run(wf.build_weather(FlowsChatClient()), "Weather?", budget={"llm_calls": 1})


def test_fake_tools_scripts_a_function_tools_result(flows, fake_llm, fake_tools):
    fake_tools.on("get_weather").reply("snow, -3C in Oslo", latency=5)
    fake_llm.on(agent="weather").reply(call_tool("get_weather", city="Oslo"), "Snow.")

    run = flows.run(wf.build_weather(FlowsChatClient()), "Weather in Oslo?")

    assert run.outputs == ["[weather] Snow."]
    assert wf.WEATHER_CALLS == []  # the real function did not run
    results = [
        c.result
        for m in fake_llm.calls[1].messages
        for c in m.contents
        if c.type == "function_result"
    ]
    assert results == ["snow, -3C in Oslo"]  # parsed into Content by Agent Framework
    assert fake_tools.calls[0].caller == {
        "tool": "get_weather",
        "flow": "weather-report",
        "method": "weather",
    }
    assert flows.clock.monotonic() == 5.0


def test_fake_tools_injects_a_function_tool_failure(flows, fake_llm, fake_tools):
    fake_tools.on("get_weather").error(TimeoutError("weather API timed out"))
    fake_llm.on(agent="weather").reply(call_tool("get_weather", city="Oslo"), "No weather today.")

    run = flows.run(wf.build_weather(FlowsChatClient()), "Weather in Oslo?")

    assert run.outputs == ["[weather] No weather today."]
    results = [
        c for m in fake_llm.calls[1].messages for c in m.contents if c.type == "function_result"
    ]
    assert results and results[0].exception is not None


def test_unscripted_function_tools_run_for_real(flows, fake_llm, fake_tools):
    fake_llm.on(agent="weather").reply(call_tool("get_weather", city="Oslo"), "Sunny.")
    flows.run(wf.build_weather(FlowsChatClient()), "Weather in Oslo?")
    assert wf.WEATHER_CALLS == ["Oslo"]
    assert fake_tools.calls.match([{"name": "get_weather", "arguments": {"city": "Oslo"}}])
