"""Where ``flows.run`` of the 12-method flow spends its time, measured side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_breakdown.py

It splits a harnessed run (``BENCH_RUNS`` runs in alternating rounds) into:
  (b) the crewai runtime: the same flow on a plain event loop with the harness's crewai
      settings (console quiet, sync event handlers inline, the default memory's store the
      in-memory one the harness fakes it with) and its sync methods called inline, so
      that no thread is involved: what no harness can save;
  (c) baton hand-offs: how long each woken thread took to run after it was handed the
      baton (an OS wake-up and the GIL), summed over a run, in separate instrumented runs;
  (a) the harness's own work: the rest (scheduler, deterministic loop, seams, trace).
Then the ratio flows.run / (b) in wall time, and in CPU time of the whole process (every
thread; a load that takes the CPU away between hand-offs does not count), with the load.

``BENCH_BEFORE=/path/to/other/checkout`` measures that checkout's ``pytest_flows`` too, in
rounds alternating with this one's (``side_by_side.py``), and reports both. Each also
counts the Python calls a run makes, flows.run and (b): a measure of work no load moves.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import threading
from collections.abc import Callable
from typing import Any

from benchkit import cpu_samples, memory_faked, samples, wall  # first: crewai's offline settings

# isort: split
import side_by_side
from crewai.events.event_bus import crewai_event_bus
from dispatch_flows import Twelve

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.threads import ThreadScheduler
from pytest_flows.crewai import _patches as patches
from pytest_flows.crewai._adapter import _quiet_console

RUNS = int(os.environ.get("BENCH_RUNS", "60"))
ROUND = 5


class _InlineLoop(asyncio.SelectorEventLoop):
    """Runs work handed to a thread on the loop's own thread; the result arrives on a later
    iteration, as the harness's loop delivers a worker's."""

    def run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> Any:
        future = self.create_future()
        try:
            result = func(*args)
        except BaseException as exc:
            self.call_soon(future.set_exception, exc)
        else:
            self.call_soon(future.set_result, result)
        return future


def runtime_alone() -> None:
    # What Flow.kickoff does around kickoff_async, on a loop without threads.
    scope = crewai_event_bus._enter_runtime_scope()
    try:
        with asyncio.Runner(loop_factory=_InlineLoop) as runner:
            runner.run(Twelve().kickoff_async())
    finally:
        crewai_event_bus._exit_runtime_scope(scope)


def handoff_waits(session: FlowsSession, runs: int) -> tuple[list[float], int]:
    """Per run, the summed time from handing the baton to the woken thread running."""
    handed: dict[int, float] = {}
    waits: list[float] = []
    hand, park = ThreadScheduler._hand, ThreadScheduler._park

    def timed_hand(self: ThreadScheduler, nxt: Any) -> bool:
        handed[id(nxt)] = wall()
        return hand(self, nxt)

    def timed_park(self: ThreadScheduler, me: Any) -> None:
        me._wake.acquire()
        woken = wall()
        since = handed.pop(id(me), None)
        if since is not None:
            waits.append(woken - since)
        if not me.let_go:
            self._check_abort(me)

    per_run: list[float] = []
    count = 0
    ThreadScheduler._hand, ThreadScheduler._park = timed_hand, timed_park  # type: ignore[method-assign]
    try:
        for _ in range(runs):
            waits.clear()
            session.run(Twelve)
            per_run.append(sum(waits))
            count = len(waits)
    finally:
        ThreadScheduler._hand, ThreadScheduler._park = hand, park  # type: ignore[method-assign]
    return per_run, count


#: Python calls a run: flows.run, the runtime alone (counted once: they do not vary).
CALLS: list[float] = []


def warm_up() -> None:
    with FlowsSession(test_id="bench-breakdown") as session:  # one-time imports and config
        session.run(Twelve)
    with _quiet_console(), patches.inline_event_bus(), memory_faked():
        runtime_alone()
    CALLS[:] = python_calls()


class _Calls:
    """Counts Python function calls on every thread started while counting (Python 3.11
    has no profile hook for threads already running): a measure of work no load moves."""

    def __init__(self) -> None:
        self.count = 0

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            self.count += 1

    def __enter__(self) -> _Calls:
        threading.setprofile(self._profile)
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def python_calls(runs: int = 3) -> tuple[float, float]:
    """Python calls a ``flows.run`` of the flow makes (its pool threads started while
    counting, so their calls count too), and a run of the runtime alone."""
    with _Calls() as calls, FlowsSession(test_id="bench-breakdown") as session:
        session.run(Twelve)  # its pool threads start here, counted from now on
        calls.count = 0
        for _ in range(runs):
            session.run(Twelve)
        harnessed = calls.count / runs
    with _quiet_console(), patches.inline_event_bus(), memory_faked(), _Calls() as calls:
        for _ in range(runs):
            runtime_alone()
        alone = calls.count / runs
    return harnessed, alone


def one_round() -> list[float]:
    """Per round: the median of each measure (wall: flows.run, (b), (c), and the number of
    hand-offs; CPU: flows.run, (b)). The medians over rounds of those resist a load that
    drifts from round to round."""
    with _quiet_console(), patches.inline_event_bus(), memory_faked():
        alone = statistics.median(samples(runtime_alone, ROUND))
        alone_cpu = statistics.median(cpu_samples(runtime_alone, ROUND))
    with FlowsSession(test_id="bench-breakdown") as session:
        session.run(Twelve)
        total = statistics.median(samples(lambda: session.run(Twelve), ROUND))
        total_cpu = statistics.median(cpu_samples(lambda: session.run(Twelve), ROUND))
        waits, handoffs = handoff_waits(session, ROUND)
    return [total, alone, statistics.median(waits), handoffs, total_cpu, alone_cpu, *CALLS]


def report(name: str, rounds: list[list[float]]) -> None:
    med = [statistics.median(column) for column in zip(*rounds, strict=True)]
    total, b, c = (x * 1000 for x in med[:3])
    a = statistics.median(r[0] - r[1] - r[2] for r in rounds) * 1000
    rows = [
        ("flows.run", total),
        ("(b) crewai runtime alone, no threads", b),
        (f"(c) {med[3]:.0f} baton hand-offs, waiting to run", c),
        ("(a) harness work (the rest)", a),
    ]
    print(
        f"{name}: 12-method flow (medians over {len(rounds)} rounds of {ROUND} runs, "
        f"Python {sys.version.split()[0]}):"
    )
    for label, ms in rows:
        print(f"  {label:<40} {ms:6.2f} ms  {ms / total:4.0%}")
    run_cpu, alone_cpu = med[4] * 1000, med[5] * 1000
    ratio = statistics.median(r[4] / r[5] for r in rounds)
    print(f"  flows.run / (b), wall time: {total / b:.3f}x")
    print(
        f"  flows.run / (b), CPU time: {run_cpu / alone_cpu:.3f}x "
        f"({run_cpu:.2f} ms against {alone_cpu:.2f} ms; median of the rounds' ratios "
        f"{ratio:.3f}x)"
    )
    print(
        f"  Python calls a run (every thread; no load moves them): flows.run {med[6]:.0f}, "
        f"(b) {med[7]:.0f}: the harness's part {med[6] - med[7]:.0f}"
    )


def main() -> None:
    found = side_by_side.rounds(__file__, max(1, -(-RUNS // ROUND)), warm_up, one_round)
    for name, rounds in found.items():
        report(name, rounds)
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
