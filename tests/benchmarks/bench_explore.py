"""What exploration costs and what it saves: schedules per second, and schedules needed
for the corpus versus seed sampling.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_explore.py

For each corpus flow: the schedules a complete exploration ran with and without the
reduction (``reduction=False`` capped at ``BENCH_CAP``, default 1000), the outcomes,
the wall time, and how many seeds (0, 1, 2, ...) seed sampling needed to see every
one of those outcomes (capped at ``BENCH_SEEDS``, default 200). ``BENCH_FLOWS`` (flow
class names, comma-separated) measures only those.
"""

from __future__ import annotations

import os

from benchkit import wall  # first: crewai's offline settings, the test flows' path
from explore_flows import (
    CheckThenWrite,
    CheckThenWriteSafe,
    LateLoser,
    OwnFields,
    QuietLoser,
    Three,
    ThreeAsync,
)
from scheduler_flows import GuardedUpdate, LostUpdate

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration import outcome_key

CAP = int(os.environ.get("BENCH_CAP", "1000"))
SEEDS = int(os.environ.get("BENCH_SEEDS", "200"))
CORPUS = [
    OwnFields,
    LostUpdate,
    GuardedUpdate,
    CheckThenWrite,
    CheckThenWriteSafe,
    LateLoser,
    QuietLoser,
    Three,
    ThreeAsync,
]
_ONLY = {name for name in os.environ.get("BENCH_FLOWS", "").split(",") if name}
CORPUS = [flow for flow in CORPUS if not _ONLY or flow.__name__ in _ONLY]


def seeds_needed(flow: type, wanted: set[str]) -> str:
    seen: set[str] = set()
    for seed in range(SEEDS):
        with FlowsSession(seed=seed, test_id="bench") as session:
            seen.add(outcome_key(session.run(flow, raise_on_error=False)))
        if wanted <= seen:
            return str(seed + 1)
    return f">{SEEDS} ({len(seen & wanted)}/{len(wanted)})"


def main() -> None:
    print(
        f"{'flow':20} {'outcomes':>8} {'reduced':>8} {'complete':>8} {'sched/s':>8} "
        f"{'no reduction':>13} {'seeds needed':>13}"
    )
    for flow in CORPUS:
        with FlowsSession(test_id="bench") as session:
            start = wall()
            found = explore(session, flow, max_schedules=CAP)
            took = wall() - start
            full = explore(session, flow, max_schedules=CAP, reduction=False)
        unreduced = f"{full.schedules_run}{'' if full.complete else '+'}"
        rate = found.schedules_run / took if took else float("inf")
        print(
            f"{flow.__name__:20} {len(found.outcomes):>8} {found.schedules_run:>8} "
            f"{found.complete!s:>8} {rate:>8.0f} {unreduced:>13} "
            f"{seeds_needed(flow, set(found.texts)):>13}",
            flush=True,
        )


if __name__ == "__main__":
    main()
