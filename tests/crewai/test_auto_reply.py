"""fake_llm.auto(): smoke tests of whole crewai flows with one line of script."""

from __future__ import annotations

import enum
from typing import Any, Literal
from unittest.mock import ANY

import pytest
from crewai import LLM, Agent
from crewai.flow.flow import Flow, listen, router, start
from crewai.tools import tool
from pydantic import BaseModel, Field

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.replies import call_tool
from pytest_flows._internal.fakes.trajectory import TrajectoryMismatch

TOOL_LOG: list[tuple[str, Any]] = []


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Source(BaseModel):
    url: str
    pages: int = Field(ge=1)


class Report(BaseModel):
    title: str
    priority: Priority
    verdict: Literal["publish", "revise"]
    sources: list[Source]
    score: float = Field(ge=0, le=10)
    tags: list[str] = []
    summary: str | None = None


class ReportFlow(Flow):  # type: ignore[type-arg]
    @start()
    def draft(self) -> Any:
        return LLM("gpt-4o").call("Write a report", response_model=Report)

    @router(draft)
    def review(self, report: Report) -> str:
        return report.verdict

    @listen("publish")
    def ship(self) -> str:
        return "published"

    @listen("revise")
    def rework(self) -> str:
        return "revised"


@tool("search")
def search(query: str, limit: int = 3) -> str:
    """Search the web."""
    TOOL_LOG.append(("search", {"query": query, "limit": limit}))
    return f"{limit} results for {query}"


@tool("fetch")
def fetch(url: str) -> str:
    """Fetch one page."""
    TOOL_LOG.append(("fetch", {"url": url}))
    return f"<html>{url}</html>"


class ToolFlow(Flow):  # type: ignore[type-arg]
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

    @listen(research)
    def summarize(self, notes: str) -> str:
        return str(LLM("gpt-4o-mini").call(f"Summarize: {notes}"))


@pytest.fixture(autouse=True)
def _clear_tool_log() -> None:
    TOOL_LOG.clear()


def test_a_structured_output_flow_runs_on_auto_alone(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()

    run = flows.run(ReportFlow)

    report = run.method_outputs[0]
    assert isinstance(report, Report)
    assert report.priority is Priority.LOW and report.verdict == "publish"
    assert report.sources == [Source(url="url", pages=1)]
    assert report.score == 0.0
    assert run.output == "published"
    assert [c.response_model for c in fake_llm.calls] == [Report]


def test_the_seed_picks_other_enum_members_and_so_other_branches(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto(seed=1)
    run = flows.run(ReportFlow)
    assert run.method_outputs[0].priority is Priority.HIGH
    assert run.output == "revised"


def test_a_tool_using_agent_calls_each_tool_once_then_answers(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()

    run = flows.run(ToolFlow)

    assert TOOL_LOG == [("search", {"query": "query", "limit": 0}), ("fetch", {"url": "url"})]
    assert run.output == "auto reply"
    agent_calls = [c for c in fake_llm.calls if c.caller.get("agent") == "Researcher"]
    assert len(agent_calls) == 3
    assert agent_calls[1].messages[-1]["content"] == "0 results for query"
    assert [c.caller["method"] for c in fake_llm.calls] == [
        "research",
        "research",
        "research",
        "summarize",
    ]
    assert run.trace.of_kind("llm.call")[0].get("tools") == 'search({"limit": 0, "query": "query"})'


def test_scripted_rules_and_replies_win_over_auto(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()
    fake_llm.on(method="summarize").reply("my summary")
    fake_llm.reply("my own research")  # a plain reply wins too

    run = flows.run(ToolFlow)

    assert run.output == "my summary"
    assert TOOL_LOG == []
    assert [c.entry.label for c in fake_llm.calls] == [
        'fake_llm.reply("my own research")',
        'fake_llm.on(method="summarize").reply("my summary")',
    ]


def test_auto_is_never_reported_unused(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()
    assert fake_llm.script.unused() == []


def test_auto_twice_or_with_a_bad_seed_is_a_usage_error(fake_llm: Any) -> None:
    with pytest.raises(FlowsUsageError, match="whole number"):
        fake_llm.auto(seed="1")
    fake_llm.auto()
    with pytest.raises(FlowsUsageError, match="already on"):
        fake_llm.auto(seed=2)


def test_the_trajectory_of_an_auto_run_matches_in_any_order(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()
    flows.run(ToolFlow)

    assert fake_llm.tool_calls.match(["fetch", call_tool("search", query=ANY)], mode="unordered")
    assert fake_llm.calls.match([{"method": "summarize", "model": "gpt-4o-mini"}], mode="superset")
    with pytest.raises(TrajectoryMismatch, match="expected but not found: #1 delete"):
        fake_llm.tool_calls.match(["delete"], mode="superset")
