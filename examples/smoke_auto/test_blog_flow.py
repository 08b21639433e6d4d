"""Smoke tests with ``fake_llm.auto()``, budgets and trajectory checks."""

from __future__ import annotations

from unittest.mock import ANY

import pytest
from blog_flow import BlogFlow, Outline, Tone

from pytest_flows import BudgetExceeded, call_tool


def test_the_whole_pipeline_runs_on_auto_replies(flows, fake_llm):
    fake_llm.auto()

    run = flows.run(BlogFlow)

    assert not run.failed
    assert isinstance(run.state.outline, Outline)
    assert run.state.outline.tone is Tone.FRIENDLY  # seed 0: the first enum member
    assert run.output == "auto reply"  # seed 0: "publish", so write() ran
    # The researcher called each of its tools once (the real tools ran), then answered.
    assert fake_llm.tool_calls.match(
        [call_tool("search_web", query=ANY), call_tool("fetch_page", url=ANY)]
    )


def test_another_seed_takes_the_other_branch(flows, fake_llm):
    fake_llm.auto(seed=1)
    assert flows.run(BlogFlow).output == "sent back to the writer"


def test_scripted_lines_win_over_auto(flows, fake_llm):
    fake_llm.auto()
    fake_llm.on(method="review").reply({"decision": "rework", "notes": "too long"})
    assert flows.run(BlogFlow).output == "sent back to the writer"


def test_the_calls_that_matter_happen_whatever_their_order(flows, fake_llm):
    fake_llm.auto()
    flows.run(BlogFlow)
    assert fake_llm.calls.match(
        [{"method": "review", "model": "gpt-4o-mini"}, {"method": "write"}],
        mode="superset",
    )


@pytest.mark.flows(budget={"llm_calls": 6, "tool_calls": 2})
def test_the_pipeline_stays_within_its_budget(flows, fake_llm):
    fake_llm.auto()
    run = flows.run(BlogFlow)
    assert run.usage.llm_calls == 6
    assert run.usage.by_method["research"].tool_calls == 2


def test_a_research_loop_that_runs_away_fails_its_budget(flows, fake_llm):
    # Simulate a model that keeps searching: five searches before it answers.
    fake_llm.on(agent="Researcher").reply(
        *(call_tool("search_web", query=f"angle {i}") for i in range(5)), "notes"
    )
    fake_llm.auto()
    with pytest.raises(BudgetExceeded, match="method 'research' used tool_calls=5"):
        flows.run(BlogFlow, budget={"by_method": {"research": {"tool_calls": 2}}})
