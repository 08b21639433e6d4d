"""Tests a user would write for the first-flow guide's GuideCreatorFlow (guide_flow.py).

- the fakes see what the model sees: the outline call's ``response_format`` (so
  ``auto()`` answers with a valid ``GuideOutline``), and the search tool by the name
  the model and the trace use (``search_the_internet_with_serper``);
- a golden file of the run that pauses for the outline review: recorded at seed 0,
  ``pytest examples/guide_creator --flows-seed 3`` replays it the same;
- the YAML declaration runs too, so ``pytest examples/guide_creator --flows-cov``
  reports the class and its declaration (``GuideCreatorFlow``), item for item.
"""

from __future__ import annotations

import pytest
from crewai.flow.async_feedback import HumanFeedbackPending
from crewai.flow.flow import Flow
from guide_flow import DECLARATION, GuideCreatorFlow, GuideOutline, Section

from pytest_flows import call_tool

INPUTS = {"topic": "testing AI flows", "audience_level": "beginner"}
SEARCH = "search_the_internet_with_serper"  # what the trace's `tool used` line shows


def test_auto_answers_the_outline_with_its_response_format(flows, fake_llm, fake_tools, human):
    fake_llm.auto()  # the outline call gets a valid GuideOutline, agents call each tool once
    fake_tools.on(SEARCH).reply("3 results about testing", times="always")
    human.answer(outcome="approved")

    run = flows.run(GuideCreatorFlow, inputs=INPUTS)

    assert isinstance(run.state.guide_outline, GuideOutline)
    assert fake_llm.calls[0].response_model is GuideOutline
    assert run.output.startswith(f"# {run.state.guide_outline.title}")
    assert set(run.trace.names("tool.used")) == {SEARCH}


def test_the_writer_searches_before_writing(flows, fake_llm, fake_tools, human):
    outline = GuideOutline(
        title="Testing AI Flows",
        introduction="Why test flows.",
        target_audience="beginners",
        sections=[Section(title="Fakes", description="Scripted models and tools")],
        conclusion="Test the edges, run the real flow.",
    )
    fake_llm.on(method="create_guide_outline").reply(outline)
    fake_llm.on(agent="Educational Content Writer").reply(
        call_tool(SEARCH, search_query="scripted LLM tests"), "Fakes script the edges."
    )
    fake_tools.on(SEARCH).reply("pytest-flows: scripted models and tools")
    human.on(method="review_outline").answer("looks complete", outcome="approved")

    run = flows.run(GuideCreatorFlow, inputs=INPUTS)

    assert run.output_of("create_guide_outline") == outline
    assert run.state.sections_content == {"Fakes": "Fakes script the edges."}
    assert fake_tools.calls.match(
        [{"name": SEARCH, "arguments": {"search_query": "scripted LLM tests"}}]
    )
    assert fake_llm.calls[-1].messages[-1]["content"] == "pytest-flows: scripted models and tools"


def test_a_rejected_outline_starts_over(flows, fake_llm, human):
    fake_llm.auto()
    human.answer("too shallow", outcome="rejected")
    run = flows.run(GuideCreatorFlow, inputs=INPUTS)
    assert run.output.startswith("outline rejected")


def test_the_declaration_runs(flows, fake_llm, human):
    fake_llm.auto()
    human.answer(outcome="rejected")
    run = flows.run(Flow.from_declaration(path=DECLARATION))
    assert run.output_of("start_over") == "outline rejected"


@pytest.mark.golden
def test_the_outline_waits_for_its_review(flows, flow_store, fake_llm, human):
    fake_llm.auto()
    human.pause()  # the reviewer has not answered yet

    paused = flows.run(GuideCreatorFlow, inputs=INPUTS)

    assert isinstance(paused.output, HumanFeedbackPending)
    assert paused.output.context.method_name == "review_outline"
