"""The flight recorder's overhead, side by side in one run.

Not collected by pytest; run it:

    .venv/bin/python tests/benchmarks/bench_recorder.py

It prints, as medians over alternating pairs (which side runs first alternates too):
  1. a warm bare ``kickoff()`` of a 12-method flow without and with the recorder on
     (sample=1.0: every run recorded; the write happens on the writer thread), and
     the ratio (target: at most 1.05);
  2. the same with sample=0.1 (nine runs in ten pay only the sampling draw);
  3. the record's size per run, compressed and not.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import statistics
import tempfile
from pathlib import Path

from benchkit import wall  # first: crewai's offline settings
from dispatch_flows import Twelve

from pytest_flows.recorder import record_flows, stop_recording

PAIRS = int(os.environ.get("BENCH_RUNS", "100"))


def once() -> float:
    started = wall()
    Twelve().kickoff()
    return wall() - started


def compare(directory: Path, sample: float) -> tuple[float, float]:
    bare, recorded = [], []
    for pair in range(PAIRS):
        order = ("bare", "recorded") if pair % 2 == 0 else ("recorded", "bare")
        for side in order:
            if side == "recorded":
                recorder = record_flows(directory, sample=sample, frameworks=["crewai"])
                recorded.append(once())
                stop_recording()  # waits for the writer: the next bare run pays nothing
                del recorder
            else:
                bare.append(once())
    return statistics.median(bare), statistics.median(recorded)


def main() -> None:
    sink = io.StringIO()
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(sink):
        directory = Path(scratch)
        Twelve().kickoff()  # warm
        full = compare(directory / "all", 1.0)
        tenth = compare(directory / "tenth", 0.1)
        records = sorted((directory / "all").glob("*.gz"))
        compressed = statistics.median(p.stat().st_size for p in records)
        raw = statistics.median(len(gzip.decompress(p.read_bytes())) for p in records)
    print(f"pairs: {PAIRS}")
    for label, (bare, recorded) in (("sample=1.0", full), ("sample=0.1", tenth)):
        print(
            f"bare kickoff {bare * 1e3:.2f} ms, with the recorder ({label}) "
            f"{recorded * 1e3:.2f} ms: {recorded / bare:.3f}x"
        )
    print(f"record per run (12 methods): {compressed:.0f} bytes gzip, {raw:.0f} bytes JSON lines")


if __name__ == "__main__":
    main()
