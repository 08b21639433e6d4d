"""What the crewai benchmarks share. Import it before crewai: it sets crewai's offline
settings, puts the test flows (``tests/crewai``) on the path, and times with a clock
the harness does not virtualise."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "crewai"))
os.environ.update(
    OTEL_SDK_DISABLED="true",
    CREWAI_DISABLE_TELEMETRY="true",
    CREWAI_TRACING_ENABLED="false",
    CREWAI_TESTING="true",
    CREWAI_DISABLE_VERSION_CHECK="true",
)


def wall() -> float:
    # The harness makes time.perf_counter virtual; the OS clock stays real.
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def cpu_samples(fn: Callable[[], object], runs: int) -> list[float]:
    """``runs`` timings of ``fn()`` in CPU seconds of the whole process (every thread):
    a load that takes the CPU away between hand-offs does not count."""
    taken = []
    for _ in range(runs):
        started = time.process_time()
        fn()
        taken.append(time.process_time() - started)
    return taken


def samples(fn: Callable[[], object], runs: int) -> list[float]:
    """``runs`` wall timings of ``fn()``, in seconds."""
    taken = []
    for _ in range(runs):
        started = wall()
        fn()
        taken.append(wall() - started)
    return taken


@contextlib.contextmanager
def memory_faked() -> Iterator[None]:
    """A flow's default ``Memory`` gets an in-memory store, the one the harness gives it
    (storage is an edge the harness fakes): the runtime measured alone must not pay for
    LanceDB's connection, which no harnessed run makes."""
    from crewai.memory.storage import factory

    from pytest_flows.crewai._memory import DEFAULT_SPEC, InMemoryStorage

    previous = factory._factory
    factory.set_memory_storage_factory(
        lambda spec: InMemoryStorage() if spec == DEFAULT_SPEC else None
    )
    try:
        yield
    finally:
        factory.set_memory_storage_factory(previous)
