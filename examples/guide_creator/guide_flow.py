"""The guide creator flow of crewAI's "Build Your First Flow" guide
(https://docs.crewai.com/en/guides/flows/first-flow), with a human review of the
outline as on crewAI's "Human Feedback in Flows" page
(https://docs.crewai.com/en/learn/human-feedback-in-flows), and a writer agent
holding a search tool named as crewAI's ``SerperDevTool`` is
("Search the internet with Serper").

What differs from the guide, and why:

- The topic and audience come from ``kickoff(inputs=...)``; the guide asks for them
  with ``input()`` at the console.
- The guide parses the outline with ``json.loads(llm.call(...))``. On crewAI 1.15 an
  ``LLM(model="openai/...", response_format=GuideOutline)`` is the native OpenAI
  provider, which returns the parsed ``GuideOutline``, and ``json.loads`` of it raises
  ``TypeError`` (crewAI's LiteLLM fallback returns JSON text). This flow takes either.
- Nothing is written to ``output/`` (the guide writes ``output/guide_outline.json``
  relative to the working directory); the guide is the flow's output.
- The guide's ``ContentCrew`` (built from YAML) is one writer ``Agent`` here.

``guide_flow.yaml`` declares the same graph for ``Flow.from_declaration``.
"""

from __future__ import annotations

from pathlib import Path

from crewai import LLM, Agent
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback
from crewai.flow.persistence import persist
from crewai.tools import tool
from pydantic import BaseModel, Field

DECLARATION = Path(__file__).with_name("guide_flow.yaml")


class Section(BaseModel):
    title: str = Field(description="Title of the section")
    description: str = Field(description="Brief description of what the section should cover")


class GuideOutline(BaseModel):
    title: str = Field(description="Title of the guide")
    introduction: str = Field(description="Introduction to the topic")
    target_audience: str = Field(description="Description of the target audience")
    sections: list[Section] = Field(description="List of sections in the guide")
    conclusion: str = Field(description="Conclusion or summary of the guide")


class GuideCreatorState(BaseModel):
    id: str = ""
    topic: str = ""
    audience_level: str = ""
    guide_outline: GuideOutline | None = None
    sections_content: dict[str, str] = {}


@tool("Search the internet with Serper")
def search_internet(search_query: str) -> str:
    """Search the internet for a query and return the most relevant results."""
    # The real tool calls serper.dev; a test scripts it (fake_tools).
    raise ConnectionError("search_internet needs network access")


@persist()
class GuideCreatorFlow(Flow[GuideCreatorState]):
    """Flow for creating a comprehensive guide on any topic."""

    @start()
    def get_user_input(self) -> GuideCreatorState:
        return self.state

    @listen(get_user_input)
    def create_guide_outline(self, state: GuideCreatorState) -> GuideOutline:
        llm = LLM(model="openai/gpt-4o-mini", response_format=GuideOutline)
        messages = [
            {"role": "system", "content": "You are a helpful assistant designed to output JSON."},
            {
                "role": "user",
                "content": (
                    f'Create a detailed outline for a comprehensive guide on "{state.topic}" '
                    f"for {state.audience_level} level learners. Include a compelling title, "
                    "an introduction, 4-6 main sections and a conclusion; give each section "
                    "a clear title and a brief description of what it should cover."
                ),
            },
        ]
        response = llm.call(messages=messages)
        outline = (
            response
            if isinstance(response, GuideOutline)
            else GuideOutline.model_validate_json(response)
        )
        self.state.guide_outline = outline
        return outline

    @listen(create_guide_outline)
    @human_feedback(
        message="Does this outline cover the topic? Approve it or reject it.",
        emit=["approved", "rejected"],
        llm="gpt-4o-mini",
        default_outcome="rejected",
    )
    def review_outline(self, outline: GuideOutline) -> str:
        return "\n".join(f"- {section.title}" for section in outline.sections)

    @listen("approved")
    def write_and_compile_guide(self) -> str:
        outline = self.state.guide_outline
        assert outline is not None
        writer = Agent(
            role="Educational Content Writer",
            goal="Write engaging, accurate guide sections",
            backstory="You research before you write and explain for the audience's level.",
            llm="openai/gpt-4o-mini",
            tools=[search_internet],
        )
        for section in outline.sections:
            result = writer.kickoff(
                f"Write the section '{section.title}' of a guide on {self.state.topic} "
                f"for {self.state.audience_level} learners: {section.description}"
            )
            self.state.sections_content[section.title] = str(result.raw)
        body = "\n\n".join(
            f"## {title}\n\n{text}" for title, text in self.state.sections_content.items()
        )
        return f"# {outline.title}\n\n{outline.introduction}\n\n{body}\n\n{outline.conclusion}"

    @listen("rejected")
    def start_over(self) -> str:
        return "outline rejected: rerun with another topic or audience"
