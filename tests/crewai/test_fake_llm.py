"""fake_llm on real crewai flows and agents: routing, replies, tools, errors, time, events."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import crewai
import pytest
from crewai import LLM, Agent
from crewai.events.types.llm_events import LLMStreamChunkEvent
from crewai.flow.flow import Flow, listen, or_, start
from crewai.tools import tool
from crewai_versions import (
    crewai_114_differs,
    needs_conversational_flows,
    needs_declarative_flows,
    needs_rate_limit_retry,
)
from pydantic import BaseModel

from pytest_flows._internal.fakes.replies import ProviderError, RateLimitError, call_tool, stream
from pytest_flows._internal.fakes.script import ALWAYS, ScriptReplyError, UnscriptedRequest
from pytest_flows.crewai._compat import add_stream_sink, reset_stream_sinks
from pytest_flows.crewai._llm import FakeLLM

# Built at import, before any test: the routing must reach it too.
MODULE_LLM = LLM("gpt-4o-mini")

TOOL_LOG: list[tuple[str, str]] = []


def wall_clock() -> float:
    # The harness freezes time.monotonic & co. to its virtual clock; this one is real.
    return time.clock_gettime(time.CLOCK_MONOTONIC)


@tool("search")
def search(query: str) -> str:
    """Search the web for a query."""
    TOOL_LOG.append(("search", query))
    return f"3 results for {query}"


@tool("fetch")
def fetch(url: str) -> str:
    """Fetch one page."""
    TOOL_LOG.append(("fetch", url))
    return f"<html>{url}</html>"


class ResearchFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        agent = Agent(
            role="Researcher",
            goal="Find sources",
            backstory="Careful.",
            llm="gpt-4o",
            tools=[search, fetch],
        )
        return str(agent.kickoff("Research AI agents").raw)


@pytest.fixture(autouse=True)
def _clear_tool_log() -> None:
    TOOL_LOG.clear()


def test_an_agent_calls_two_tools_that_really_run_and_sees_their_results(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.on(agent="Researcher").reply(
        call_tool("search", query="AI agents"),
        call_tool("fetch", url="https://example.org/a"),
        "Agents plan, act and observe.",
    )

    run = flows.run(ResearchFlow)

    assert run.output == "Agents plan, act and observe."
    assert TOOL_LOG == [("search", "AI agents"), ("fetch", "https://example.org/a")]
    first, second, third = fake_llm.calls
    assert first.tools == ["search", "fetch"]
    assert first.prompt.strip() == "Current Task: Research AI agents"
    assert second.messages[-1]["role"] == "tool"
    assert second.messages[-1]["content"] == "3 results for AI agents"
    assert third.messages[-1]["content"] == "<html>https://example.org/a</html>"
    assert first.caller == {
        "flow": "ResearchFlow",
        "method": "research",
        "agent": "Researcher",
        "purpose": "agent",
        "model": "gpt-4o",
    }
    assert run.trace.of_kind("llm.call")[0].render() == (
        "llm call research purpose=agent agent=Researcher model=gpt-4o "
        'tools=search({"query": "AI agents"})'
    )
    assert run.trace.of_kind("llm.call")[2].get("reply") == "'Agents plan, act and observe.'"


def test_parallel_tool_calls_in_one_reply(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(agent="Researcher").reply(
        [call_tool("search", query="a"), call_tool("search", query="b")], "done"
    )
    assert flows.run(ResearchFlow).output == "done"
    assert TOOL_LOG == [("search", "a"), ("search", "b")]


def test_a_call_to_a_tool_the_agent_does_not_have_says_which_it_has(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.reply(call_tool("delete_everything"))
    with pytest.raises(ScriptReplyError) as caught:
        flows.run(ResearchFlow)
    assert str(caught.value).startswith(
        "pytest-flows: LLM call #1 (caller: flow=ResearchFlow method=research agent=Researcher "
        "purpose=agent model=gpt-4o) got a scripted call to tool "
        "'delete_everything', but it offered: search, fetch. Fix the name in "
        'fake_llm.reply(call_tool("delete_everything"))'
    )


class HiFlow(Flow):  # type: ignore[type-arg]
    @start()
    def hi(self) -> Any:
        return LLM("gpt-4o").call("Say hi")


class AskFlow(Flow):  # type: ignore[type-arg]
    @start()
    def direct(self) -> Any:
        return LLM(model="gpt-4o").call("Say hi")

    @listen(direct)
    def module_level(self, _: Any) -> Any:
        return MODULE_LLM.call([{"role": "user", "content": "Again"}])


def test_llm_objects_built_in_the_flow_and_at_import_answer_from_the_script(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.on(prompt="Say hi").reply("hi")
    fake_llm.on(model="gpt-4o-mini").reply("again")

    run = flows.run(AskFlow)

    assert run.method_outputs == ["hi", "again"]
    assert [c.caller["model"] for c in fake_llm.calls] == ["gpt-4o", "gpt-4o-mini"]
    assert [c.caller["purpose"] for c in fake_llm.calls] == ["call", "call"]


def test_the_routing_is_undone_after_the_test(fake_llm: Any) -> None:
    assert isinstance(LLM("gpt-4o"), FakeLLM)
    assert isinstance(Agent(role="r", goal="g", backstory="b", llm="gpt-4o").llm, FakeLLM)


def test_without_the_fake_llm_constructs_a_real_provider() -> None:
    assert not isinstance(LLM("gpt-4o"), FakeLLM)
    assert type(MODULE_LLM).call is not FakeLLM.call


def test_fake_llm_opts_out_of_crewais_real_sleep_retry_wrapper() -> None:
    assert FakeLLM.__dict__["call"]._crewai_rate_limit_wrapped is True
    assert FakeLLM.__dict__["acall"]._crewai_rate_limit_wrapped is True


class Report(BaseModel):
    title: str
    score: int


class StructuredFlow(Flow):  # type: ignore[type-arg]
    @start()
    def ask(self) -> Any:
        return LLM("gpt-4o").call("Rate it", response_model=Report)


@pytest.mark.parametrize(
    "reply",
    [Report(title="t", score=3), {"title": "t", "score": 3}, '{"title": "t", "score": 3}'],
    ids=["model", "dict", "json"],
)
def test_structured_replies_become_the_callers_response_model(
    flows: Any, fake_llm: Any, reply: Any
) -> None:
    fake_llm.reply(reply)
    output = flows.run(StructuredFlow).output
    assert output == Report(title="t", score=3)
    assert fake_llm.calls[0].response_model is Report


def test_a_structured_reply_that_does_not_fit_names_the_fields(flows: Any, fake_llm: Any) -> None:
    fake_llm.reply({"title": "t"})
    with pytest.raises(ScriptReplyError) as caught:
        flows.run(StructuredFlow)
    assert str(caught.value) == (
        "pytest-flows: LLM call #1 (caller: flow=StructuredFlow method=ask purpose=call "
        "model=gpt-4o) asked for a Report, and the scripted reply {'title': 't'} does not fit "
        'it: score: Field required. Reply with a Report(...) or a dict such as {"title": "...", '
        '"score": 0}.'
    )


def test_callable_replies_see_the_request(flows: Any, fake_llm: Any) -> None:
    fake_llm.reply(lambda request: {"title": request.prompt.upper(), "score": len(request.prompt)})
    assert flows.run(StructuredFlow).output == Report(title="RATE IT", score=7)


def test_a_provider_error_reaches_the_flow(flows: Any, fake_llm: Any) -> None:
    fake_llm.reply(ProviderError("upstream exploded", status_code=503))
    run = flows.run(StructuredFlow, raise_on_error=False)
    assert isinstance(run.error, ProviderError)
    assert run.error.status_code == 503
    assert run.trace.of_kind("llm.call")[0].get("error") == "'ProviderError: upstream exploded'"


@needs_rate_limit_retry
def test_a_rate_limit_is_retried_on_virtual_time_as_crewai_would(flows: Any, fake_llm: Any) -> None:
    fake_llm.reply(RateLimitError(), RateLimitError(retry_after=60), {"title": "t", "score": 1})
    started = wall_clock()

    output = flows.run(StructuredFlow).output

    assert output == Report(title="t", score=1)
    assert (
        flows.clock.monotonic() == 61.0
    )  # crewai's first backoff (1 s, no jitter), then Retry-After
    assert wall_clock() - started < 30  # crewai's own wrapper would really sleep 61 s
    assert [c.error is not None for c in fake_llm.calls] == [True, True, False]


@needs_rate_limit_retry
def test_a_persistent_rate_limit_fails_after_crewais_three_attempts(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.reply(RateLimitError(retry_after=30), times=3)
    run = flows.run(StructuredFlow, raise_on_error=False)
    assert isinstance(run.error, RateLimitError)
    assert len(fake_llm.calls) == 3
    assert flows.clock.monotonic() == 60.0  # Retry-After honoured twice


def test_streamed_replies_emit_chunk_events_and_return_the_text(flows: Any, fake_llm: Any) -> None:
    chunks: list[str] = []

    def sink(source: Any, event: Any) -> None:
        if isinstance(event, LLMStreamChunkEvent):
            chunks.append(event.chunk)

    fake_llm.reply(stream(["Hel", "lo ", "world"], interval=0.5))
    token = add_stream_sink(sink)
    try:
        run = flows.run(HiFlow)
    finally:
        reset_stream_sinks(token)
    assert chunks == ["Hel", "lo ", "world"]
    assert run.output == "Hello world"
    assert flows.clock.monotonic() == 1.0
    assert run.trace.of_kind("llm.call")[0].get("chunks") == "3"


class StreamingLLMFlow(Flow):  # type: ignore[type-arg]
    @start()
    def ask(self) -> Any:
        return LLM(model="gpt-4o-mini", stream=True).call("hi?")


def test_an_llm_built_to_stream_keeps_its_flag_under_the_fake(flows: Any, fake_llm: Any) -> None:
    """LLM(..., stream=True) routed to the fake still streams: its call's events say
    so (a flight replay compares the flag), and a scripted text comes as a chunk."""
    seen: list[Any] = []

    def sink(source: Any, event: Any) -> None:
        if getattr(event, "type", "") in ("llm_call_started", "llm_stream_chunk"):
            seen.append((event.type, getattr(event, "stream", None)))

    fake_llm.reply("hello")
    token = add_stream_sink(sink)
    try:
        run = flows.run(StreamingLLMFlow)
    finally:
        reset_stream_sinks(token)
    assert run.output == "hello"
    assert seen[0] == ("llm_call_started", True)
    assert ("llm_stream_chunk", None) in seen
    assert LLM(model="gpt-4o-mini").stream is not True  # a plain LLM does not stream


class RaceFlow(Flow):  # type: ignore[type-arg]
    @start()
    async def via_a(self) -> Any:
        return await LLM("model-a").acall("a?")

    @start()
    async def via_b(self) -> Any:
        return await LLM("model-b").acall("b?")

    @listen(or_(via_a, via_b))
    def first(self, result: Any) -> Any:
        self.state["winner"] = result
        return result


@pytest.mark.parametrize(("latency_a", "latency_b", "winner"), [(50, 10, "B"), (10, 50, "A")])
def test_virtual_latency_decides_races_without_wall_time(
    flows: Any, fake_llm: Any, latency_a: float, latency_b: float, winner: str
) -> None:
    fake_llm.on(model="model-a").reply("A", latency=latency_a)
    fake_llm.on(model="model-b").reply("B", latency=latency_b)
    started = wall_clock()
    run = flows.run(RaceFlow)
    assert run.state["winner"] == winner
    assert flows.clock.monotonic() == 50.0
    assert wall_clock() - started < 25  # a real wait would take 50 s


@crewai_114_differs("Flow.usage_metrics is new in crewai 1.15")
def test_llm_events_feed_the_flows_usage_metrics(flows: Any, fake_llm: Any) -> None:
    fake_llm.reply("x" * 40, usage={"prompt_tokens": 7})
    fake_llm.reply("again")
    run = flows.run(AskFlow)
    usage = run.flow.usage_metrics
    assert usage.successful_requests == 2
    assert usage.prompt_tokens == 7 + 2  # "Again" -> 5 chars -> 2 tokens
    assert usage.completion_tokens == 10 + 2


def test_ordered_replies_and_rules_together(flows: Any, fake_llm: Any) -> None:
    fake_llm.reply("first in order")
    fake_llm.on(model="gpt-4o-mini").reply("from the rule")
    run = flows.run(AskFlow)
    assert run.method_outputs == ["first in order", "from the rule"]


def test_an_unscripted_call_fails_at_once_with_the_line_to_add(flows: Any, fake_llm: Any) -> None:
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(ResearchFlow)
    assert str(caught.value) == (
        "pytest-flows: unscripted LLM call #1: no scripted reply matches it.\n"
        "  caller: flow=ResearchFlow method=research agent=Researcher purpose=agent "
        "model=gpt-4o\n"
        "  prompt (last user message):\n"
        "    | \n"
        "    | Current Task: Research AI agents\n"
        '  tools: search, fetch (reply call_tool("search", ...) to call one)\n'
        "  script: empty (nothing was scripted on fake_llm)\n"
        "Add this line to the test to answer it:\n"
        '    fake_llm.on(agent="Researcher").reply("...")'
    )
    assert TOOL_LOG == []


def test_an_unscripted_structured_call_suggests_a_fitting_reply(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(method="elsewhere").reply("never", optional=True)  # the waiting rule
    line = _line_of("# the waiting rule")
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(StructuredFlow)
    assert str(caught.value).splitlines()[-5:] == [
        "  response model: Report",
        "  script: 1 waiting reply(s), none matches:",
        f'    fake_llm.on(method="elsewhere").reply("never")  [test_fake_llm.py:{line}, '
        "used 0 of 1]",
        "Add this line to the test to answer it:",
        '    fake_llm.on(method="ask").reply({"title": "...", "score": 0})',
    ]


def _line_of(text: str) -> int:
    source = Path(__file__).read_text().splitlines()
    return next(
        i for i, line in enumerate(source, start=1) if text in line and "_line_of" not in line
    )


TEMPLATE = Path(crewai.__file__).parent / "flow" / "templates" / "flow_definition_example.yaml"


@needs_declarative_flows
def test_declarative_flows_agents_run_for_real_on_the_fake(flows: Any, fake_llm: Any) -> None:
    from crewai.flow.flow import Flow as DeclaredFlow

    flow = DeclaredFlow.from_declaration(contents=TEMPLATE.read_text())
    fake_llm.on(agent="Research analyst").reply("Findings: orchestration matters.")
    fake_llm.on(agent="Strategy reviewer").reply("Solid. needs_followup: false")
    fake_llm.on(agent="Follow-up router").reply("done")

    run = flows.run(flow)

    assert run.trace.names("router.chose") == ["route_followup"]
    assert run.trace.of_kind("router.chose")[0].get("label") == "done"
    assert "write_followup" not in run.trace.names("method.started")
    researcher = fake_llm.calls[0]
    assert "AI agent orchestration" in json.dumps(researcher.messages)


@pytest.fixture
def SupportFlow() -> type:
    conversational = pytest.importorskip(
        "crewai.flow.conversational", reason=needs_conversational_flows
    )

    @conversational.ConversationConfig(llm="gpt-4o-mini")
    class SupportFlow(Flow):  # type: ignore[type-arg]
        @listen("refund")
        def start_refund(self) -> str:
            return "Refund started."

    return SupportFlow


def test_a_conversation_config_llm_routes_the_turn(
    flows: Any, fake_llm: Any, SupportFlow: type
) -> None:
    fake_llm.on(purpose="router", prompt="money back").reply({"intent": "refund"})

    reply = SupportFlow().handle_turn("I want my money back", session_id="s1")

    assert reply == "Refund started."
    router_call = fake_llm.calls[0]
    assert router_call.caller == {
        "flow": "SupportFlow",
        "method": "route_conversation",
        "purpose": "router",
        "model": "gpt-4o-mini",
    }
    assert router_call.prompt == "I want my money back"
    assert "refund" in router_call.data["routes"]


def test_an_unscripted_router_call_suggests_a_route(
    flows: Any, fake_llm: Any, SupportFlow: type
) -> None:
    with pytest.raises(UnscriptedRequest) as caught:
        SupportFlow().handle_turn("hello?", session_id="s2")
    lines = str(caught.value).splitlines()
    assert lines[1:4] == [
        "  caller: flow=SupportFlow method=route_conversation purpose=router model=gpt-4o-mini",
        "  prompt (the user's message):",
        "    | hello?",
    ]
    assert lines[-1] == (
        '    fake_llm.on(method="route_conversation", purpose="router")'
        '.reply({"intent": "converse"})'
    )


TRIAGE = """
schema: crewai.flow/v1
name: Triage
methods:
  classify:
    start: true
    do:
      call: agent
      with:
        role: Triage
        goal: Classify tickets
        backstory: Fast.
        llm: gpt-4o-mini
        input: "Ticket: the printer is on fire"
