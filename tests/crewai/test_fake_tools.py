"""fake_tools on real crewai agents: scripted results through crewai's own tool path."""

from __future__ import annotations

from typing import Any

import pytest
from crewai import Agent, Crew, Task
from crewai.events.event_bus import crewai_event_bus
from crewai.events.types.tool_usage_events import ToolUsageFinishedEvent
from crewai.flow.flow import Flow, listen, start
from crewai.tools import BaseTool, tool
from pydantic import BaseModel

from pytest_flows._internal.fakes.replies import call_tool
from pytest_flows._internal.fakes.script import UnscriptedRequest

REAL_CALLS: list[str] = []


@tool("search")
def search(query: str) -> str:
    """Search the web."""
    REAL_CALLS.append(f"search:{query}")
    return f"real results for {query}"


class WeatherArgs(BaseModel):
    city: str


class WeatherTool(BaseTool):
    name: str = "weather"
    description: str = "Today's weather in a city."
    args_schema: type[BaseModel] = WeatherArgs

    def _run(self, city: str) -> str:
        REAL_CALLS.append(f"weather:{city}")
        return f"real weather in {city}"


def researcher(*tools: Any, max_usage: int | None = None) -> Agent:
    return Agent(
        role="Researcher", goal="Find", backstory="Careful.", llm="gpt-4o", tools=list(tools)
    )


class SearchFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        return str(researcher(search, WeatherTool()).kickoff("Research").raw)


class ResilientFlow(Flow):  # type: ignore[type-arg]
    """Calls a tool directly and falls back when it fails."""

    @start()
    def look_up(self) -> str:
        try:
            return str(search.run(query="agents"))
        except TimeoutError as exc:
            return f"fallback ({exc})"

    @listen(look_up)
    def report(self, found: str) -> str:
        return f"report: {found}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    REAL_CALLS.clear()


def test_a_scripted_result_reaches_the_agent_through_crewais_tool_path(
    flows: Any, fake_llm: Any, fake_tools: Any
) -> None:
    fake_tools.on("search").reply("3 scripted results")
    fake_tools.on("weather", where=lambda r: r.data["arguments"]["city"] == "Oslo").reply("snow")
    fake_llm.on(agent="Researcher").reply(
        call_tool("search", query="AI"), call_tool("weather", city="Oslo"), "done"
    )
    finished: list[str] = []

    with crewai_event_bus.scoped_handlers():

        @crewai_event_bus.on(ToolUsageFinishedEvent)
        def _seen(source: Any, event: ToolUsageFinishedEvent) -> None:
            finished.append(f"{event.tool_name}={event.output}")

        run = flows.run(SearchFlow)

    assert run.output == "done"
    assert REAL_CALLS == []
    assert fake_llm.calls[1].messages[-1]["content"] == "3 scripted results"
    assert fake_llm.calls[2].messages[-1]["content"] == "snow"
    assert sorted(finished) == ["search=3 scripted results", "weather=snow"]
    assert fake_tools.calls.match(["search", {"name": "weather", "arguments": {"city": "Oslo"}}])
    assert fake_tools.calls[0].caller == {
        "tool": "search",
        "flow": "SearchFlow",
        "method": "research",
    }


def test_unscripted_tool_calls_run_the_real_tool_and_stay_in_the_ledger(
    flows: Any, fake_llm: Any, fake_tools: Any
) -> None:
    fake_tools.on("weather").reply("snow")
    fake_llm.on(agent="Researcher").reply(
        call_tool("search", query="AI"), call_tool("weather", city="Oslo"), "done"
    )
    flows.run(SearchFlow)
    assert REAL_CALLS == ["search:AI"]
    assert [(c.caller["tool"], c.entry is not None, c.reply) for c in fake_tools.calls] == [
        ("search", False, "real results for AI"),  # the real tool's result, in the ledger
        ("weather", True, "snow"),
    ]


def test_strict_fails_on_an_unscripted_tool_call_with_the_line_to_add(
    flows: Any, fake_tools: Any
) -> None:
    fake_tools.strict()
    with pytest.raises(UnscriptedRequest) as caught:
        flows.run(ResilientFlow)
    lines = str(caught.value).splitlines()
    assert lines[1] == "  caller: tool=search flow=ResilientFlow method=look_up"
    assert lines[2] == "  arguments: {'query': 'agents'}"
    assert lines[-1] == '    fake_tools.on("search").reply("...")'
    assert REAL_CALLS == []


def test_an_injected_tool_failure_is_handled_by_the_flow(flows: Any, fake_tools: Any) -> None:
    fake_tools.on("search").error(TimeoutError("search timed out"), latency=10)
    run = flows.run(ResilientFlow)
    assert run.output == "report: fallback (search timed out)"
    assert flows.clock.monotonic() == 10.0
    assert isinstance(fake_tools.calls[0].error, TimeoutError)


