"""fake_llm answers langchain-core chat models in real LangGraph graphs.

The graphs run on LangGraph's own runtime (``graph.invoke``/``stream``, as user code
calls them); the model is a module-level ``ChatOpenAI`` (lg_llm_graphs.MODEL) or an
injected ``FlowsChatModel``. ``llm`` is the ``fake_llm`` fixture the adapter binds.
"""

from __future__ import annotations

from typing import Any

import lg_llm_graphs as g
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langgraph.types import Command, RetryPolicy

from pytest_flows import (
    LLMScript,
    ScriptError,
    UnscriptedRequest,
    call_tool,
    stream,
)
from pytest_flows.langgraph._llm import FlowsChatModel, bind_llm


@pytest.fixture
def llm(fake_llm: LLMScript) -> LLMScript:
    """The user's fixture: the adapter binds it (bind_llm) for the test."""
    return fake_llm


@pytest.fixture(params=["module ChatOpenAI", "injected FlowsChatModel"])
def model(request: pytest.FixtureRequest) -> Any:
    return g.MODEL if request.param == "module ChatOpenAI" else FlowsChatModel(model="gpt-4o")


def test_a_react_loop_calls_the_real_tools_between_scripted_replies(llm, model):
    g.SEARCHED.clear()
    llm.reply(call_tool("search", query="langgraph"), "LangGraph is a graph runtime.")

    out = g.react_agent(model).invoke({"messages": [("user", "what is langgraph?")]})

    kinds = [(m.type, m.content) for m in out["messages"]]
    assert kinds == [
        ("human", "what is langgraph?"),
        ("ai", ""),
        ("tool", "results for langgraph"),
        ("ai", "LangGraph is a graph runtime."),
    ]
    assert g.SEARCHED == ["langgraph"]  # the tool really ran
    call = out["messages"][1].tool_calls[0]
    assert (call["name"], call["args"]) == ("search", {"query": "langgraph"})
    assert call["id"] == "call-agent-1-1"
    assert [m.id for m in out["messages"] if m.type == "ai"] == ["msg-agent-1", "msg-agent-2"]
    first, second = llm.calls
    assert first.caller == {"method": "agent", "purpose": "agent", "model": "gpt-4o"}
    assert first.tools == ["search", "weather"]
    assert first.prompt == "what is langgraph?"
    assert [m.type for m in second.messages] == ["human", "ai", "tool"]
    assert [c.name for c in llm.tool_calls] == ["search"]


def test_rules_pick_replies_by_node_and_model(llm):
    llm.on(method="agent", model="gpt-4o").reply("by rule")
    out = g.react_agent().invoke({"messages": [("user", "hi")]})
    assert out["messages"][-1].content == "by rule"


@pytest.mark.parametrize("method", ["function_calling", "json_schema", "json_mode"])
@pytest.mark.parametrize("reply", [{"step": "tech"}, g.Route(step="tech")], ids=["dict", "model"])
def test_a_router_on_structured_output_takes_the_scripted_route(llm, model, method, reply):
    llm.on(method="router").reply(reply)
    llm.on(method="tech").reply("restart it")

    out = g.router(method, model).invoke({"text": "printer broken"})

    assert out == {"text": "printer broken", "step": "tech", "answer": "restart it"}
    asked = llm.calls[0]
    if method == "json_mode":  # the schema is not sent in json mode: only its output
        assert asked.response_model is None
    else:
        assert list(asked.response_model.model_fields) == ["step"]


def test_structured_output_of_the_wrong_shape_fails_in_the_parser(llm):
    llm.reply({"step": "sales"})
    with pytest.raises(Exception, match="step"):
        g.router("function_calling").invoke({"text": "x"})


def test_include_raw_gives_the_message_and_the_parsed_output(llm, model):
    llm.reply({"step": "billing"})
    out = model.with_structured_output(g.Route, include_raw=True).invoke("refund")
    assert out["parsed"] == g.Route(step="billing")
    assert isinstance(out["raw"], AIMessage)


