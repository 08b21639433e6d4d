"""What exploration costs and what it saves: schedules per second, and schedules needed
versus seed sampling, with and without the reduction, before and after a change.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_explore.py

For each flow: the schedules a complete exploration ran with and without the
reduction (``reduction=False`` capped at ``BENCH_CAP``, default 1000), the outcomes,
schedules per second, and how many seeds (0, 1, 2, ...) seed sampling needed to see
every outcome the exploration found (capped at ``BENCH_SEEDS``, default 200), plus how
many outcomes the seeds reached that the exploration did not (``missed``: a complete
exploration must show 0). ``BENCH_UNREDUCED=0`` skips the run without the reduction
(its column then says ``-``). ``BENCH_FLOWS`` (class names, comma-separated) measures only
those; ``BENCH_BEFORE=/path/to/other/checkout`` runs the same flows there too, in a
subprocess (the code before a change), and prints its table first.
"""

from __future__ import annotations

import os
import subprocess
import sys

from benchkit import HERE, wall  # first: crewai's offline settings, the test flows' path

# isort: split
from access_flows import AliasAppend, GlobalLog, NestedCopy, NestedMethod, RouterLoop
from explore_flows import (
    CheckThenWrite,
    CheckThenWriteSafe,
    LateLoser,
    OwnFields,
    QuietLoser,
    Three,
    ThreeAsync,
)
from reduction_flows import LostUpdateJoined, OwnFieldsJoined, SleepingRacers
from scheduler_flows import GuardedUpdate, LostUpdate
from soundness_flows import (
    AppendOrder,
    GuardedAppends,
    LoserListenerOutput,
    OwnFieldsSleeping,
    RouterReads,
    SleepOrdered,
    SlowOutput,
    StartPastListeners,
    ThreadStartHeldBack,
    TimerAndThread,
    TwoStarts,
)

from pytest_flows import FlowsSession, explore

try:
    from pytest_flows._internal.exploration.outcomes import outcome_key
except ImportError:  # a BENCH_BEFORE checkout from before the _internal/ package move
    from pytest_flows._internal.exploration import outcome_key  # type: ignore[attr-defined,no-redef]

CAP = int(os.environ.get("BENCH_CAP", "1000"))
SEEDS = int(os.environ.get("BENCH_SEEDS", "200"))
CORPUS = [
    OwnFields,
    OwnFieldsSleeping,
    LostUpdate,
    GuardedUpdate,
    CheckThenWrite,
    CheckThenWriteSafe,
    AppendOrder,
    SleepOrdered,
    TwoStarts,
    RouterReads,
    LateLoser,
    QuietLoser,
    SlowOutput,
    TimerAndThread,
    ThreadStartHeldBack,
    GuardedAppends,
    StartPastListeners,
    LoserListenerOutput,
    Three,
    ThreeAsync,
    OwnFieldsJoined,
    LostUpdateJoined,
    SleepingRacers,
    NestedCopy,
    NestedMethod,
    AliasAppend,
    GlobalLog,
    RouterLoop,
]
UNREDUCED = os.environ.get("BENCH_UNREDUCED", "1") != "0"
_ONLY = {name for name in os.environ.get("BENCH_FLOWS", "").split(",") if name}
CORPUS = [flow for flow in CORPUS if not _ONLY or flow.__name__ in _ONLY]


def seeds_needed(flow: type, wanted: set[str]) -> tuple[str, int]:
    """How many seeds saw every wanted outcome, and how many outcomes seeds reached
    that are not wanted (all ``SEEDS`` seeds are run for that)."""
    seen: set[str] = set()
    needed = ""
    for seed in range(SEEDS):
        with FlowsSession(seed=seed, test_id="bench") as session:
            seen.add(outcome_key(session.run(flow, raise_on_error=False)))
        if not needed and wanted <= seen:
            needed = str(seed + 1)
    return needed or f">{SEEDS} ({len(seen & wanted)}/{len(wanted)})", len(seen - wanted)


def main() -> None:
    print(
        f"{'flow':18} {'outcomes':>8} {'reduced':>8} {'complete':>8} {'sched/s':>8} "
        f"{'no reduction':>13} {'seeds needed':>13} {'missed':>6}"
    )
    for flow in CORPUS:
        with FlowsSession(test_id="bench") as session:
            start = wall()
            found = explore(session, flow, max_schedules=CAP)
            took = wall() - start
            full = explore(session, flow, max_schedules=CAP, reduction=False) if UNREDUCED else None
        unreduced = "-" if full is None else f"{full.schedules_run}{'' if full.complete else '+'}"
        rate = found.schedules_run / took if took else float("inf")
        needed, missed = seeds_needed(flow, set(found.texts))
        print(
            f"{flow.__name__:18} {len(found.outcomes):>8} {found.schedules_run:>8} "
            f"{found.complete!s:>8} {rate:>8.0f} {unreduced:>13} {needed:>13} {missed:>6}",
            flush=True,
        )


if __name__ == "__main__":
    before = os.environ.pop("BENCH_BEFORE", "")
    if before:
        print(f"before ({before}):", flush=True)
        # The other checkout's package, this checkout's flows and benchmark.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([before, str(HERE.parent)])}
        subprocess.run([sys.executable, __file__], env=env, check=True)
        print("after (this checkout):", flush=True)
    main()
