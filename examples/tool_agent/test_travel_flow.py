"""A ReAct agent on scripted tools: results, failures, the real tool, strictness."""

from __future__ import annotations

import pytest
from travel_flow import TravelFlow

from pytest_flows import UnscriptedRequest, call_tool


def script_the_assistant(fake_llm):
    fake_llm.text_tools()  # answer as a model without native function calling
    fake_llm.on(agent="Travel assistant").reply(
        call_tool("weather", city="Oslo"),
        call_tool("flight_price", origin="Berlin", destination="Oslo"),
        "Go: it is sunny and the flight is cheap.",
    )


def test_the_assistant_reads_both_tools_through_its_react_loop(flows, fake_llm, fake_tools):
    script_the_assistant(fake_llm)
    fake_tools.on("weather").reply("sunny, 21 C", times=2)

    run = flows.run(TravelFlow)

    assert run.state.advice == "Go: it is sunny and the flight is cheap."
    # The scripted weather and the real flight_price tool both came back as observations.
    second, third = fake_llm.calls[1], fake_llm.calls[2]
    assert second.messages[-2]["content"].endswith("Observation: sunny, 21 C")
    assert third.messages[-2]["content"].endswith("Observation: Berlin->Oslo: 120 EUR")
    assert fake_tools.calls.match(["weather", "flight_price", "weather"])
    assert [call.entry is not None for call in fake_tools.calls] == [True, False, True]
    assert run.output == "sunny, 21 C"


def test_a_weather_outage_is_handled_by_the_flow(flows, fake_llm, fake_tools):
    script_the_assistant(fake_llm)
    fake_tools.on("weather", method="advise").reply("sunny")
    fake_tools.on("weather", method="check_weather_directly").error(
        TimeoutError("weather API timed out"), latency=30
    )

    run = flows.run(TravelFlow)

    assert run.output == "weather unavailable (weather API timed out)"
    assert flows.clock.monotonic() == 30.0  # virtual: the test took no real half-minute


def test_strict_tools_name_every_unscripted_call(flows, fake_llm, fake_tools):
    script_the_assistant(fake_llm)
    fake_llm.allow_unused()  # the run stops at the unscripted tool, before the answer
    fake_tools.strict()
    fake_tools.on("weather").reply("sunny")
    with pytest.raises(UnscriptedRequest, match=r'fake_tools.on\("flight_price"\)'):
        flows.run(TravelFlow)
