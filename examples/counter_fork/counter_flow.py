"""The counter of crewai's fork feature (seed 003): resume extends a history, fork starts one.

``@persist()`` saves the state after every method. ``kickoff(inputs={"id": X})``
resumes X (its history grows); ``kickoff(restore_from_state_id=X)`` forks X:
the new run starts from X's latest snapshot under a new id, and X is left as
it was.
"""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import persist
from pydantic import BaseModel


class CounterState(BaseModel):
    counter: int = 0
    history: list[int] = []


@persist()  # note the parentheses: a bare @persist replaces the class with a function
class CounterFlow(Flow[CounterState]):
    @start()
    def step(self) -> int:
        self.state.counter += 1
        return self.state.counter

    @listen(step)
    def remember(self, value: int) -> str:
        self.state.history.append(value)
        return f"counter is {value}"
