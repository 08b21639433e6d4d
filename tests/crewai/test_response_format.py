"""``response_format`` on ``LLM(...)`` and on an agent's kickoff is the call's response
model for fake_llm: ``auto()`` fits it, a scripted reply is checked against it, and
``calls[i].response_model`` shows it (issue 29, B4)."""

from __future__ import annotations

from typing import Any

import pytest
from crewai import LLM, Agent
from crewai.flow.flow import Flow, start
from pydantic import BaseModel

from pytest_flows._internal.fakes.script import ScriptReplyError


class Section(BaseModel):
    title: str
    description: str


class GuideOutline(BaseModel):
    title: str
    sections: list[Section]


MESSAGES = [{"role": "user", "content": "Outline a guide on testing"}]

# Built at import, before the fake is bound: routed to it with its response_format.
MODULE_LLM = LLM(model="openai/gpt-4o-mini", response_format=GuideOutline)


class OutlineFlow(Flow):  # type: ignore[type-arg]
    @start()
    def outline(self) -> Any:
        return LLM(model="openai/gpt-4o-mini", response_format=GuideOutline).call(MESSAGES)


class AgentFlow(Flow):  # type: ignore[type-arg]
    @start()
    def outline(self) -> Any:
        agent = Agent(role="Planner", goal="Plan", backstory="Tidy.", llm="gpt-4o")
        return agent.kickoff("Outline a guide", response_format=GuideOutline).pydantic


def test_auto_fits_the_response_format_of_the_llm(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()
    run = flows.run(OutlineFlow)
    # crewai's native providers return the parsed model for response_format.
    assert isinstance(run.output, GuideOutline)
    assert fake_llm.calls[0].response_model is GuideOutline


def test_a_scripted_reply_is_checked_against_the_llms_response_format(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.reply({"title": "Testing"})  # no sections
    with pytest.raises(ScriptReplyError, match=r"asked for a GuideOutline.*sections"):
        flows.run(OutlineFlow)


def test_a_scripted_model_is_the_reply(flows: Any, fake_llm: Any) -> None:
    outline = GuideOutline(title="Testing", sections=[Section(title="a", description="b")])
    fake_llm.reply(outline)
    assert flows.run(OutlineFlow).output == outline


def test_an_llm_built_before_the_test_keeps_its_response_format(fake_llm: Any) -> None:
    fake_llm.auto()
    assert isinstance(MODULE_LLM.call(MESSAGES), GuideOutline)
    assert fake_llm.calls[0].response_model is GuideOutline


def test_the_litellm_fallback_answers_with_the_models_json_text(fake_llm: Any) -> None:
    fake_llm.reply({"title": "T", "sections": []})
    reply = LLM(model="openai/gpt-4o-mini", is_litellm=True, response_format=GuideOutline).call(
        MESSAGES
    )
    assert GuideOutline.model_validate_json(reply) == GuideOutline(title="T", sections=[])
    assert fake_llm.calls[0].response_model is GuideOutline


def test_the_same_model_without_response_format_still_answers_text(
    flows: Any, fake_llm: Any
) -> None:
    fake_llm.reply("plain")
    LLM(model="openai/gpt-4o-mini", response_format=GuideOutline)
    assert LLM(model="openai/gpt-4o-mini").call(MESSAGES) == "plain"
    assert fake_llm.calls[0].response_model is None


def test_auto_fits_an_agents_response_format(flows: Any, fake_llm: Any) -> None:
    fake_llm.auto()
    run = flows.run(AgentFlow)
    assert isinstance(run.output, GuideOutline)
    assert fake_llm.calls[-1].response_model is GuideOutline
