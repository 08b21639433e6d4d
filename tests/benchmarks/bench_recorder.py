"""The flight recorder's overhead, side by side in one run.

Not collected by pytest; run it:

    .venv/bin/python tests/benchmarks/bench_recorder.py

It prints, as medians over alternating pairs (which side runs first alternates too,
with a short pause between pairs so a pair does not pay for the one before):
  1. a warm bare ``kickoff()`` of a 12-method flow without and with the recorder on
     (sample=1.0: every run recorded; the write happens on the writer thread), and
     the ratio (target: at most 1.05); beside them the process's CPU time (all
     threads; the recorded side's until its record is written), which other processes
     on the machine disturb less;
  2. the same with sample=0.1 (nine runs in ten pay only the sampling draw);
  3. runs back to back: ``BATCH`` kickoffs in a row without and with the recorder
     (sample=1.0), so the writer thread's work lands between and inside the runs, as
     in a busy process; the ratio of the batches' medians;
  4. the recorder's own work per run on the flow's thread, timed inside it (the event
     sink, the start and the end of a record), and the writer thread's per record
     (scrub, encode, compress, write), as thread CPU time: figures the machine's noise
     barely moves;
  5. the record's size per run, compressed and not.

The environment holds a (fake) provider key, as a production process does: the
writer scrubs every record for it.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchkit import wall  # first: crewai's offline settings
from dispatch_flows import Twelve

from pytest_flows.recorder import record_flows, stop_recording

PAIRS = int(os.environ.get("BENCH_RUNS", "100"))
BATCH = 10
GAP = 0.01  # seconds between pairs
os.environ.setdefault("OPENAI_API_KEY", "sk-proj-bench0000fake1111key2222not3333real4444")


def once() -> tuple[float, float]:
    """Wall and process CPU seconds (every thread: the flow's, crewAI's event handlers')
    of one kickoff."""
    started, cpu = wall(), time.process_time()
    Twelve().kickoff()
    return wall() - started, time.process_time() - cpu


def compare(directory: Path, sample: float) -> tuple[float, float, float, float]:
    """Medians: wall without, wall with, process CPU without, with (the recorded side's
    CPU includes its record's write, waited for after the kickoff)."""
    bare, recorded, bare_cpu, recorded_cpu = [], [], [], []
    for pair in range(PAIRS):
        order = ("bare", "recorded") if pair % 2 == 0 else ("recorded", "bare")
        for side in order:
            if side == "recorded":
                recorder = record_flows(directory, sample=sample, frameworks=["crewai"])
                cpu = time.process_time()
                recorded.append(once()[0])
                stop_recording()  # waits for the writer: the next bare run pays nothing
                recorded_cpu.append(time.process_time() - cpu)
                del recorder
            else:
                taken, spent = once()
                bare.append(taken)
                bare_cpu.append(spent)
        time.sleep(GAP)
    return (
        statistics.median(bare),
        statistics.median(recorded),
        statistics.median(bare_cpu),
        statistics.median(recorded_cpu),
    )


def batches(directory: Path) -> tuple[float, float]:
    """Medians of ``BATCH`` kickoffs back to back, without and with the recorder."""
    bare, recorded = [], []
    for pair in range(max(PAIRS // 5, 5)):
        order = ("bare", "recorded") if pair % 2 == 0 else ("recorded", "bare")
        for side in order:
            if side == "recorded":
                record_flows(directory, sample=1.0, frameworks=["crewai"])
            started = wall()
            for _ in range(BATCH):
                Twelve().kickoff()
            if side == "recorded":
                stop_recording()  # the batch waits for its last records too
                recorded.append(wall() - started)
            else:
                bare.append(wall() - started)
        time.sleep(GAP)
    return statistics.median(bare) / BATCH, statistics.median(recorded) / BATCH


def own_work(directory: Path, runs: int = 50) -> tuple[float, float]:
    """CPU seconds per run spent inside the recorder: on the flow's thread (sink, begin,
    finish), and on the writer thread (the write job: scrub, encode, compress, write)."""
    from pytest_flows._internal.flight import capture, writer
    from pytest_flows.recorder import _crewai

    spent = {"flow": 0.0, "writer": 0.0}

    def timed(fn, where):  # type: ignore[no-untyped-def]
        # The thread's CPU time: not the time it waited for the interpreter while
        # crewAI's event handlers (its console output) ran on their own threads.
        def inner(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[where] += time.thread_time() - started

        return inner

    sink_call = _crewai.CrewAISink.__call__
    begin, finish = capture.begin, capture.RunRecording.finish
    submit = writer.Writer.submit
    _crewai.CrewAISink.__call__ = timed(sink_call, "flow")  # type: ignore[method-assign]
    _crewai.capture.begin = timed(begin, "flow")  # type: ignore[attr-defined]
    capture.RunRecording.finish = timed(finish, "flow")  # type: ignore[method-assign]

    def timed_submit(self, job):  # type: ignore[no-untyped-def]
        return submit(self, timed(job, "writer"))

    writer.Writer.submit = timed_submit  # type: ignore[method-assign]
    try:
        record_flows(directory, sample=1.0, frameworks=["crewai"])
        for _ in range(runs):
            Twelve().kickoff()
            time.sleep(GAP)  # the writer's job alone, not sharing the interpreter
        stop_recording()
    finally:
        _crewai.CrewAISink.__call__ = sink_call  # type: ignore[method-assign]
        _crewai.capture.begin = begin  # type: ignore[attr-defined]
        capture.RunRecording.finish = finish  # type: ignore[method-assign]
        writer.Writer.submit = submit  # type: ignore[method-assign]
    return spent["flow"] / runs, spent["writer"] / runs


def main() -> None:
    sink = io.StringIO()
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(sink):
        directory = Path(scratch)
        Twelve().kickoff()  # warm
        full = compare(directory / "all", 1.0)
        tenth = compare(directory / "tenth", 0.1)
        batch = batches(directory / "batch")
        work, written = own_work(directory / "work")
        records = sorted((directory / "all").glob("*.gz"))
        compressed = statistics.median(p.stat().st_size for p in records)
        raw = statistics.median(len(gzip.decompress(p.read_bytes())) for p in records)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"pairs: {PAIRS}; load average (1, 5, 15 min): {load} on {os.cpu_count()} cores")
    for label, (bare, recorded, bare_cpu, recorded_cpu) in (
        ("sample=1.0", full),
        ("sample=0.1", tenth),
    ):
        print(
            f"bare kickoff {bare * 1e3:.2f} ms, with the recorder ({label}) "
            f"{recorded * 1e3:.2f} ms: {recorded / bare:.3f}x; process CPU "
            f"{bare_cpu * 1e3:.2f} ms and {recorded_cpu * 1e3:.2f} ms (with its write): "
            f"{recorded_cpu / bare_cpu:.3f}x"
        )
    print(
        f"{BATCH} kickoffs back to back: {batch[0] * 1e3:.2f} ms a run bare, "
        f"{batch[1] * 1e3:.2f} ms with the recorder (sample=1.0): {batch[1] / batch[0]:.3f}x"
    )
    print(
        f"the recorder's own work (CPU) per run: {work * 1e3:.2f} ms on the flow's thread "
        f"({work / full[0]:.1%} of a bare kickoff), {written * 1e3:.2f} ms on the writer's "
        f"({written / full[0]:.1%})"
    )
    print(f"record per run (12 methods): {compressed:.0f} bytes gzip, {raw:.0f} bytes JSON lines")


if __name__ == "__main__":
    main()
