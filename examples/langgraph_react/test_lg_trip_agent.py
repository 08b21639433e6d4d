"""The tests a user writes for a ReAct agent: the model scripted, its tools faked or real."""

from __future__ import annotations

from lg_trip_agent import graph

from pytest_flows import call_tool

QUESTION = {"messages": [("user", "I fly to Lisbon with 200 EUR. What should I pack?")]}


def test_the_agent_checks_the_weather_then_answers(flows, fake_llm, fake_tools, snapshot):
    fake_llm.on(method="agent").reply(
        call_tool("get_weather", city="Lisbon"),  # turn 1: a tool call
        "Sunny and 24 C in Lisbon: pack light clothes and sunglasses.",  # turn 2: the answer
    )
    fake_tools.on("get_weather").reply("sunny, 24 C")  # the web API, scripted

    run = flows.run(graph, QUESTION)

    assert run.status == "finished"
    question, asked, result, answer = run.values["messages"]
    assert question.type == "human"
    assert asked.tool_calls[0]["args"] == {"city": "Lisbon"}
    assert (result.type, result.content) == ("tool", "sunny, 24 C")
    assert result.tool_call_id == asked.tool_calls[0]["id"]  # ToolNode answered that call
    assert answer.content.startswith("Sunny and 24 C")
    assert fake_llm.calls[1].messages[-1].type == "tool"  # the model saw the result
    assert run.trace.render() == snapshot


def test_two_tool_calls_in_one_turn_run_in_parallel_and_keep_their_order(
    flows, fake_llm, fake_tools
):
    fake_llm.on(method="agent").reply(
        [
            call_tool("get_weather", city="Lisbon"),
            call_tool("convert", amount=200, source="EUR", target="USD"),
        ],
        "Sunny, and your 200 EUR are 216.00 USD.",
    )
    fake_tools.on("get_weather").reply("sunny, 24 C")  # convert is not scripted: it runs

    run = flows.run(graph, QUESTION)

    results = [m.content for m in run.values["messages"] if m.type == "tool"]
    assert results == ["sunny, 24 C", "216.00 USD"]  # in the order the model asked
    assert [call.caller["tool"] for call in fake_tools.calls] == ["get_weather", "convert"]
    assert run.trace.names("task.started") == ["agent", "tools", "agent"]


def test_a_failing_tool_reaches_the_model_as_an_error_message(flows, fake_llm):
    fake_llm.on(method="agent").reply(
        call_tool("convert", amount=5, source="EUR", target="JPY"),
        "Sorry, I cannot convert to yen.",
    )

    run = flows.run(graph, QUESTION)

    error = fake_llm.calls[1].messages[-1]  # what the model was shown on its second turn
    assert error.type == "tool" and error.status == "error"
    assert "no rate for EUR -> JPY" in error.content
    assert run.values["messages"][-1].content == "Sorry, I cannot convert to yen."


def test_the_agent_stops_when_the_model_answers_without_a_tool(flows, fake_llm):
    fake_llm.on(method="agent").reply("Pack for sun.")

    run = flows.run(graph, QUESTION)

    assert run.trace.names("task.started") == ["agent"]
    assert "router agent path=tools_condition chose=__end__" in run.trace.lines()
