"""FlowRun.usage and budgets on real crewai flows."""

from __future__ import annotations

from typing import Any

import pytest
from crewai import LLM, Agent
from crewai.flow.flow import Flow, listen, or_, router, start
from crewai.tools import tool

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.replies import call_tool
from pytest_flows._internal.fakes.script import ALWAYS
from pytest_flows._internal.fakes.usage import BudgetExceeded, MethodUsage


@tool("lookup")
def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term}: found"


class RouterLoopFlow(Flow):  # type: ignore[type-arg]
    """A router that asks the LLM until it says "done" - the kind of loop that runs away."""

    @start()
    def begin(self) -> None:
        self.state["rounds"] = 0

    @router(or_(begin, "retry"))
    def route(self) -> str:
        self.state["rounds"] += 1
        verdict = str(LLM("gpt-4o").call("Done yet?"))
        return "done" if verdict == "done" or self.state["rounds"] >= 50 else "retry"

    @listen("done")
    def report(self) -> int:
        return int(self.state["rounds"])


class ToolAgentFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        agent = Agent(role="Researcher", goal="g", backstory="b", llm="gpt-4o", tools=[lookup])
        return str(agent.kickoff("Look up agents").raw)

    @listen(research)
    def write(self, notes: str) -> str:
        return str(LLM("gpt-4o").call(f"Write about {notes}"))


