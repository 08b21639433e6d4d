"""A blog pipeline in the style of crewAI-examples: research with tools, outline
as structured output, an editor's verdict routes to publish or rework.

``test_blog_flow.py`` smoke-tests the whole of it with one line of script
(``fake_llm.auto()``), then pins budgets and the calls that must happen.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from crewai import LLM, Agent
from crewai.flow.flow import Flow, listen, router, start
from crewai.tools import tool
from pydantic import BaseModel, Field


@tool("search_web")
def search_web(query: str) -> str:
    """Search the web for a query."""
    return f"https://example.org/search?q={query}"


@tool("fetch_page")
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    return f"<article>{url}</article>"


class Tone(Enum):
    FRIENDLY = "friendly"
    FORMAL = "formal"


class Section(BaseModel):
    heading: str
    points: list[str] = Field(min_length=1)


class Outline(BaseModel):
    title: str
    tone: Tone
    sections: list[Section]


class Verdict(BaseModel):
    decision: Literal["publish", "rework"]
    notes: str = ""


class BlogState(BaseModel):
    topic: str = "AI agents"
    notes: str = ""
    outline: Outline | None = None
    post: str = ""


class BlogFlow(Flow[BlogState]):
    @start()
    def research(self) -> str:
        researcher = Agent(
            role="Researcher",
            goal="Find good sources",
            backstory="A careful analyst.",
            llm="gpt-4o",
            tools=[search_web, fetch_page],
        )
        self.state.notes = str(researcher.kickoff(f"Research {self.state.topic}").raw)
        return self.state.notes

    @listen(research)
    def outline(self) -> Outline:
        outline = LLM("gpt-4o").call(
            f"Outline a post on {self.state.topic} from: {self.state.notes}",
            response_model=Outline,
        )
        self.state.outline = outline
        return outline

    @router(outline)
    def review(self) -> str:
        verdict = LLM("gpt-4o-mini").call("Review this outline.", response_model=Verdict)
        return verdict.decision

    @listen("publish")
    def write(self) -> str:
        self.state.post = str(LLM("gpt-4o").call("Write the post."))
        return self.state.post

    @listen("rework")
    def send_back(self) -> str:
        return "sent back to the writer"
