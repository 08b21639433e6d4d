"""fake_llm, fake_tools and human together through the adapter: ``flows.run`` of real
graphs, with the fixtures a user requests (the LangGraph adapter binds the fakes)."""

from __future__ import annotations

import lg_llm_graphs as g
import pytest
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt

from pytest_flows import UnscriptedRequest, call_tool


def test_a_react_run_is_answered_traced_and_counted(flows, fake_llm, fake_tools):
    fake_llm.on(method="agent").reply(call_tool("search", query="lg"), "done", latency=2.0)
    fake_tools.on("search").reply("3 results")

    run = flows.run(g.react_agent(), {"messages": [("user", "what is lg?")]})

    assert run.status == "finished"
    assert [m.content for m in run.values["messages"]][-2:] == ["3 results", "done"]
    llm_lines = [line for line in run.trace.lines() if "llm call" in line]
    assert len(llm_lines) == 2
    assert 'tools=search({"query": "lg"})' in llm_lines[0]
    assert "reply=done" in llm_lines[1]
    assert run.usage.llm_calls == 2
    assert run.usage.by_method["agent"].llm_calls == 2
    assert run.usage.by_method["agent"].virtual_seconds == pytest.approx(4.0)


def test_a_module_level_model_unscripted_fails_the_test_naming_the_node(flows, fake_llm):
    with pytest.raises(UnscriptedRequest, match="LangGraph node 'router' called model 'gpt-4o'"):
        flows.run(g.router("function_calling"), {"text": "x"})


def test_the_call_before_an_interrupt_is_scripted_once(flows, fake_llm, human):
    asked: list[str] = []

    def draft(state: g.MessagesState) -> dict[str, object]:
        reply = g.MODEL.invoke(state["messages"])
        asked.append(reply.content)
        verdict = interrupt({"draft": reply.content})
        return {"messages": [reply, ("user", f"verdict: {verdict}")]}

    builder = StateGraph(g.MessagesState)
    builder.add_node("draft", draft)
    builder.add_edge(START, "draft")
    fake_llm.on(method="draft").reply("old pond")
    human.answer("approved")

    run = flows.run(builder, {"messages": [("user", "a haiku")]})

    assert run.status == "finished"
    assert asked == ["old pond", "old pond"]  # the node ran twice, as in production
    assert [c.data.get("repeat_of") for c in fake_llm.calls] == [None, 1]
    assert [m.content for m in run.values["messages"]][-1] == "verdict: approved"


def test_a_run_over_its_llm_budget_stops_at_the_call_that_goes_over(flows, fake_llm):
    from pytest_flows import BudgetExceeded

    fake_llm.reply(call_tool("search", query="a"), call_tool("search", query="b"), "done")
    fake_llm.allow_unused()

    with pytest.raises(BudgetExceeded, match="llm_calls=2, over its budget of 1"):
        flows.run(g.react_agent(), {"messages": [("user", "hi")]}, budget={"llm_calls": 1})

    assert len(fake_llm.calls) == 1  # the second call was refused before it took a reply


def test_parallel_nodes_that_interrupt_each_repeat_their_own_call(flows, fake_llm, human):
    def reviewer(name: str):
        def review(state: g.Notes) -> dict[str, object]:
            opinion = g.MODEL.invoke(f"{name}: {state['topic']}").content
            verdict = interrupt({"reviewer": name, "opinion": opinion})
            return {"notes": [f"{name}: {opinion} ({verdict})"]}

        return review

    builder = StateGraph(g.Notes)
    for name in ("legal", "tech"):
        builder.add_node(name, reviewer(name))
        builder.add_edge(START, name)
    fake_llm.on(method="legal").reply("fine")
    fake_llm.on(method="tech").reply("risky")
    human.answer("ok", times=2)

    run = flows.run(builder, {"topic": "launch", "notes": []})

    assert run.status == "finished"
    assert run.values["notes"] == ["legal: fine (ok)", "tech: risky (ok)"]
    repeats = {c.caller["method"]: c.data.get("repeat_of") for c in fake_llm.calls[2:]}
    firsts = {c.caller["method"]: c.request.number for c in fake_llm.calls[:2]}
    assert repeats == firsts  # each re-run repeats its own node's call
