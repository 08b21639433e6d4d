"""A travel assistant: a local model (no native function calling, so crewai's
text tool loop) checks the weather and flight prices, then advises.

The real tools call web APIs; ``test_travel_flow.py`` scripts what they return
(``fake_tools``) or lets them run, and scripts the model (``fake_llm``).
"""

from __future__ import annotations

from crewai import Agent
from crewai.flow.flow import Flow, listen, start
from crewai.tools import BaseTool, tool
from pydantic import BaseModel


class WeatherArgs(BaseModel):
    city: str


class WeatherTool(BaseTool):
    name: str = "weather"
    description: str = "Today's weather in a city."
    args_schema: type[BaseModel] = WeatherArgs

    def _run(self, city: str) -> str:
        raise RuntimeError("the weather API needs a network; tests script this tool")


@tool("flight_price")
def flight_price(origin: str, destination: str) -> str:
    """The cheapest flight price between two cities, in EUR."""
    return f"{origin}->{destination}: 120 EUR"  # a stand-in for a real price API


class TripState(BaseModel):
    destination: str = "Oslo"
    advice: str = ""


class TravelFlow(Flow[TripState]):
    @start()
    def advise(self) -> str:
        assistant = Agent(
            role="Travel assistant",
            goal="Advise on a trip",
            backstory="Knows the weather and the fares.",
            llm="ollama/llama3",  # no native function calling: crewai's ReAct loop
            tools=[WeatherTool(), flight_price],
        )
        self.state.advice = str(
            assistant.kickoff(f"Should I fly from Berlin to {self.state.destination}?").raw
        )
        return self.state.advice

    @listen(advise)
    def check_weather_directly(self) -> str:
        # Flow code calling a tool itself, with a fallback when the API fails.
        try:
            return str(WeatherTool().run(city=self.state.destination))
        except (TimeoutError, RuntimeError) as exc:
            return f"weather unavailable ({exc})"
