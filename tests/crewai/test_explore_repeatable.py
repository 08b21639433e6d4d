"""An exploration is repeatable: the same flow explores to the same schedules and
outcomes whenever it runs, whatever the virtual clock read when it began (the clock goes
on across the runs of a test) and whether its class ran before.

The clock rounds each wait up by a fraction of a microsecond that depends on the reading
the wait starts at; a 0.1 s sleep then fell on either side of the scheduler's "held back
for at most 0.1 s" rule, and a schedule derived from one run met other choice points in
the next (threads.SAME_MOMENT).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from crewai.flow.flow import Flow, start
from pydantic import BaseModel, Field

from pytest_flows import FlowsSession, explore


class _State(BaseModel):
    x: int = 0
    y: int = 0
    log: list[str] = Field(default_factory=list)


def _fresh_class() -> type[Flow[_State]]:
    """A new class each call (crewAI builds its method registry per class)."""

    class Repro(Flow[_State]):
        @start()
        async def s0(self) -> str:
            await asyncio.sleep(0)
            self.state.log.append(f"s0 saw {self.state.x}")
            return "s0"

        @start()
        def s1(self) -> str:
            time.sleep(0.1)
            if self.state.x == 0:
                self.state.x = 6
            return "s1"

    return Repro


def _search(flows: FlowsSession, target: Any) -> tuple[list[str], list[str]]:
    found = explore(flows, target, max_schedules=200)
    assert found.complete
    return [c.schedule for c in found.choosers], found.texts


def test_a_flow_explores_alike_every_time(flows: FlowsSession) -> None:
    first_class = _fresh_class()
    first = _search(flows, first_class)  # the class's first runs, the clock at 0
    flows.clock.advance(0.0173)  # a reading whose rounding differs
    assert _search(flows, first_class) == first  # the same class again
    flows.clock.advance(1000.0)  # a reading in another binade
    assert _search(flows, _fresh_class()) == first  # a class that never ran
