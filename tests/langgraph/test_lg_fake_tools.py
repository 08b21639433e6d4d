"""fake_tools answers the tools a LangGraph ``ToolNode`` (or user code) runs.

The model's turns come from ``fake_llm``;
the tools are ``@tool`` functions and a ``BaseTool`` subclass, run by ``ToolNode``.
"""

from __future__ import annotations

from typing import Annotated, Any

import lg_llm_graphs as g
import pytest
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.prebuilt import InjectedState

from pytest_flows import FakeTools, LLMScript, UnscriptedRequest, call_tool
from pytest_flows.langgraph._tools import bind_tools


@pytest.fixture
def llm(fake_llm: LLMScript) -> LLMScript:
    return fake_llm


@pytest.fixture
def tools(fake_tools: FakeTools) -> FakeTools:
    """The user's fixture: the adapter binds it (bind_tools) for the test."""
    return fake_tools


def _ask(text: str = "go") -> Any:
    return g.react_agent().invoke({"messages": [("user", text)]})


def test_a_scripted_tool_result_reaches_the_model_as_its_tool_message(llm, tools):
    g.SEARCHED.clear()
    llm.reply(call_tool("search", query="lg"), "done")
    tools.on("search").reply("3 scripted results")

    out = _ask()

    message = out["messages"][2]
    assert (message.type, message.content, message.name) == ("tool", "3 scripted results", "search")
    assert message.tool_call_id == out["messages"][1].tool_calls[0]["id"]
    assert g.SEARCHED == []  # the real body did not run
    (call,) = tools.calls
    assert call.caller == {"tool": "search", "method": "tools"}
    assert call.data["arguments"] == {"query": "lg"}
    assert [m.type for m in llm.calls[1].messages][-1] == "tool"


def test_unscripted_tools_run_for_real_and_are_in_the_ledger(llm, tools):
    llm.reply(call_tool("weather", city="Oslo"), "ok")
    out = _ask()
    assert out["messages"][2].content == "sunny in Oslo"
    assert tools.calls[0].reply == "sunny in Oslo"
    assert tools.calls[0].entry is None


def test_strict_refuses_a_tool_nothing_scripted(llm, tools):
    tools.strict()
    llm.reply(call_tool("weather", city="Oslo"))
    with pytest.raises(UnscriptedRequest, match=r'fake_tools.on\("weather"\)'):
        _ask()


def test_a_scripted_tool_error_fails_the_tool_node_as_a_real_one_does(llm, tools):
    llm.reply(call_tool("search", query="x"))
    tools.on("search").error(ValueError("index offline"))
    with pytest.raises(ValueError, match="index offline"):  # ToolNode's default handling
        _ask()


def test_a_scripted_tool_error_becomes_an_error_message_where_errors_are_handled(llm, tools):
    llm.reply(call_tool("search", query="x"), "sorry")
    tools.on("search").error(ValueError("index offline"))
    graph = g.react_agent(handle_tool_errors=True)
    out = graph.invoke({"messages": [("user", "go")]})
    message = out["messages"][2]
    assert message.status == "error"
    assert "index offline" in message.content


def test_parallel_tool_calls_each_get_their_result(llm, tools):
    llm.reply([call_tool("search", query="a"), call_tool("weather", city="b")], "both")
    tools.on("search").reply("found a")
    tools.on("weather").reply("rain in b")

    out = _ask()

    assert sorted(m.content for m in out["messages"] if m.type == "tool") == [
        "found a",
        "rain in b",
    ]
    assert sorted(c.caller["tool"] for c in tools.calls) == ["search", "weather"]


def test_rules_narrow_by_arguments(llm, tools):
    llm.reply(call_tool("search", query="cats"), "ok")
    tools.on("search", where=lambda r: r.data["arguments"]["query"] == "dogs").reply("no")
    tools.on("search", where=lambda r: r.data["arguments"]["query"] == "cats").reply("meow")
    tools.allow_unused()
    assert _ask()["messages"][2].content == "meow"


class Lookup(BaseTool):
    """A tool written as a class, with its own sync and async bodies."""

    name: str = "lookup"
    description: str = "Look a key up."

    def _run(self, key: str) -> str:
        return f"real {key}"

    async def _arun(self, key: str) -> str:
        return f"real async {key}"


def test_a_base_tool_subclass_is_answered(tools):
    tools.on("lookup").reply("fake sync")
    lookup = Lookup()
    assert lookup.invoke({"key": "k"}) == "fake sync"


@pytest.mark.asyncio
async def test_an_async_tool_body_is_answered(tools):
    tools.on("lookup").reply("fake async")
    assert await Lookup().ainvoke({"key": "k"}) == "fake async"
    assert await g.search.ainvoke({"query": "q"}) == "results for q"  # sync body, no script
    assert [c.caller["tool"] for c in tools.calls] == ["lookup", "search"]  # each asked once


def test_tools_outside_any_graph_have_no_node(tools):
    tools.on("weather").reply("fog")
    assert g.weather.invoke({"city": "x"}) == "fog"
    assert tools.calls[0].caller == {"tool": "weather"}


def test_the_binding_is_undone(flows):
    cls = type(g.weather)
    body, run = vars(cls)["_run"], BaseTool.run
    fake = FakeTools(flows)
    with bind_tools(flows, fake):
        fake.on("weather").reply("fog")
        assert g.weather.invoke({"city": "x"}) == "fog"
        assert vars(cls)["_run"] is not body
    assert (vars(cls)["_run"], BaseTool.run) == (body, run)
    assert g.weather.invoke({"city": "x"}) == "sunny in x"


def test_injected_arguments_are_not_in_the_request(llm, tools):
    @tool
    def note(
        text: str, state: Annotated[dict, InjectedState], call: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Take a note."""
        return f"{text} ({len(state['messages'])} messages, {call})"

    graph = g.StateGraph(g.MessagesState)
    graph.add_node(
        "agent", lambda s: {"messages": [g.MODEL.bind_tools([note]).invoke(s["messages"])]}
    )
    graph.add_node("tools", g.ToolNode([note]))
    graph.add_edge(g.START, "agent")
    graph.add_conditional_edges("agent", g.tools_condition)
    graph.add_edge("tools", "agent")
    llm.reply(call_tool("note", text="hi"), "noted")

    out = graph.compile().invoke({"messages": [("user", "x")]})

    assert out["messages"][2].content == "hi (2 messages, call-agent-1-1)"  # the real tool
    assert tools.calls[0].data["arguments"] == {"text": "hi"}