def test_usage_counts_llm_calls_tokens_tool_calls_and_latency_by_method(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.on(agent="Researcher").reply(call_tool("lookup", term="agents"), latency=3)
    fake_llm.on(agent="Researcher").reply(
        "notes", usage={"prompt_tokens": 100, "completion_tokens": 20}
    )
    fake_llm.on(method="write").reply(
        "article", latency=5, usage={"prompt_tokens": 7, "completion_tokens": 3}
    )

    run = flows.run(ToolAgentFlow)

    research = run.usage.by_method["research"]
    assert (research.llm_calls, research.tool_calls, research.virtual_seconds) == (2, 1, 3.0)
    assert research.tokens > 120  # the tool-call turn's estimate plus the scripted 120
    assert run.usage.by_method["write"] == MethodUsage(
        llm_calls=1, tokens=10, tool_calls=0, virtual_seconds=5.0
    )
    assert run.usage.llm_calls == 3 and run.usage.tool_calls == 1
    assert run.usage.tokens == research.tokens + 10
    assert run.usage.virtual_seconds == 8.0


def test_a_runaway_router_loop_fails_its_budget_naming_the_key_and_method(
    flows: Any, fake_llm: Any
) -> None:
    # A model that never says "done": the loop would go on to its 50-round guard.
    fake_llm.on(method="route").reply("not yet", times=ALWAYS)

    with pytest.raises(BudgetExceeded) as caught:
        # Like a script error, a blown budget fails the test even with raise_on_error=False.
        flows.run(RouterLoopFlow, budget={"llm_calls": 10}, raise_on_error=False)

    # Stopped at the 11th call, which failed its budget before taking a reply; not at 50.
    assert len(fake_llm.calls) == 10
    lines = str(caught.value).splitlines()
    assert lines[0] == (
        "pytest-flows: budget exceeded: the run used llm_calls=11, over its budget of 10; "
        "most in 'route' (llm_calls=11)."
    )
    assert lines[-1] == (
        "Find why the flow used that much, or raise the limit "
        "(budget={'llm_calls': 10}) if it is expected."
    )
    assert "  route: llm_calls=11 tokens=" in str(caught.value)


def test_a_per_method_budget_names_the_method(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(method="route").reply("not yet", "done", optional=True)
    with pytest.raises(BudgetExceeded) as caught:
        flows.run(RouterLoopFlow, budget={"by_method": {"route": {"llm_calls": 1}}})
    assert str(caught.value).splitlines()[0] == (
        "pytest-flows: budget exceeded: method 'route' used llm_calls=2, over its budget of 1."
    )


@pytest.mark.flows(budget={"tool_calls": 1})
def test_a_budget_on_the_marker_catches_tools_invoked_twice(flows: Any, fake_llm: Any) -> None:
    # What crewAI#3462 reported after an upgrade: every tool invoked twice.
    fake_llm.on(agent="Researcher").reply(
        call_tool("lookup", term="a"), call_tool("lookup", term="a"), "notes"
    )
    fake_llm.on(method="write").reply("article")
    with pytest.raises(
        BudgetExceeded,
        match=r"the run used tool_calls=2, over its budget of 1; "
        r"most in 'research' \(tool_calls=2\)",
    ):
        flows.run(ToolAgentFlow)


@pytest.mark.flows(budget={"tool_calls": 0})
def test_a_run_budget_overrides_the_markers_key_by_key(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(agent="Researcher").reply(call_tool("lookup", term="a"), "notes")
    fake_llm.on(method="write").reply("article")
    run = flows.run(ToolAgentFlow, budget={"tool_calls": 1, "llm_calls": 3})
    assert run.output == "article"


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ({"calls": 3}, "'calls' is not something a budget caps; use llm_calls, tokens"),
        ({"llm_calls": -1}, r"budget\['llm_calls'\]=-1 is not a limit"),
        ({"llm_calls": "3"}, r"budget\['llm_calls'\]='3' is not a limit"),
        ([("llm_calls", 3)], "budget=.* is a dict"),
        ({"by_method": {"route": 3}}, r"budget\['by_method'\]\['route'\] is a dict of limits"),
    ],
)
def test_a_bad_budget_is_a_usage_error(flows: Any, budget: Any, message: str) -> None:
    with pytest.raises(FlowsUsageError, match=message):
        flows.run(ToolAgentFlow, budget=budget)


@pytest.mark.asyncio
async def test_arun_takes_a_budget_too(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(method="route").reply("not yet", "done", optional=True)
    with pytest.raises(BudgetExceeded, match="the run used llm_calls=2, over its budget of 1"):
        await flows.arun(RouterLoopFlow, budget={"llm_calls": 1})


def test_tool_calls_are_judged_when_the_run_ends(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(agent="Researcher").reply(call_tool("lookup", term="a"), "notes")
    fake_llm.on(method="write").reply("article")
    with pytest.raises(BudgetExceeded, match="the run used tool_calls=1, over its budget of 0"):
        flows.run(ToolAgentFlow, budget={"tool_calls": 0})
    assert [c.reply for c in fake_llm.calls][-1] == "article"  # it ran to the end first


def test_a_run_that_fails_on_its_own_keeps_its_own_error(flows: Any, fake_llm: Any) -> None:
    fake_llm.on(agent="Researcher").reply(call_tool("lookup", term="a"), "notes")
    fake_llm.on(method="write").reply(ValueError("provider down"))
    run = flows.run(ToolAgentFlow, budget={"tool_calls": 0}, raise_on_error=False)
    assert isinstance(run.error, ValueError)


def test_a_scripted_tools_latency_counts_for_its_method_and_its_budget(
    flows: Any, fake_llm: Any, fake_tools: Any
) -> None:
    # Issue 29, B2: the tool's latency was in the run's total but no method's.
    fake_tools.on("lookup").reply("agents: scripted", latency=7)
    fake_llm.on(agent="Researcher").reply(call_tool("lookup", term="agents"), "notes")
    fake_llm.on(method="write").reply("article")

    run = flows.run(ToolAgentFlow)

    assert run.usage.by_method["research"].virtual_seconds == 7.0
    assert run.usage.virtual_seconds == 7.0
    fake_tools.on("lookup").reply("agents: scripted", latency=7)
    fake_llm.on(agent="Researcher").reply(call_tool("lookup", term="agents"), optional=True)
    fake_llm.on(agent="Researcher").reply("notes", optional=True)
    with pytest.raises(BudgetExceeded, match=r"method 'research' used virtual_seconds=7"):
        flows.run(ToolAgentFlow, budget={"by_method": {"research": {"virtual_seconds": 5}}})
    fake_llm.allow_unused()
