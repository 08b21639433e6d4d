"""Market research: four analyst crews (one per region) run at once, then a
summary. Each crew takes about 30 seconds in production.

``LegacyMarketFlow`` is the same flow as a first draft had it: a sync
``kickoff()`` inside an ``async`` method, which crashes in production (crewai
refuses to run agents synchronously inside a running event loop).
"""

from __future__ import annotations

import asyncio

from crewai import Agent, Crew, Task
from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel

REGIONS = ("emea", "apac", "americas", "africa")


class Outlook(BaseModel):
    region: str
    growth: float


def regional_crew(region: str) -> Crew:
    analyst = Agent(
        role=f"{region} analyst\n",  # as a YAML `role: >` leaves it: trailing newline
        goal="Assess the market",
        backstory="Knows the region.",
        llm="gpt-4o",
    )
    task = Task(
        description="Assess the market in {region}",
        expected_output="an outlook",
        agent=analyst,
        output_pydantic=Outlook,
    )
    return Crew(name=region, agents=[analyst], tasks=[task])


class MarketFlow(Flow):  # type: ignore[type-arg]
    @start()
    async def research(self) -> list[str]:
        outputs = await asyncio.gather(
            *(regional_crew(r).kickoff_async(inputs={"region": r}) for r in REGIONS)
        )
        return [
            f"{o.pydantic.region}: {o.pydantic.growth:+.1f}%"
            if o.pydantic is not None
            else f"unreadable outlook ({o.raw[:20]})"
            for o in outputs
        ]

    @listen(research)
    def summarize(self, lines: list[str]) -> str:
        return "; ".join(lines)


class LegacyMarketFlow(Flow):  # type: ignore[type-arg]
    @start()
    async def research(self) -> str:
        output = regional_crew("emea").kickoff(inputs={"region": "emea"})  # the bug
        return str(output.raw)