def test_parallel_branches_each_get_their_nodes_reply(llm):
    llm.on(method="pros").reply("fast")
    llm.on(method="cons").reply("young")

    out = g.parallel_writers().invoke({"topic": "langgraph"})

    assert out["notes"] == ["cons: young", "pros: fast"]  # the reducer's order: by node
    assert sorted(c.caller["method"] for c in llm.calls) == ["cons", "pros"]


def test_message_ids_do_not_depend_on_which_branch_asks_first(llm):
    llm.on(method="pros").reply("fast")
    llm.on(method="cons").reply("young")
    graph = g.StateGraph(g.MessagesState)
    for name in ("pros", "cons"):
        graph.add_node(name, lambda s: {"messages": [g.MODEL.invoke(s["messages"])]})
        graph.add_edge(g.START, name)
    out = graph.compile().invoke({"messages": [("user", "x")]})
    ids = {m.content: m.id for m in out["messages"] if m.type == "ai"}
    assert ids == {"fast": "msg-pros-1", "young": "msg-cons-1"}


def test_a_second_invocation_with_the_history_appends_a_new_message(llm):
    # Message ids are unique in the test: add_messages must not replace the old reply.
    llm.reply("first", "second")
    graph = g.react_agent()
    out = graph.invoke({"messages": [("user", "hi")]})
    out = graph.invoke({"messages": [*out["messages"], ("user", "again")]})
    assert [m.content for m in out["messages"] if m.type == "ai"] == ["first", "second"]


def test_stream_mode_messages_gets_the_chunks_of_each_node(llm, model):
    llm.reply(call_tool("weather", city="Paris"), stream(["Sunny ", "in ", "Paris."]))

    parts = list(
        g.react_agent(model).stream({"messages": [("user", "weather?")]}, stream_mode="messages")
    )

    by_node = [(meta["langgraph_node"], type(m).__name__, m.content) for m, meta in parts]
    texts = [c for node, kind, c in by_node if node == "agent" and c]
    assert texts == ["Sunny ", "in ", "Paris."]
    assert ("tools", "ToolMessage", "sunny in Paris") in by_node
    tool_chunk = next(m for m, meta in parts if getattr(m, "tool_call_chunks", None))
    assert tool_chunk.tool_call_chunks[0]["name"] == "weather"


def test_model_stream_yields_the_scripted_chunks(llm, model):
    llm.reply(stream(["a", "b", "c"]))
    chunks = list(model.stream("go"))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert "".join(c.content for c in chunks) == "abc"
    assert [c.content for c in chunks][:3] == ["a", "b", "c"]


@pytest.mark.asyncio
async def test_async_graphs_and_models(llm, model):
    llm.reply(call_tool("search", query="x"), "async done", stream(["1", "2"]))

    out = await g.react_agent(model).ainvoke({"messages": [("user", "hi")]})
    chunks = [c.content async for c in model.astream("count")]

    assert out["messages"][-1].content == "async done"
    assert chunks[:2] == ["1", "2"]


def test_an_unscripted_call_names_the_node_the_model_and_the_fix(llm):
    with pytest.raises(UnscriptedRequest) as caught:
        g.react_agent().invoke({"messages": [("user", "hi")]})

    message = str(caught.value)
    assert message.startswith("LangGraph node 'agent' called model 'gpt-4o'")
    assert "tools: search, weather" in message
    assert 'fake_llm.on(method="agent").reply("...")' in message
    # never a connection error: the provider's client is never reached


def test_a_subgraph_node_is_named_with_its_path(llm):
    llm.on(method="researcher").reply("found it")
    out = g.team().invoke({"messages": [("user", "dig")]})
    assert out["messages"][-1].content == "found it"
    assert llm.calls[0].caller["checkpoint_ns"] == "team|researcher"


