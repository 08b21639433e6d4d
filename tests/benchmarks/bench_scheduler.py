"""Benchmarks of the thread scheduler, measured side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_scheduler.py

It prints, as medians of repeated runs:
  1. a warm bare ``kickoff()`` of the 12-method flow vs ``flows.run`` of it (target <= 0.25x),
     measured in alternating rounds;
  2. the wall time of a flow whose 4 parallel sync methods each ``time.sleep(30)`` (target < 0.1 s);
  3. the cost of one switch point (a baton hand-off between two real threads) in microseconds,
     next to the same ping-pong on a real pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "crewai"))
os.environ.update(
    OTEL_SDK_DISABLED="true",
    CREWAI_DISABLE_TELEMETRY="true",
    CREWAI_TRACING_ENABLED="false",
    CREWAI_TESTING="true",
    CREWAI_DISABLE_VERSION_CHECK="true",
)

from dispatch_flows import Twelve  # noqa: E402
from scheduler_flows import SlowFour  # noqa: E402

from pytest_flows import FlowsSession  # noqa: E402
from pytest_flows._internal.loop import Scheduler, run  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "40"))
#: Runs of each kind in one round of the 12-method comparison.
ROUND = 5
HANDOFFS = 2000


def _wall() -> float:
    # The harness makes time.perf_counter virtual; the OS clock stays real.
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def samples(fn: Callable[[], object], runs: int) -> list[float]:
    taken = []
    for _ in range(runs):
        started = _wall()
        fn()
        taken.append(_wall() - started)
    return taken


def median_seconds(fn: Callable[[], object], runs: int = RUNS) -> float:
    return statistics.median(samples(fn, runs))


def twelve() -> tuple[float, float, float]:
    # The three are measured in alternating rounds, not one after the other: on a shared
    # machine the load drifts, and a drift between blocks would show up as a ratio.
    from pytest_flows.crewai._adapter import suppressed_console_output

    with contextlib.redirect_stdout(io.StringIO()):  # crewai's Rich panels
        Twelve().kickoff()
    # Every round then runs in the same process state: the harness's one-time imports and
    # crewai configuration happen before the first bare sample, not between rounds.
    with FlowsSession(test_id="bench-twelve") as session:
        session.run(Twelve)
    bare: list[float] = []
    quiet: list[float] = []
    harnessed: list[float] = []
    for _ in range(max(1, -(-RUNS // ROUND))):
        with contextlib.redirect_stdout(io.StringIO()):
            bare += samples(lambda: Twelve().kickoff(), ROUND)
        # The same, with crewai's console suppressed as the flows fixture does: what the
        # runtime itself costs on a real pool, without drawing panels.
        with suppressed_console_output():
            quiet += samples(lambda: Twelve().kickoff(), ROUND)
        with FlowsSession(test_id="bench-twelve") as session:
            session.run(Twelve)  # warm, as the bare kickoffs are
            harnessed += samples(lambda: session.run(Twelve), ROUND)
    return statistics.median(bare), statistics.median(quiet), statistics.median(harnessed)


def slow_four() -> tuple[float, float]:
    with FlowsSession(test_id="bench-slow-four") as session:
        wall = median_seconds(lambda: session.run(SlowFour), runs=10)
        return wall, session.clock.monotonic() / 10


async def ping_pong() -> None:
    turn = threading.Condition()
    state = {"next": "a"}

    def player(me: str, other: str) -> None:
        for _ in range(HANDOFFS // 2):
            with turn:
                while state["next"] != me:
                    turn.wait()
                state["next"] = other
                turn.notify()

    await asyncio.gather(asyncio.to_thread(player, "a", "b"), asyncio.to_thread(player, "b", "a"))


def switch_cost() -> tuple[float, float, int]:
    scheduler = Scheduler()
    harnessed = median_seconds(lambda: run(ping_pong(), scheduler), runs=7)
    switches = scheduler.threads.switches // 7
    bare = median_seconds(lambda: asyncio.run(ping_pong()), runs=7)
    return harnessed, bare, switches


def main() -> None:
    print(f"pytest-flows thread scheduler benchmark (medians, Python {sys.version.split()[0]})")
    bare, quiet, harnessed = twelve()
    print(
        f"1. 12-method flow: bare warm kickoff() {bare * 1000:.2f} ms, flows.run "
        f"{harnessed * 1000:.2f} ms -> ratio {harnessed / bare:.2f}x (target <= 0.25x); "
        f"bare with crewai's console suppressed {quiet * 1000:.2f} ms -> "
        f"{harnessed / quiet:.2f}x of that"
    )
    wall, virtual = slow_four()
    print(
        f"2. 4 parallel sync methods x time.sleep(30): {virtual:.0f} virtual s in "
        f"{wall * 1000:.1f} ms wall (target < 100 ms)"
    )
    harnessed, bare_pp, switches = switch_cost()
    per_switch = harnessed / max(switches, 1) * 1e6
    print(
        f"3. switch point: {switches} baton hand-offs in {harnessed * 1000:.1f} ms -> "
        f"{per_switch:.1f} us each (same {HANDOFFS}-turn ping-pong on a real pool: "
        f"{bare_pp * 1000:.1f} ms, {bare_pp / HANDOFFS * 1e6:.1f} us a turn)"
    )


if __name__ == "__main__":
    main()
