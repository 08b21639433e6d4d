"""Copied unchanged from examples/ at 9da8b68 (the first round).

The tests a user writes for the research pipeline.

Two ways to test the crew step, both shown here:

* ``fake_crews`` scripts the crew's result: fast, and the test says exactly
  which brief the router sees. Use it for everything downstream of the crew.
* ``fake_crews.on(...).run_for_real()`` (or no ``fake_crews`` at all) runs the
  real crew, its agents answering from ``fake_llm``. Use it to test the crew
  itself: its task wiring, its prompts, its structured output.
"""

from __future__ import annotations

from research_flow import Brief, ResearchFlow

from pytest_flows.replies import RateLimitError, call_tool

CONFIDENT = Brief(
    summary="Agents plan, act and observe.",
    confidence=0.9,
    sources=["https://example.org/agents"],
)
SHAKY = Brief(summary="Unclear.", confidence=0.3, sources=[])


def script_the_researcher(fake_llm):
    fake_llm.on(agent="Researcher").reply(
        call_tool("search_web", query="agents"),
        call_tool("fetch_page", url="https://example.org/agents"),
        "Agents loop: plan, call tools, observe (https://example.org/agents).",
    )


def test_the_researcher_uses_its_tools_and_the_crew_gets_its_notes(flows, fake_llm, fake_crews):
    script_the_researcher(fake_llm)
    fake_crews.on(crew="assessment").reply(SHAKY)

    flows.run(ResearchFlow)

    _search, fetch, answer = fake_llm.calls[:3]
    assert fetch.messages[-1]["content"] == "https://example.org/agents"  # search_web really ran
    assert answer.messages[-1]["content"] == "Agents loop: plan, call tools, observe, answer."
    assert fake_crews.inputs("assessment") == [
        {
            "topic": "AI agents",
            "notes": "Agents loop: plan, call tools, observe (https://example.org/agents).",
        }
    ]


def test_a_confident_brief_is_published(flows, fake_llm, fake_crews):
    script_the_researcher(fake_llm)
    fake_crews.on(crew="assessment").reply(CONFIDENT)
    fake_llm.on(method="write_post").reply("Agents are loops. They plan. They act.")

    run = flows.run(ResearchFlow, inputs={"topic": "AI agents"})

    assert run.output == "Agents are loops. They plan. They act."
    assert run.state.brief == CONFIDENT
    assert run.trace.names("router.chose") == ["gate"]
    assert run.trace.of_kind("router.chose")[0].get("label") == "publish"


def test_a_shaky_brief_sends_the_research_back(flows, fake_llm, fake_crews):
    script_the_researcher(fake_llm)
    fake_crews.on(crew="assessment").reply({"summary": "Thin.", "confidence": 0.3, "sources": []})

    run = flows.run(ResearchFlow)

    assert run.output == "Not enough evidence on AI agents; research again."
    assert "write_post" not in run.trace.names("method.started")


def test_the_real_crew_on_the_fake_llm(flows, fake_llm):
    script_the_researcher(fake_llm)
    fake_llm.on(agent="Analyst").reply("Strong primary source; one only.")
    fake_llm.on(agent="Editor").reply(CONFIDENT)  # validated against the task's Brief
    fake_llm.on(method="write_post").reply("Post.")

    run = flows.run(ResearchFlow)

    assert run.state.brief == CONFIDENT
    editor = fake_llm.calls[4]  # after the researcher's three calls and the analyst's
    assert "Strong primary source" in str(editor.messages)  # the analysis reached the editor
    assert editor.response_model is Brief
    assert editor.caller["task"] == "condense"


def test_a_rate_limit_costs_no_wall_time(flows, fake_llm, fake_crews):
    fake_llm.on(agent="Researcher").reply(RateLimitError(retry_after=20))
    script_the_researcher(fake_llm)
    fake_crews.reply(SHAKY)

    flows.run(ResearchFlow)

    assert flows.clock.monotonic() == 20.0  # crewai retried after the Retry-After


def test_the_trace(flows, fake_llm, fake_crews, snapshot):
    script_the_researcher(fake_llm)
    fake_crews.reply(CONFIDENT)
    fake_llm.on(method="write_post").reply("Post.")

    assert flows.run(ResearchFlow).trace.render() == snapshot