def test_a_scripted_error_fails_the_call_and_a_retry_policy_asks_again(llm):
    llm.reply(ConnectionError("provider down"), "second try")
    graph = g.StateGraph(g.MessagesState)
    graph.add_node(
        "agent",
        lambda s: {"messages": [g.MODEL.invoke(s["messages"])]},
        retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False),
    )
    graph.add_edge(g.START, "agent")
    out = graph.compile().invoke({"messages": [("user", "hi")]})
    assert out["messages"][-1].content == "second try"
    assert isinstance(llm.calls[0].error, ConnectionError)


def test_a_call_to_a_tool_not_offered_is_a_script_error(llm):
    llm.reply(call_tool("serch", query="typo"))
    with pytest.raises(ScriptError, match=r"'serch'.*it offered: search, weather"):
        g.react_agent().invoke({"messages": [("user", "hi")]})


def test_usage_and_token_counts_are_on_the_message(llm):
    llm.reply("hello", usage={"prompt_tokens": 12, "completion_tokens": 3})
    reply = g.MODEL.invoke("hi")
    assert reply.usage_metadata == {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    assert reply.response_metadata["model_name"] == "gpt-4o"


# -- a node re-runs from its top on resume ----------------------------------------------


def _resume(graph: Any, config: dict[str, Any], answer: str) -> Any:
    first = graph.invoke({"messages": [("user", "write a haiku")]}, config)
    assert first["__interrupt__"][0].value == {"draft": "old pond"}
    return graph.invoke(Command(resume=answer), config)


def test_the_call_a_resumed_node_repeats_gets_its_first_reply(llm, model):
    llm.reply("old pond")  # once: the repeat on resume takes no scripted reply
    config = {"configurable": {"thread_id": "t1"}}

    out = _resume(g.approval(model), config, "approved")

    assert [m.content for m in out["messages"]][-2:] == ["old pond", "verdict: approved"]
    first, again = llm.calls
    assert "repeat_of" not in first.data
    assert again.data["repeat_of"] == first.request.number == 1
    assert again.reply == "old pond"
    assert out["messages"][-2].id == "msg-draft-1"  # the same message as the first time


def test_each_thread_repeats_only_its_own_tasks_calls(llm):
    llm.reply("old pond", "old pond")  # thread b's first draft is a call of its own
    graph = g.approval()
    for thread in ("a", "b"):
        _resume(graph, {"configurable": {"thread_id": thread}}, "ok")
    assert [c.data.get("repeat_of") for c in llm.calls] == [None, 1, None, 3]


def test_a_new_graph_run_of_the_same_node_is_not_a_repeat(llm):
    llm.reply("one", "two")
    graph = g.react_agent()
    assert graph.invoke({"messages": [("user", "hi")]})["messages"][-1].content == "one"
    assert graph.invoke({"messages": [("user", "hi")]})["messages"][-1].content == "two"


def test_flows_chat_model_without_a_bound_fake_says_what_to_do():
    with pytest.raises(Exception, match="no fake_llm is bound"):
        FlowsChatModel().invoke("hi")


def test_flows_chat_model_with_its_own_script_needs_no_binding():
    script = LLMScript().reply("mine")
    assert FlowsChatModel(fake=script).invoke("hi").content == "mine"


def test_a_changed_call_on_resume_takes_a_scripted_reply(llm):
    # The re-run asks something else than the first run (here: the prompt changed
    # between the runs), so it is a new call: strict, answered by the next reply.
    prompts = iter(["first draft", "second draft"])
    graph = g.StateGraph(g.MessagesState)

    def draft(state: Any) -> dict[str, Any]:
        reply = g.MODEL.invoke(next(prompts))
        g.interrupt("ok?")
        return {"messages": [reply]}

    graph.add_node("draft", draft)
    graph.add_edge(g.START, "draft")
    app = graph.compile(checkpointer=g.InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    llm.reply("v1", "v2")

    app.invoke({"messages": []}, config)
    out = app.invoke(Command(resume="yes"), config)

    assert out["messages"][-1].content == "v2"
    assert [c.data.get("repeat_of") for c in llm.calls] == [None, None]


def test_latency_is_virtual_time(llm):
    import time

    llm.reply("slow", latency=30.0)  # were it real, the suite's timeout would fail it
    started = time.time()
    g.MODEL.invoke("hi")
    assert time.time() - started == pytest.approx(30.0)


def test_each_call_is_a_trace_line(llm, flows):
    llm.reply(call_tool("search", query="q"), "done")
    g.react_agent().invoke({"messages": [("user", "hi")]})
    lines = [line for line in flows.trace.lines() if line.startswith("llm call")]
    assert lines == [
        'llm call agent purpose=agent model=gpt-4o tools=search({"query": "q"})',
        "llm call agent purpose=agent model=gpt-4o reply=done",
    ]


def test_a_call_in_a_flows_run_is_in_its_nodes_block(llm, flows):
    llm.reply(call_tool("search", query="q"), "done")
    run = flows.run(g.react_agent(), {"messages": [("user", "hi")]})
    lines = run.trace.lines()
    first = lines.index("task started agent triggers=[branch:to:agent]")
    # the graph's lines are written per superstep: the call is between its task's lines,
    # not before the run's first checkpoint (where it happened in time)
    assert (
        lines[first + 1] == 'llm call agent purpose=agent model=gpt-4o tools=search({"query": "q"})'
    )
    last = len(lines) - 1 - lines[::-1].index("task started agent triggers=[branch:to:agent]")
    assert lines[last + 1] == "llm call agent purpose=agent model=gpt-4o reply=done"


def test_auto_calls_each_offered_tool_then_answers(llm):
    llm.auto()
    out = g.react_agent().invoke({"messages": [("user", "hi")]})
    assert sorted(c.name for c in llm.tool_calls) == ["search", "weather"]
    assert out["messages"][-1].content == "auto reply"


def test_handle_gives_a_flows_chat_model_on_the_script(llm):
    # framework=: crewai or agent_framework may be imported in this process too.
    model = llm.handle("claude-sonnet", framework="langgraph")
    assert isinstance(model, FlowsChatModel)
    llm.on(model="claude-sonnet").reply("by model")
    assert model.invoke("hi").content == "by model"


# The order is the scheduler's inside a run (session.run, as flows.run): a graph the
# test body invokes itself runs on pool threads the harness does not manage, in the
# order the machine gives (docs/determinism.md), so it promises none (invoked directly,
# this test failed about 1 run in 40).
@pytest.mark.parametrize("seed", [1, 2, 7])
def test_parallel_branches_ask_in_the_same_order_for_the_same_seed(seed):
    from pytest_flows import FlowsSession

    def run() -> tuple[list[str], Any]:
        with FlowsSession(seed=seed, test_id="lg-fake-llm-seeds") as session:
            script = LLMScript()
            script.reply("one", "two", latency=1.0)  # plain replies: in the order asked
            with bind_llm(session, script):
                out = session.run(g.parallel_writers(), {"topic": "x"}).values
            return [c.caller["method"] for c in script.calls], out["notes"]

    first = run()
    assert run() == first
    assert sorted(first[0]) == ["cons", "pros"]


@pytest.mark.asyncio
async def test_no_path_reaches_the_providers_own_client(llm, monkeypatch):
    from langchain_openai import ChatOpenAI

    def provider(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the provider's client was called")

    for step in ("_generate", "_agenerate", "_stream", "_astream"):
        monkeypatch.setattr(ChatOpenAI, step, provider)
    llm.reply("a", "b", "c", "d", stream(["e", "f"]), "g")

    assert g.MODEL.invoke("1").content == "a"
    assert "".join(c.content for c in g.MODEL.stream("2")) == "b"
    assert (await g.MODEL.ainvoke("3")).content == "c"
    assert "".join([c.content async for c in g.MODEL.astream("4")]) == "d"
    assert g.MODEL.stream_events("5", version="v3").output.text == "ef"
    assert g.MODEL.batch(["6"])[0].content == "g"


def test_a_resumed_subgraph_node_repeats_its_call_too(llm):
    def researcher(state: Any) -> dict[str, Any]:
        found = g.MODEL.invoke(state["messages"])
        g.interrupt("keep it?")
        return {"messages": [found]}

    inner = g.StateGraph(g.MessagesState)
    inner.add_node("researcher", researcher)
    inner.add_edge(g.START, "researcher")
    outer = g.StateGraph(g.MessagesState)
    outer.add_node("team", inner.compile())
    outer.add_edge(g.START, "team")
    app = outer.compile(checkpointer=g.InMemorySaver())
    config = {"configurable": {"thread_id": "sub"}}
    llm.on(method="researcher").reply("a finding")

    app.invoke({"messages": [("user", "dig")]}, config)
    out = app.invoke(Command(resume="yes"), config)

    assert out["messages"][-1].content == "a finding"
    assert [c.data.get("repeat_of") for c in llm.calls] == [None, 1]
    assert {c.caller["checkpoint_ns"] for c in llm.calls} == {"team|researcher"}


def test_a_flows_chat_model_on_its_own_script_keeps_ids_unique_across_calls():
    script = LLMScript().reply("one", "two")
    graph = g.react_agent(FlowsChatModel(fake=script))
    out = graph.invoke({"messages": [("user", "hi")]})
    out = graph.invoke({"messages": [*out["messages"], ("user", "again")]})
    assert [m.id for m in out["messages"] if m.type == "ai"] == ["msg-agent-1", "msg-agent-2"]


def _streaming_node_graph() -> Any:
    """``tell`` streams the model itself; ``sum_up`` invokes it."""

    def tell(state: g.MessagesState) -> dict[str, Any]:
        parts = [str(c.content) for c in g.MODEL.stream(state["messages"]) if c.content]
        return {"messages": [AIMessage("|".join(parts))]}

    def sum_up(state: g.MessagesState) -> dict[str, Any]:
        return {"messages": [g.MODEL.invoke(state["messages"])]}

    graph = g.StateGraph(g.MessagesState)
    graph.add_node("tell", tell)
    graph.add_node("sum_up", sum_up)
    graph.add_edge(g.START, "tell")
    graph.add_edge("tell", "sum_up")
    return graph.compile()


def test_a_node_streaming_its_model_is_the_caller(llm, flows):
    llm.on(method="tell").reply(stream(["Once", " upon"]))
    llm.on(method="sum_up").reply("short")

    run = flows.run(_streaming_node_graph(), {"messages": [("user", "a story")]})

    # model.stream() reaches the provider step without a run manager: the node is still known
    assert [c.caller.get("method") for c in llm.calls] == ["tell", "sum_up"]
    assert run.values["messages"][1].content == "Once| upon"
    assert "llm call tell purpose=agent model=gpt-4o reply='Once upon' chunks=2" in (
        run.trace.lines()
    )


def test_flows_run_with_stream_mode_messages_streams_the_invoked_model_too(llm, flows):
    llm.on(method="tell").reply(stream(["Once", " upon"]), times=2)
    llm.on(method="sum_up").reply(stream(["sh", "ort"]), times=2)

    run = flows.run(
        _streaming_node_graph(), {"messages": [("user", "a story")]}, stream_mode="messages"
    )

    tokens = [(meta["langgraph_node"], part.content) for _, (part, meta) in run.streamed]
    assert [t for t in tokens if t[1]] == [
        ("tell", "Once"),
        ("tell", " upon"),
        ("tell", "Once| upon"),  # the message tell returned (LangGraph streams it too)
        ("sum_up", "sh"),
        ("sum_up", "ort"),
    ]
    assert {mode for mode, _ in run.streamed} == {"messages"}
    bare = flows.run(_streaming_node_graph(), {"messages": [("user", "a story")]})
    assert bare.streamed == [] and bare.values["messages"][-1].content == "short"
