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
Each is timed twice, in wall time and in CPU time of the whole process (every thread: on a
shared machine the load takes the CPU away from a run for as long as it likes, and from a
run that hands off between threads more often); a column is the median over rounds of the
per-round medians (a load that drifts from round to round moves all columns of a round
alike). The ratios are schedule / bare and schedule / alone, in CPU time and in wall time;
the last line gives their medians over the corpus, and the load average.
``BENCH_FLOWS`` (class names, comma-separated) measures only those.
``BENCH_BEFORE=/path/to/other/checkout`` measures that checkout's ``pytest_flows`` too, in
rounds alternating with this one's (``side_by_side.py``), and reports both.
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
from benchkit import cpu_samples, memory_faked, samples, wall  # first: crewai's offline settings

# isort: split
import side_by_side
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


def _medians(fn: Callable[[], object]) -> tuple[float, float]:
    """The median wall and CPU seconds of ``fn()``."""
    return statistics.median(samples(fn, RUNS)), statistics.median(cpu_samples(fn, RUNS))


def _search(session: FlowsSession, flow: type) -> tuple[float, float, float]:
    """Wall and CPU seconds a schedule of ``explore()``, and how many it ran."""
    started, cpu = wall(), time.process_time()
    found = explore(session, flow, max_schedules=RUNS)
    n = found.schedules_run
    return (wall() - started) / n, (time.process_time() - cpu) / n, n


def measure(flow: type) -> list[float]:
    """One round for ``flow``: bare, alone, run and schedule (wall, CPU) seconds, and the
    schedules run."""
    with _quiet_console(), _no_waiting(), memory_faked():
        b = _medians(lambda: bare(flow))
        with patches.inline_event_bus():
            a = _medians(lambda: alone(flow))
    with FlowsSession(test_id="bench") as session:
        r = _medians(lambda: session.run(flow, raise_on_error=False))
        s = _search(session, flow)
    return [*b, *a, *r, *s]


def _flows() -> list[type]:
    only = {name for name in os.environ.get("BENCH_FLOWS", "").split(",") if name}
    return [flow for flow in CORPUS if not only or flow.__name__ in only]


def warm_up() -> None:
    for flow in _flows()[:1]:  # one-time imports and configuration
        with _quiet_console(), _no_waiting(), memory_faked():
            bare(flow)
        with FlowsSession(test_id="bench") as session:
            explore(session, flow, max_schedules=2)


def one_round() -> list[list[float]]:
    """Every flow measured once (the rounds interleave the flows, so a load that drifts
    weighs on each alike)."""
    return [measure(flow) for flow in _flows()]


def report(name: str, rounds: list[list[list[float]]]) -> None:
    print(
        f"{name}:\n"
        f"{'':20} {'CPU ms':^35} {'wall':>8} {'CPU ratio':^13} {'wall ratio':^13}\n"
        f"{'flow':20} {'bare':>8} {'alone':>8} {'run':>8} {'sched':>8} {'sched/s':>8} "
        f"{'/bare':>6} {'/alone':>6} {'/bare':>6} {'/alone':>6}  "
        f"(Python {sys.version.split()[0]}, {len(rounds)} rounds of {RUNS})"
    )
    ratios: list[tuple[float, float, float, float, float]] = []
    for k, flow in enumerate(_flows()):
        rows = [r[k] for r in rounds]
        bw, bc, aw, ac, _rw, rc, sw, sc, n = (
            statistics.median(column) for column in zip(*rows, strict=True)
        )
        ratios.append((1 / sw, sc / bc, sc / ac, sw / bw, sw / aw))
        print(
            f"{flow.__name__:20} {bc * 1e3:8.2f} {ac * 1e3:8.2f} {rc * 1e3:8.2f} {sc * 1e3:8.2f} "
            + "{:8.0f} {:6.2f} {:6.2f} {:6.2f} {:6.2f}".format(*ratios[-1])
            + ("" if n == RUNS else f"  ({n:.0f} schedules)"),
            flush=True,
        )
    medians = [statistics.median(column) for column in zip(*ratios, strict=True)]
    print(
        f"{'median':20} {'':8} {'':8} {'':8} {'':8} "
        + "{:8.0f} {:6.2f} {:6.2f} {:6.2f} {:6.2f}".format(*medians)
    )


def main() -> None:
    found = side_by_side.rounds(__file__, ROUNDS, warm_up, one_round)
    for name, rounds in found.items():
        report(name, rounds)
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
