"""crewAI-examples-shaped flows for the flight recorder: their LLM work is done by crews.

``WriterFlow`` is a router loop with two crews (like the examples' self-evaluation
loop): a writing crew whose agent has a tool drafts a post, a review crew returns a
structured verdict (``output_pydantic``), the router retries until it is accepted or
two attempts were made. ``ResearchFlow`` runs a research crew, then three listeners
side by side (a crew of its own, a direct LLM call, plain Python), like the examples'
crew-then-fan-out flows. A test changes the texts below (goal, backstory, task
description) to see the replay report the changed prompt at the agent's call.
"""

from __future__ import annotations

from crewai import LLM, Agent, Crew, Task
from crewai.flow.flow import Flow, listen, router, start
from crewai.tools import tool
from pydantic import BaseModel

#: What a test edits: one agent's backstory and goal, one task's description.
TEXTS = {
    "writer_goal": "Write a short post about {topic}",
    "writer_backstory": "A writer who checks facts with the lookup tool.",
    "draft_task": "lookup: facts about {topic} (attempt {attempt})",
    "reviewer_goal": "Judge whether a post is ready",
    "reviewer_backstory": "An editor with high standards.",
    "review_task": "Review this post about {topic}: {draft}",
    "researcher_backstory": "A researcher who reads widely.",
}


def _llm() -> LLM:
    # No client retries: a provider error reaches the flow at once (and the production
    # process never sleeps in a backoff).
    return LLM(model="gpt-4o-mini", temperature=0, max_retries=0)


@tool("lookup")
def lookup(query: str) -> str:
    """Look up facts for a query."""
    return f"facts for {query}: none disputed"


class Verdict(BaseModel):
    valid: bool
    feedback: str


class WriterState(BaseModel):
    topic: str = ""
    attempt: int = 0
    draft: str = ""
    verdict: str = ""


def writing_crew() -> Crew:
    writer = Agent(
        role="Writer",
        goal=TEXTS["writer_goal"],
        backstory=TEXTS["writer_backstory"],
        tools=[lookup],
        llm=_llm(),
        max_retry_limit=0,
    )
    task = Task(description=TEXTS["draft_task"], expected_output="A post", agent=writer)
    return Crew(name="writing", agents=[writer], tasks=[task])


def review_crew() -> Crew:
    reviewer = Agent(
        role="Reviewer",
        goal=TEXTS["reviewer_goal"],
        backstory=TEXTS["reviewer_backstory"],
        llm=_llm(),
        max_retry_limit=0,
    )
    task = Task(
        description=TEXTS["review_task"],
        expected_output="A verdict",
        agent=reviewer,
        output_pydantic=Verdict,
    )
    return Crew(name="review", agents=[reviewer], tasks=[task])


class WriterFlow(Flow[WriterState]):
    @start("retry")
    def write(self) -> None:
        self.state.attempt += 1
        inputs = {"topic": self.state.topic, "attempt": self.state.attempt}
        self.state.draft = str(writing_crew().kickoff(inputs=inputs).raw)

    @router(write)
    def review(self) -> str:
        result = review_crew().kickoff(
            inputs={"topic": self.state.topic, "draft": self.state.draft}
        )
        verdict = result.pydantic
        assert isinstance(verdict, Verdict)
        self.state.verdict = verdict.feedback
        return "complete" if verdict.valid or self.state.attempt >= 2 else "retry"

    @listen("complete")
    def publish(self) -> str:
        return f"published after {self.state.attempt} attempts: {self.state.draft}"


def research_crew(backstory_key: str = "researcher_backstory") -> Crew:
    researcher = Agent(
        role="Researcher",
        goal="Find what matters about {topic}",
        backstory=TEXTS[backstory_key],
        llm=_llm(),
        max_retry_limit=0,
    )
    task = Task(description="Research {topic}", expected_output="Notes", agent=researcher)
    return Crew(name="research", agents=[researcher], tasks=[task])


def summary_crew() -> Crew:
    summarizer = Agent(
        role="Summarizer",
        goal="Summarize notes",
        backstory="Brief and exact.",
        llm=_llm(),
        max_retry_limit=0,
    )
    task = Task(description="Summarize: {notes}", expected_output="A summary", agent=summarizer)
    return Crew(name="summary", agents=[summarizer], tasks=[task])


class ResearchFlow(Flow):
    @start()
    async def research(self) -> str:
        result = await research_crew().kickoff_async(inputs={"topic": self.state["topic"]})
        return str(result.raw)

    @listen(research)
    async def summarize(self, notes: str) -> str:
        result = await summary_crew().kickoff_async(inputs={"notes": notes})
        return str(result.raw)

    @listen(research)
    async def headline(self, notes: str) -> str:
        reply = await _llm().acall([{"role": "user", "content": f"Headline for: {notes}"}])
        return str(reply)

    @listen(research)
    async def count(self, notes: str) -> int:
        return len(notes.split())
