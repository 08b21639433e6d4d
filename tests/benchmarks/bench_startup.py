"""What the plugin adds to a pytest run that uses no flow fixture, side by side.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_startup.py [RUNS]

It runs one plain test in fresh interpreters, alternating the default plugin set
and ``-p no:flows`` (so a busy machine slows both alike; each pair in the other
order than the last), RUNS times each (default 100: one run varies by tens of ms
on a shared machine), and prints the medians, the median of the paired
differences (in wall time and in CPU time) and the import time of pytest_flows'
own modules (``-X importtime``; target: the plugin adds at most 10 ms).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _wall() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cwd: str, extra: list[str], importtime: bool = False) -> tuple[float, float, str]:
    command = [sys.executable, *(["-X", "importtime"] if importtime else [])]
    command += ["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plain.py", *extra]
    # Bytecode is cached, as on a user's machine (some sandboxes turn that off, and
    # then every run would measure compiling the plugin rather than importing it).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started, cpu = _wall(), _cpu_of_children()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return _wall() - started, _cpu_of_children() - cpu, done.stderr


def _own_import_ms(stderr: str) -> tuple[float, int]:
    total, count = 0, 0
    for line in stderr.splitlines():
        # The module's name, not the line: an editable install's finder
        # (__editable___pytest_flows_..._finder) loads with the interpreter, plugin or not.
        if line.startswith("import time:") and line.split("|")[-1].strip().startswith(
            "pytest_flows"
        ):
            total += int(line.split("|")[0].split(":")[1])
            count += 1
    return total / 1000, count


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "test_plain.py").write_text("def test_plain():\n    assert True\n")
        _run(tmp, [])  # warm the file cache and the bytecode
        with_plugin, without, deltas, cpu_deltas = [], [], [], []
        for i in range(runs):
            # Each pair in the other order than the last, so neither side is always second.
            if i % 2:
                b, b_cpu, _ = _run(tmp, ["-p", "no:flows"])
                a, a_cpu, _ = _run(tmp, [])
            else:
                a, a_cpu, _ = _run(tmp, [])
                b, b_cpu, _ = _run(tmp, ["-p", "no:flows"])
            with_plugin.append(a)
            without.append(b)
            deltas.append(a - b)
            cpu_deltas.append(a_cpu - b_cpu)
        own = [_own_import_ms(_run(tmp, [], importtime=True)[2]) for _ in range(5)]
    print(
        f"pytest start-up, one plain test, {runs} interleaved pairs "
        f"(Python {sys.version.split()[0]})"
    )
    print(
        f"  default {statistics.median(with_plugin) * 1000:.0f} ms, -p no:flows "
        f"{statistics.median(without) * 1000:.0f} ms; the plugin adds "
        f"{statistics.median(deltas) * 1000:+.1f} ms (median of the pairs' differences; "
        "target <= 10 ms)"
    )
    print(
        f"  in CPU time (user + system of the run): the plugin adds "
        f"{statistics.median(cpu_deltas) * 1000:+.1f} ms (median of the pairs' differences)"
    )
    ms, modules = min(own)
    print(f"  pytest_flows' modules at start-up: {modules}, {ms:.1f} ms to import (best of 5)")


if __name__ == "__main__":
    main()
