"""Two analyst crews in parallel listeners, each appending its finding to the state,
and a join that summarizes: the order of the findings depends on which crew ends first.

The crews' agents call a real model in production; the tests script what each crew
returns (``fake_crews``) and explore every order.
"""

from __future__ import annotations

from crewai import Agent, Crew, Task
from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel, Field


class Findings(BaseModel):
    notes: list[str] = Field(default_factory=list)
    summary: str = ""


def analyst_crew(topic: str) -> Crew:
    analyst = Agent(role=f"{topic} analyst", goal="Find facts", backstory="Careful.", llm="gpt-4o")
    task = Task(description=f"Research {topic}", expected_output="facts", agent=analyst)
    return Crew(name=topic, agents=[analyst], tasks=[task])


class TwoCrews(Flow[Findings]):
    @start()
    def plan(self) -> None:
        return None

    @listen(plan)
    def market(self) -> None:
        self.state.notes.append(str(analyst_crew("market").kickoff().raw))

    @listen(plan)
    def tech(self) -> None:
        self.state.notes.append(str(analyst_crew("tech").kickoff().raw))

    @listen(and_(market, tech))
    def summarize(self) -> str:
        self.state.summary = " + ".join(self.state.notes)
        return self.state.summary
