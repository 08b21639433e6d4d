"""What one explored schedule costs against the flow's own work, per flow of
``bench_explore.py``'s corpus, measured side by side in one process.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_schedule_cost.py

Per flow, in ``BENCH_ROUNDS`` interleaved rounds (default 5), each of ``BENCH_RUNS`` runs
(default 10):
  bare      crewAI's own work: ``Flow().kickoff()`` with crewAI's own loop, thread pool and
            event bus, console quiet as under the harness, every ``time.sleep`` and
            ``asyncio.sleep`` cut to zero (virtual time makes the harness's sleeps free:
            the bare flow's waiting is no work either), the default memory's store the
            in-memory one the harness fakes it with (benchkit.memory_faked);
  alone     the runtime without threads (``bench_breakdown.py``'s (b)): the flow's sync
            methods called inline on a plain loop, sync event handlers inline; what no
            harness can save;
  run       ``flows.run`` (seed 0, no schedule);
  schedule  an ``explore(..., max_schedules=BENCH_RUNS)``'s wall time over the schedules it
            ran: one schedule of a search, its bookkeeping included.
Each column is the median over rounds of the per-round medians (a load that drifts from
round to round moves all columns of a round alike). The ratios are schedule / bare and
schedule / alone; the last line gives their medians over the corpus, and ``uptime``'s load.
``BENCH_FLOWS`` (class names, comma-separated) measures only those.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench_breakdown import _InlineLoop
from bench_explore import CORPUS
from benchkit import memory_faked, samples, wall  # first: crewai's offline settings
from crewai.events.event_bus import crewai_event_bus

from pytest_flows import FlowsSession, explore
from pytest_flows.crewai import _patches as patches
from pytest_flows.crewai._adapter import _quiet_console

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
RUNS = int(os.environ.get("BENCH_RUNS", "10"))

_sleep, _async_sleep = time.sleep, asyncio.sleep


async def _no_async_wait(delay: float, result: Any = None) -> Any:
    return await _async_sleep(0, result)


@contextmanager
def _no_waiting() -> Iterator[None]:
    time.sleep = lambda seconds: _sleep(0)
    asyncio.sleep = _no_async_wait  # type: ignore[assignment]
    try:
        yield
    finally:
        time.sleep, asyncio.sleep = _sleep, _async_sleep  # type: ignore[assignment]


def bare(flow: type) -> None:
    flow().kickoff()


def alone(flow: type) -> None:
    scope = crewai_event_bus._enter_runtime_scope()
    try:
        with asyncio.Runner(loop_factory=_InlineLoop) as runner:
            runner.run(flow().kickoff_async())
    finally:
        crewai_event_bus._exit_runtime_scope(scope)


def _median(fn: Callable[[], object]) -> float:
    return statistics.median(samples(fn, RUNS))


def measure(flow: type) -> tuple[float, float, float, float, int]:
    rows = []
    schedules = 0
    for _ in range(ROUNDS):
        with _quiet_console(), _no_waiting(), memory_faked():
            b = _median(lambda: bare(flow))
            with patches.inline_event_bus():
                a = _median(lambda: alone(flow))
        with FlowsSession(test_id="bench") as session:
            r = _median(lambda: session.run(flow, raise_on_error=False))
            start = wall()
            found = explore(session, flow, max_schedules=RUNS)
            schedules = found.schedules_run
            s = (wall() - start) / schedules
        rows.append((b, a, r, s))
    b, a, r, s = (statistics.median(column) for column in zip(*rows, strict=True))
    return b, a, r, s, schedules


def main() -> None:
    only = {name for name in os.environ.get("BENCH_FLOWS", "").split(",") if name}
    flows = [flow for flow in CORPUS if not only or flow.__name__ in only]
    for flow in flows[:1]:  # one-time imports and configuration
        with _quiet_console(), _no_waiting(), memory_faked():
            bare(flow)
        with FlowsSession(test_id="bench") as session:
            explore(session, flow, max_schedules=2)
    print(
        f"{'flow':20} {'bare ms':>8} {'alone ms':>8} {'run ms':>8} {'sched ms':>8} "
        f"{'sched/s':>8} {'/bare':>6} {'/alone':>6}  (Python {sys.version.split()[0]}, "
        f"{ROUNDS} rounds of {RUNS})"
    )
    to_bare, to_alone, rates = [], [], []
    for flow in flows:
        b, a, r, s, n = measure(flow)
        to_bare.append(s / b)
        to_alone.append(s / a)
        rates.append(1 / s)
        print(
            f"{flow.__name__:20} {b * 1e3:8.2f} {a * 1e3:8.2f} {r * 1e3:8.2f} {s * 1e3:8.2f} "
            f"{1 / s:8.0f} {s / b:6.2f} {s / a:6.2f}" + ("" if n == RUNS else f"  ({n} schedules)"),
            flush=True,
        )
    print(
        f"{'median':20} {'':8} {'':8} {'':8} {'':8} {statistics.median(rates):8.0f} "
        f"{statistics.median(to_bare):6.2f} {statistics.median(to_alone):6.2f}"
    )
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()
