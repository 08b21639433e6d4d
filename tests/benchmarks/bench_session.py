"""What opening and closing a flows session costs, with freezegun's module scan
remembered (clock_scan.py) and without, side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_session.py

Every flows test opens one session, which starts freezegun, which looks through
every loaded module (here crewAI's and Agent Framework's: the modules a real suite
has loaded) for the real clock functions. Rounds alternate the two ways, so a busy
machine slows both alike; the CPU time of this thread is printed beside the wall time.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from importlib.metadata import version

from benchkit import wall  # first: crewai's offline settings

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime import clock_scan

RUNS = int(os.environ.get("BENCH_RUNS", "40"))


@contextlib.contextmanager
def scanned_every_time() -> Iterator[None]:
    """freezegun's own check (sort and hash each module's names) on every start."""
    keep = clock_scan.remembering_scan
    clock_scan.remembering_scan = lambda scan: scan  # type: ignore[assignment]
    import pytest_flows._internal.identity as identity

    identity.remembering_scan = clock_scan.remembering_scan  # type: ignore[attr-defined]
    try:
        yield
    finally:
        clock_scan.remembering_scan = keep  # type: ignore[assignment]
        identity.remembering_scan = keep  # type: ignore[attr-defined]


def one_session() -> tuple[float, float]:
    started, cpu = wall(), time.thread_time()
    with FlowsSession(test_id="bench-session"):
        pass
    return wall() - started, time.thread_time() - cpu


def main() -> None:
    import agent_framework  # noqa: F401  (the modules a real suite has loaded)
    import crewai  # noqa: F401

    print(f"{len(sys.modules)} modules loaded, freezegun {version('freezegun')}")
    one_session()  # the first start scans every module either way
    taken: dict[str, list[tuple[float, float]]] = {"remembered": [], "every time": []}
    for index in range(RUNS):
        for way in ("remembered", "every time") if index % 2 else ("every time", "remembered"):
            with scanned_every_time() if way == "every time" else contextlib.nullcontext():
                taken[way].append(one_session())
    for way, runs in taken.items():
        walls, cpus = zip(*runs, strict=True)
        print(
            f"{way:>10}: median wall {1000 * statistics.median(walls):6.1f} ms, "
            f"CPU {1000 * statistics.median(cpus):6.1f} ms per session ({RUNS} sessions)"
        )
    ratio = statistics.median(c for _, c in taken["remembered"]) / statistics.median(
        c for _, c in taken["every time"]
    )
    print(f"remembered / every time (CPU): {ratio:.2f}x")


if __name__ == "__main__":
    main()
