"""What ``--flows-cov`` costs: the wall time of a pytest run with and without it.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_coverage.py [PATHS...]

PATHS default to the project's suite and examples (``tests examples``). Runs
alternate (without, with, without, ...) so load on the machine hits both alike;
``BENCH_RUNS`` (default 3) pairs are timed and the medians printed, with the
coverage figure of the last run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
TIMEOUT = float(os.environ.get("BENCH_TIMEOUT", "1800"))  # seconds, per pytest run
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]


def timed(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([*BASE, *args], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    wall = time.perf_counter() - start
    summary = done.stdout.strip().splitlines()[-1:] or ["?"]
    print(f"  {wall:7.2f} s  pytest {' '.join(args)}: {summary[0]}", flush=True)
    if done.returncode not in (0, 1):  # 1: a failing test is still a measured run
        sys.exit(f"pytest {' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    return wall, done.stdout


def main() -> None:
    paths = sys.argv[1:] or ["tests", "examples"]
    without: list[float] = []
    with_cov: list[float] = []
    last = ""
    for _ in range(RUNS):
        without.append(timed(paths)[0])
        wall, last = timed([*paths, "--flows-cov"])
        with_cov.append(wall)
    plain, covered = statistics.median(without), statistics.median(with_cov)
    figure = next((line for line in last.splitlines() if "flows coverage:" in line), "?")
    print(f"pytest {' '.join(paths)}, median of {RUNS}")
    print(f"  without --flows-cov: {plain:7.2f} s  {sorted(round(w, 2) for w in without)}")
    print(f"  with    --flows-cov: {covered:7.2f} s  {sorted(round(w, 2) for w in with_cov)}")
    print(f"  overhead: {covered - plain:+.2f} s ({100 * (covered - plain) / plain:+.1f}%)")
    print(f"  {figure.strip('- ')}")


if __name__ == "__main__":
    main()
