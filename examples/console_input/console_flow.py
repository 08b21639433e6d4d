"""A research flow as many crewAI-examples still write it: the topic comes from
``input()`` on the console, and the user confirms before the crew runs."""

from __future__ import annotations

from crewai import Agent, Crew, Task
from crewai.flow.flow import Flow, listen, router, start
from pydantic import BaseModel


class ResearchState(BaseModel):
    topic: str = ""
    report: str = ""


def research_crew() -> Crew:
    researcher = Agent(role="Researcher", goal="Research", backstory="Thorough.", llm="gpt-4o")
    task = Task(description="Research {topic}", expected_output="a report", agent=researcher)
    return Crew(name="research", agents=[researcher], tasks=[task])


class ConsoleResearchFlow(Flow[ResearchState]):
    @start()
    def get_topic(self) -> str:
        self.state.topic = input("Enter a topic: ").strip()
        return self.state.topic

    @router(get_topic)
    def confirm(self) -> str:
        answer = input(f"Research {self.state.topic!r}? [y/n] ")
        return "go" if answer.strip().lower().startswith("y") else "stop"

    @listen("go")
    def research(self) -> str:
        self.state.report = str(research_crew().kickoff(inputs={"topic": self.state.topic}).raw)
        return self.state.report

    @listen("stop")
    def cancelled(self) -> str:
        return "cancelled"
