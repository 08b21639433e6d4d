"""What the issue-45 look for real work outside the scheduler costs, side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    BENCH_RUNS=15 .venv/bin/python tests/benchmarks/bench_real_work.py

A crewAI method sleeps 200 times (200 idle clock jumps, crewai's event-bus loop thread
alive outside the harness), in alternating rounds with the look on and off
(``real_work.hold`` replaced by one that never holds); and a method's busy poll spins
through one preemption bound (1,000 clock reads) per 5 virtual ms for 0.2 virtual s.
"""

from __future__ import annotations

import os
import statistics
import time
import warnings

from benchkit import wall  # first: crewai's offline settings
from crewai.flow.flow import Flow, start
from pydantic import BaseModel

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime import real_work


class _Empty(BaseModel):
    pass


class Sleeps(Flow[_Empty]):
    @start()
    def go(self) -> int:
        for _ in range(200):
            time.sleep(0.01)
        return 1


class Spins(Flow[_Empty]):
    @start()
    def go(self) -> int:
        deadline = time.monotonic() + 0.2
        reads = 0
        while time.monotonic() < deadline:
            reads += 1
        return reads


def _once(flow: type, hold_on: bool) -> float:
    real_hold = real_work.hold
    if not hold_on:
        real_work.hold = lambda sched, due, held: None
    try:
        started = wall()
        with FlowsSession(test_id="bench") as session:
            session.run(flow)
        return wall() - started
    finally:
        real_work.hold = real_hold


def main() -> None:
    warnings.simplefilter("ignore")
    runs = int(os.environ.get("BENCH_RUNS", "15"))
    for hold_on in (True, False):
        _once(Sleeps, hold_on)
    taken: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for hold_on in (True, False):
            taken[hold_on].append(_once(Sleeps, hold_on))
    on, off = (statistics.median(taken[k]) * 1000 for k in (True, False))
    print(f"200 idle clock jumps, look on:  {on:.1f} ms ({(on - off) / 200 * 1000:.0f} µs a jump)")
    print(f"200 idle clock jumps, look off: {off:.1f} ms")
    spins = [_once(Spins, True) for _ in range(max(runs // 3, 3))]
    print(f"a 0.2 virtual s busy loop (40 preemptions): {statistics.median(spins) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