"""


@needs_declarative_flows
def test_a_declarative_llm_key_resolves_to_the_fake(flows: Any, fake_llm: Any) -> None:
    from crewai.flow.flow import Flow as DeclaredFlow

    fake_llm.on(agent="Triage", model="gpt-4o-mini").reply("urgent")

    run = flows.run(DeclaredFlow.from_declaration(contents=TRIAGE))

    assert run.output.raw == "urgent"
    assert "Current Task: Ticket: the printer is on fire" in fake_llm.calls[0].prompt


class YamlRoleFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        # What `role: >` in agents.yaml gives: a trailing newline.
        agent = Agent(role="Researcher\n", goal="Find", backstory="Careful.", llm="gpt-4o")
        return str(agent.kickoff("Research AI agents").raw)


def test_roles_match_with_surrounding_whitespace_stripped(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(agent="Researcher").reply("found it")
    assert flows.run(YamlRoleFlow).output == "found it"
    assert fake_llm.calls[0].caller["agent"] == "Researcher"


def test_the_most_specific_rule_answers_whatever_the_order_written(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.on(method="research").reply("method only", times=ALWAYS, optional=True)
    fake_llm.on(method="research", agent="Researcher").reply("method and agent")
    assert flows.run(YamlRoleFlow).output == "method and agent"


class ReactFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        # A model crewai drives with its text loop (Thought / Action / Action Input).
        agent = Agent(
            role="Researcher",
            goal="Find sources",
            backstory="Careful.",
            llm="ollama/llama2",
            tools=[search, fetch],
        )
        return str(agent.kickoff("Research AI agents").raw)


def test_a_react_agents_scripted_tool_call_runs_the_real_tool(flows: Any, fake_llm: Any) -> None:
    fake_llm.text_tools()
    fake_llm.on(agent="Researcher").reply(
        call_tool("search", query="AI agents"),
        call_tool("fetch", url="https://example.org/a"),
        "Agents plan, act and observe.",
    )

    run = flows.run(ReactFlow)

    assert run.output == "Agents plan, act and observe."
    assert TOOL_LOG == [("search", "AI agents"), ("fetch", "https://example.org/a")]
    first, second, third = fake_llm.calls
    assert first.tools == ["search", "fetch"]  # read from crewai's ReAct prompt
    assert second.messages[-2]["content"].endswith(
        'Action: search\nAction Input: {"query": "AI agents"}\nObservation: 3 results for AI agents'
    )
    assert "Observation: <html>https://example.org/a</html>" in third.messages[-2]["content"]
    assert fake_llm.tool_calls.match(["search", "fetch"])
    assert [e.name for e in run.trace.of_kind("tool.used")] == ["search", "fetch"]


def test_a_react_call_to_a_tool_the_agent_lacks_says_which_it_has(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.text_tools("ollama/llama2")
    fake_llm.reply(call_tool("delete_everything"))
    with pytest.raises(ScriptReplyError, match="it offered: search, fetch"):
        flows.run(ReactFlow)


def test_auto_drives_a_react_agent_through_each_tool(flows: Any, fake_llm: Any) -> None:
    fake_llm.text_tools()
    fake_llm.auto()
    assert flows.run(ReactFlow).output == "auto reply"
    assert TOOL_LOG == [("search", "query"), ("fetch", "url")]


def test_native_agents_keep_function_calling_when_one_model_uses_text_tools(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.text_tools("ollama/llama2")
    fake_llm.on(agent="Researcher").reply(call_tool("search", query="x"), "done")
    assert flows.run(ResearchFlow).output == "done"  # gpt-4o: native tool calls
    assert fake_llm.calls[1].messages[-1]["role"] == "tool"
