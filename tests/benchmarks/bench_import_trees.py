"""The plugin's own import cost at start-up, this checkout against another, side by side.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    git archive OLD_COMMIT | tar -x -C /tmp/before
    .venv/bin/python tests/benchmarks/bench_import_trees.py /tmp/before [RUNS]

Each run imports pytest and the plugin module in a fresh interpreter with ``-X importtime``
and sums pytest_flows' own modules, alternating the two trees (each pair in the other order
than the last, so a busy machine slows both alike). Prints the module count, the best and
the median milliseconds of each. ``bench_startup.py`` measures the whole start-up against
``-p no:flows``; this one isolates what a change of layout costs.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

CODE = "import pytest, pytest_flows._internal.plugin"


def _own_ms(tree: str | None) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree:
        env["PYTHONPATH"] = tree
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", CODE],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree or None,
        check=True,
    )
    total, count = 0, 0
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.split("|")[-1].strip().startswith(
            "pytest_flows"
        ):
            total += int(line.split("|")[0].split(":")[1])
            count += 1
    return total / 1000, count


def main() -> None:
    other = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    results: dict[str, list[tuple[float, int]]] = {"other": [], "this": []}
    for i in range(runs):
        order = [("other", other), ("this", None)]
        for name, tree in order if i % 2 == 0 else reversed(order):
            results[name].append(_own_ms(tree))
    for name, values in results.items():
        ms = [m for m, _ in values]
        print(
            f"{name:5}: {values[0][1]} pytest_flows modules, best {min(ms):.1f} ms, "
            f"median {statistics.median(ms):.1f} ms"
        )


if __name__ == "__main__":
    main()
