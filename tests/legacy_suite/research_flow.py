"""A research pipeline: an agent with tools gathers sources, a crew assesses them,
a router decides whether the brief is ready to publish.

Nothing here knows about tests: the tests in ``test_research_flow.py`` run this
module as production would, with the LLMs and the crew scripted.
"""

from __future__ import annotations

from crewai import LLM, Agent, Crew, Task
from crewai.flow.flow import Flow, listen, router, start
from crewai.tools import tool
from pydantic import BaseModel

# A tiny offline "web" so the tools are real code with real results.
CORPUS = {
    "https://example.org/agents": "Agents loop: plan, call tools, observe, answer.",
    "https://example.org/flows": "Flows route between steps with @router and @listen.",
    "https://example.org/testing": "Deterministic tests script the model, not the runtime.",
}


@tool("search_web")
def search_web(query: str) -> str:
    """Search the web; returns matching URLs, one per line."""
    words = query.lower().split()
    hits = [url for url, text in CORPUS.items() if any(w in text.lower() for w in words)]
    return "\n".join(hits) or "no results"


@tool("fetch_page")
def fetch_page(url: str) -> str:
    """Fetch the text of a page."""
    return CORPUS.get(url, f"404: {url}")


class Brief(BaseModel):
    """What the assessment crew concludes."""

    summary: str
    confidence: float
    sources: list[str]


class ResearchState(BaseModel):
    topic: str = "AI agents"
    notes: str = ""
    brief: Brief | None = None
    article: str = ""


def researcher() -> Agent:
    return Agent(
        role="Researcher",
        goal="Collect reliable sources on {topic}",
        backstory="A meticulous librarian who always cites URLs.",
        llm="gpt-4o",
        tools=[search_web, fetch_page],
    )


def assessment_crew() -> Crew:
    analyst = Agent(
        role="Analyst",
        goal="Judge how well the notes support a brief",
        backstory="Sceptical by training.",
        llm="gpt-4o",
    )
    editor = Agent(
        role="Editor",
        goal="Condense the analysis into a brief",
        backstory="Writes for busy readers.",
        llm="gpt-4o-mini",
    )
    analyse = Task(
        name="analyse",
        description="Analyse these notes on {topic}:\n{notes}",
        expected_output="Strengths and gaps of the evidence",
        agent=analyst,
    )
    condense = Task(
        name="condense",
        description="Write the brief on {topic} with a confidence between 0 and 1",
        expected_output="A brief",
        agent=editor,
        output_pydantic=Brief,
    )
    return Crew(name="assessment", agents=[analyst, editor], tasks=[analyse, condense])


class ResearchFlow(Flow[ResearchState]):
    @start()
    def gather(self) -> str:
        result = researcher().kickoff(f"Collect sources on {self.state.topic}")
        self.state.notes = str(result.raw)
        return self.state.notes

    @listen(gather)
    def assess(self) -> Brief:
        output = assessment_crew().kickoff(
            inputs={"topic": self.state.topic, "notes": self.state.notes}
        )
        self.state.brief = output.pydantic  # type: ignore[assignment]
        return self.state.brief  # type: ignore[return-value]

    @router(assess)
    def gate(self) -> str:
        assert self.state.brief is not None
        return "publish" if self.state.brief.confidence >= 0.7 else "dig_deeper"

    @listen("publish")
    def write_post(self) -> str:
        assert self.state.brief is not None
        self.state.article = str(
            LLM("gpt-4o-mini").call(f"Write a 3-sentence post from: {self.state.brief.summary}")
        )
        return self.state.article

    @listen("dig_deeper")
    def send_back(self) -> str:
        return f"Not enough evidence on {self.state.topic}; research again."
