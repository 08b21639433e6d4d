"""Benchmarks of the thread scheduler, measured side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_scheduler.py

It prints, as medians of repeated runs:
  1. a warm bare ``kickoff()`` of the 12-method flow vs ``flows.run`` of it (target <= 0.25x),
     in alternating rounds, the bare runs in a process that never imports pytest-flows;
  2. the wall time of a flow whose 4 parallel sync methods each ``time.sleep(30)`` (target < 0.1 s);
  3. the cost of one switch point (a baton hand-off between two real threads) in microseconds,
     next to the same ping-pong on a real pool.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
from collections.abc import Callable

from benchkit import samples  # first: crewai's offline settings
from dispatch_flows import Twelve
from scheduler_flows import SlowFour

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.loop import Scheduler, run

RUNS = int(os.environ.get("BENCH_RUNS", "40"))
#: Runs of each kind in one round of the 12-method comparison.
ROUND = 5
HANDOFFS = 2000


def median_seconds(fn: Callable[[], object], runs: int = RUNS) -> float:
    return statistics.median(samples(fn, runs))


#: The bare side of the comparison, run in a process of its own that never imports
#: pytest-flows: a session changes crewai's process-wide configuration for good (its
#: memory-storage factory, eager checkpoint handlers), and the bare runs must be the
#: kickoff() a user sees. It answers each line "N" with N bare then N quiet timings.
_BARE_WORKER = """
import contextlib, io, json, sys
from benchkit import samples
from crewai_core.printer import _suppress_console_output, set_suppress_console_output
from dispatch_flows import Twelve

def take(n):
    return samples(lambda: Twelve().kickoff(), n)

with contextlib.redirect_stdout(io.StringIO()):  # crewai's Rich panels
    Twelve().kickoff()
for line in sys.stdin:
    with contextlib.redirect_stdout(io.StringIO()):
        bare = take(int(line))
    token = set_suppress_console_output(True)  # crewai's own "print nothing"
    try:
        quiet = take(int(line))
    finally:
        _suppress_console_output.reset(token)
    print("samples", json.dumps([bare, quiet]), flush=True)
"""


def twelve() -> tuple[float, float, float]:
    # The three are measured in alternating rounds, not one after the other: on a shared
    # machine the load drifts, and a drift between blocks would show up as a ratio. The
    # two processes take turns, never running at once.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    worker = subprocess.Popen(
        [sys.executable, "-c", _BARE_WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert worker.stdin is not None and worker.stdout is not None
    with FlowsSession(test_id="bench-twelve") as session:
        session.run(Twelve)  # the harness's one-time imports and configuration
    bare: list[float] = []
    quiet: list[float] = []
    harnessed: list[float] = []
    try:
        for _ in range(max(1, -(-RUNS // ROUND))):
            worker.stdin.write(f"{ROUND}\n")
            worker.stdin.flush()
            line = worker.stdout.readline()
            while line and not line.startswith("samples "):
                line = worker.stdout.readline()  # anything crewai printed unredirected
            round_bare, round_quiet = json.loads(line.removeprefix("samples "))
            bare += round_bare
            # quiet: crewai's console suppressed, as the flows fixture does: what the
            # runtime itself costs on a real pool, without drawing panels.
            quiet += round_quiet
            with FlowsSession(test_id="bench-twelve") as session:
                session.run(Twelve)  # warm, as the bare kickoffs are
                harnessed += samples(lambda: session.run(Twelve), ROUND)
    finally:
        worker.stdin.close()
        worker.wait()
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
