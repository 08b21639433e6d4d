"""A crew-based flow, shaped like crewAI-examples' self-evaluation loop: a writing crew
drafts a post, a review crew returns a structured verdict, the router retries once."""

from __future__ import annotations

from crewai import LLM, Agent, Crew, Task
from crewai.flow.flow import Flow, listen, router, start
from pydantic import BaseModel

#: The writer's backstory; the test changes it to see the replay report it.
WRITER_BACKSTORY = "A columnist who writes plainly."


class Verdict(BaseModel):
    ready: bool
    feedback: str


class PostState(BaseModel):
    topic: str = ""
    attempts: int = 0
    draft: str = ""


def _llm() -> LLM:
    return LLM(model="gpt-4o-mini", temperature=0, max_retries=0)


def writing_crew() -> Crew:
    writer = Agent(
        role="Writer",
        goal="Write a two-sentence post about {topic}",
        backstory=WRITER_BACKSTORY,
        llm=_llm(),
        max_retry_limit=0,
    )
    task = Task(description="Write about {topic}", expected_output="A post", agent=writer)
    return Crew(name="writing", agents=[writer], tasks=[task])


def review_crew() -> Crew:
    editor = Agent(
        role="Editor",
        goal="Decide whether a post is ready",
        backstory="Strict but fair.",
        llm=_llm(),
        max_retry_limit=0,
    )
    task = Task(
        description="Review: {draft}",
        expected_output="A verdict",
        agent=editor,
        output_pydantic=Verdict,
    )
    return Crew(name="review", agents=[editor], tasks=[task])


class PostFlow(Flow[PostState]):
    @start("retry")
    def write(self) -> None:
        self.state.attempts += 1
        self.state.draft = str(writing_crew().kickoff(inputs={"topic": self.state.topic}).raw)

    @router(write)
    def review(self) -> str:
        verdict = review_crew().kickoff(inputs={"draft": self.state.draft}).pydantic
        assert isinstance(verdict, Verdict)
        return "done" if verdict.ready or self.state.attempts >= 2 else "retry"

    @listen("done")
    def publish(self) -> str:
        return f"{self.state.draft} ({self.state.attempts} drafts)"
