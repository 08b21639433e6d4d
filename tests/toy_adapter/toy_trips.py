"""A toyflow flow recorded in "production" and replayed (test_toy_citizen.py)."""

from __future__ import annotations

import toyflow


class Trip(toyflow.Flow):
    tools = {"weather": lambda city: f"the real forecast for {city}"}

    @toyflow.step
    def plan(self):
        choice = self.llm("Which city should we visit?", tools=("weather",))
        self.state["city"] = choice["args"]["city"]
        return self.tool(choice["tool"], **choice["args"])

    @toyflow.step
    def confirm(self):
        return self.ask(f"Go to {self.state['city']}?")

    @toyflow.step
    def summary(self):
        return self.llm(f"Summarize the trip to {self.state['city']}")
