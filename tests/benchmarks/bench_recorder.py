"""The flight recorder's overhead, side by side in one run.

Not collected by pytest; run it:

    .venv/bin/python tests/benchmarks/bench_recorder.py

It prints, as medians over alternating pairs (which side runs first alternates too):
  1. a warm bare ``kickoff()`` of a 12-method flow without and with the recorder on
     (sample=1.0: every run recorded; the write happens on the writer thread), and
     the ratio (target: at most 1.05);
  2. the same with sample=0.1 (nine runs in ten pay only the sampling draw);
  3. the recorder's own work per run, timed inside it (the event sink, the start and
     the end of a record): a figure the machine's noise barely moves;
  4. the record's size per run, compressed and not.
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


def own_work(directory: Path, runs: int = 50) -> float:
    """Seconds per run spent inside the recorder (sink, begin, finish) on the flow's thread."""
    from pytest_flows._internal.flight import capture
    from pytest_flows.recorder import _crewai

    spent = [0.0]

    def timed(fn):  # type: ignore[no-untyped-def]
        def inner(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = wall()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[0] += wall() - started

        return inner

    sink_call = _crewai.CrewAISink.__call__
    begin, finish = capture.begin, capture.RunRecording.finish
    _crewai.CrewAISink.__call__ = timed(sink_call)  # type: ignore[method-assign]
    _crewai.capture.begin = timed(begin)  # type: ignore[attr-defined]
    capture.RunRecording.finish = timed(finish)  # type: ignore[method-assign]
    try:
        record_flows(directory, sample=1.0, frameworks=["crewai"])
        for _ in range(runs):
            Twelve().kickoff()
        stop_recording()
    finally:
        _crewai.CrewAISink.__call__ = sink_call  # type: ignore[method-assign]
        _crewai.capture.begin = begin  # type: ignore[attr-defined]
        capture.RunRecording.finish = finish  # type: ignore[method-assign]
    return spent[0] / runs


def main() -> None:
    sink = io.StringIO()
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(sink):
        directory = Path(scratch)
        Twelve().kickoff()  # warm
        full = compare(directory / "all", 1.0)
        tenth = compare(directory / "tenth", 0.1)
        work = own_work(directory / "work")
        records = sorted((directory / "all").glob("*.gz"))
        compressed = statistics.median(p.stat().st_size for p in records)
        raw = statistics.median(len(gzip.decompress(p.read_bytes())) for p in records)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"pairs: {PAIRS}; load average (1, 5, 15 min): {load} on {os.cpu_count()} cores")
    for label, (bare, recorded) in (("sample=1.0", full), ("sample=0.1", tenth)):
        print(
            f"bare kickoff {bare * 1e3:.2f} ms, with the recorder ({label}) "
            f"{recorded * 1e3:.2f} ms: {recorded / bare:.3f}x"
        )
    print(
        f"the recorder's own work per run: {work * 1e3:.2f} ms "
        f"({work / full[0]:.1%} of a bare kickoff)"
    )
    print(f"record per run (12 methods): {compressed:.0f} bytes gzip, {raw:.0f} bytes JSON lines")


if __name__ == "__main__":
    main()