def test_an_injected_failure_reaches_the_agent_as_crewai_reports_tool_errors(
    flows: Any, fake_llm: Any, fake_tools: Any
) -> None:
    fake_tools.on("search").error(ConnectionError("search is down"))
    fake_llm.on(agent="Researcher").reply(call_tool("search", query="AI"), "gave up")
    assert flows.run(SearchFlow).output == "gave up"
    assert "search is down" in fake_llm.calls[1].messages[-1]["content"]


def test_scripted_results_count_against_crewais_usage_limit(
    flows: Any, fake_llm: Any, fake_tools: Any
) -> None:
    limited = WeatherTool(max_usage_count=1)

    class LimitedFlow(Flow):  # type: ignore[type-arg]
        @start()
        def research(self) -> str:
            return str(researcher(limited).kickoff("Research").raw)

    fake_tools.on("weather").reply("sun")
    fake_llm.on(agent="Researcher").reply(
        call_tool("weather", city="Oslo"), call_tool("weather", city="Rome"), "done"
    )
    flows.run(LimitedFlow)
    assert len(fake_tools.calls) == 1  # crewai refused the second use before the body ran
    assert "usage limit" in fake_llm.calls[2].messages[-1]["content"]


def test_an_unused_scripted_result_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_unused(fake_tools):
            fake_tools.on("search").reply("never asked")
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*1 scripted tool result on fake_tools never used*"])


def test_tool_bodies_are_restored_after_the_test() -> None:
    assert not getattr(WeatherTool.__dict__["_run"], "__pytest_flows_fake__", False)
    assert search.run(query="x") == "real results for x"


def cached_crew() -> Crew:
    analyst = Agent(
        role="Researcher", goal="Find", backstory="Careful.", llm="gpt-4o", tools=[search]
    )
    task = Task(description="Research", expected_output="notes", agent=analyst)
    return Crew(name="cached", agents=[analyst], tasks=[task], cache=True)


class CachedCrewFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        return str(cached_crew().kickoff().raw)


def test_a_scripted_result_is_cached_by_crewai_like_a_real_one(
    flows: Any, fake_llm: Any, fake_tools: Any
) -> None:
    fake_tools.on("search").reply("3 scripted results")  # once: the repeat comes from the cache
    fake_llm.on(agent="Researcher").reply(
        call_tool("search", query="AI"), call_tool("search", query="AI"), "done"
    )
    assert flows.run(CachedCrewFlow).output == "done"
    assert len(fake_tools.calls) == 1
    assert fake_llm.calls[2].messages[-1]["content"] == "3 scripted results"


@tool("Search the internet with Serper")
def serper(search_query: str) -> str:
    """Search the internet."""
    REAL_CALLS.append(f"serper:{search_query}")
    return "real serper results"


class SerperFlow(Flow):  # type: ignore[type-arg]
    @start()
    def research(self) -> str:
        return str(researcher(serper).kickoff("Research").raw)


@pytest.mark.parametrize(
    "name", ["search_the_internet_with_serper", "Search the internet with Serper"]
)
def test_a_tool_is_scripted_by_the_name_the_trace_shows_or_by_its_declared_name(
    flows: Any, fake_llm: Any, fake_tools: Any, name: str
) -> None:
    fake_tools.on(name).reply("scripted serper results")
    fake_llm.on(agent="Researcher").reply(
        call_tool("search_the_internet_with_serper", search_query="AI"), "done"
    )
    run = flows.run(SerperFlow)
    assert REAL_CALLS == []
    assert fake_llm.calls[1].messages[-1]["content"] == "scripted serper results"
    assert run.trace.names("tool.used") == ["search_the_internet_with_serper"]
    assert fake_tools.calls.match(["search_the_internet_with_serper"])


def test_a_name_no_agent_tool_has_fails_listing_both_names_of_each_tool(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        from crewai import Agent
        from crewai.flow.flow import Flow, start
        from crewai.tools import tool
        from pytest_flows import call_tool

        @tool("Search the internet with Serper")
        def serper(search_query: str) -> str:
            '''Search the internet.'''
            return "real"

        class SerperFlow(Flow):
            @start()
            def research(self):
                agent = Agent(role="Researcher", goal="g", backstory="b", llm="gpt-4o",
                              tools=[serper])
                return str(agent.kickoff("Research").raw)

        def test_typo(flows, fake_llm, fake_tools):
            fake_tools.on("serper").reply("never asked")
            fake_llm.reply(call_tool("search_the_internet_with_serper", search_query="AI"), "done")
            flows.run(SerperFlow)
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            '*fake_tools.on("serper"): no tool the flow\'s agents have is named "serper".',
            "*The agents' tools (either name matches):",
            '*"Search the internet with Serper"  (also "search_the_internet_with_serper")',
        ]
    )
