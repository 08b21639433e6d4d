"""Benchmarks for the foundation, measured side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_harness.py

It prints, each as medians of repeated runs:
  1. a warm bare ``kickoff()`` of a 12-method flow vs the same under the harness (ratio);
  2. the wall time of a flow that awaits 10 x 30 s of virtual latency.
The start-up cost the plugin adds to a pytest run is bench_startup.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import statistics
import sys
from collections.abc import Callable

from benchkit import samples, wall  # first: crewai's offline settings
from crewai.flow.flow import Flow, listen, start
from dispatch_flows import Twelve

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.loop import install_policy

RUNS = int(os.environ.get("BENCH_RUNS", "60"))


class Latency(Flow):
    """Ten steps, each waiting 30 s (say, a slow LLM)."""

    @start()
    async def step0(self) -> int:
        await asyncio.sleep(30)
        return 0

    @listen(step0)
    async def step1(self, v: int) -> int:
        for _ in range(9):
            await asyncio.sleep(30)
        return v + 9


def median_seconds(fn: Callable[[], object], runs: int) -> float:
    return statistics.median(samples(fn, runs))


def bare_kickoff() -> float:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):  # Rich renders anyway; keep the terminal out
        Twelve().kickoff()
        return median_seconds(lambda: Twelve().kickoff(), RUNS)


def harness_kickoff() -> float:
    with install_policy(), FlowsSession(test_id="bench") as session:
        Twelve().kickoff()
        kickoff = median_seconds(lambda: Twelve().kickoff(), RUNS)
        flows_run = median_seconds(lambda: session.run(Twelve), RUNS)
    print(f"    (flows.run(Twelve) under the harness: {flows_run * 1000:.2f} ms)")
    return kickoff


def virtual_latency() -> tuple[float, float]:
    with FlowsSession(test_id="bench-latency") as session:
        started = wall()
        session.run(Latency)
        return wall() - started, session.clock.monotonic()


def main() -> None:
    python = sys.version.split()[0]
    print(f"pytest-flows foundation benchmark (median of {RUNS} runs, Python {python})")
    bare = bare_kickoff()
    harnessed = harness_kickoff()
    print(
        f"1. 12-method flow kickoff(): bare {bare * 1000:.2f} ms, "
        f"harness {harnessed * 1000:.2f} ms -> ratio {harnessed / bare:.2f}x (target <= 0.5x)"
    )
    wall, virtual = virtual_latency()
    print(
        f"2. 10 x 30 s virtual latency: {virtual:.0f} virtual s in {wall:.3f} s wall "
        "(target < 0.1 s)"
    )


if __name__ == "__main__":
    main()
