"""Rounds of a benchmark in two checkouts at once, alternating, so one load weighs on both.

A benchmark that takes ``BENCH_BEFORE=/path/to/other/checkout`` runs through :func:`rounds`:
it starts itself twice as a worker (``BENCH_WORKER=1``), once on that checkout's
``pytest_flows`` and once on this one's (both with this checkout's flows and benchmarks),
warms both up, then asks each for one round in turn, the order swapped every round (a
load that rises or falls during the run weighs on both alike). Without ``BENCH_BEFORE`` it
runs the rounds in this process. Each round is a JSON value; the benchmark reports the
list of them per checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def rounds(
    script: str, count: int, warm_up: Callable[[], None], one_round: Callable[[], Any]
) -> dict[str, list[Any]]:
    """``count`` rounds of ``one_round()``: ``{"this checkout": [...]}``, and with
    ``BENCH_BEFORE`` also ``{"before (<path>)": [...]}`` first, alternating with it."""
    if os.environ.get("BENCH_WORKER") == "1":
        warm_up()
        print("ready", flush=True)
        for _ in sys.stdin:
            print(json.dumps(one_round()), flush=True)
        sys.exit(0)
    before = os.environ.get("BENCH_BEFORE", "")
    if not before:
        warm_up()
        return {"this checkout": [one_round() for _ in range(count)]}
    trees = {f"before ({before})": before, "this checkout": str(HERE.parent.parent)}
    workers = {name: _worker(script, tree) for name, tree in trees.items()}
    found: dict[str, list[Any]] = {name: [] for name in trees}
    try:
        for k in range(count):
            order = list(workers.items())
            for name, worker in order if k % 2 == 0 else order[::-1]:
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write("go\n")
                worker.stdin.flush()
                found[name].append(json.loads(worker.stdout.readline()))
    finally:
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait()
    return found


def _worker(script: str, tree: str) -> subprocess.Popen[str]:
    # The checkout's package first; this checkout's flows and benchmarks (benchkit adds
    # the flows' directory itself).
    env = {
        **os.environ,
        "BENCH_WORKER": "1",
        "PYTHONPATH": os.pathsep.join([tree, str(HERE)]),
    }
    env.pop("BENCH_BEFORE", None)
    worker = subprocess.Popen(
        [sys.executable, script],
        env=env,
        cwd=tree,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None
    line = worker.stdout.readline().strip()
    if line != "ready":
        raise RuntimeError(f"the benchmark worker in {tree} did not start (said {line!r})")
    return worker
