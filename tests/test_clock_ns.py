"""Virtual time in whole nanoseconds: a wait of d never reads less than d on any clock."""

from __future__ import annotations

import asyncio
import datetime
import random
import time

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.loop import VirtualClock
from pytest_flows._internal.runtime.virtual_clocks import epoch_ns


def test_a_wait_never_reads_shorter_on_the_float_clocks_from_any_reading() -> None:
    rng = random.Random(25)
    wall = epoch_ns(datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC))
    for _ in range(2000):
        clock = VirtualClock()
        clock.wall_epoch_ns = wall
        clock.advance_to(rng.uniform(0, 10_000))
        wait = rng.choice([0.05, 0.1, 0.3, 1e-6, 1.5e-7, rng.uniform(0, 5)])
        before, before_ns = clock.monotonic(), clock.monotonic_ns()
        clock.advance_to(clock.after(wait))
        assert clock.monotonic() - before >= wait
        assert (wall + clock.monotonic_ns()) / 1e9 - (wall + before_ns) / 1e9 >= wait
        spent = clock.monotonic_ns() - before_ns
        assert spent >= wait * 1e9
        assert spent - wait * 1e9 < 1000  # at most a fraction of a microsecond more


def test_a_round_wait_moves_the_count_by_exactly_its_nanoseconds() -> None:
    clock = VirtualClock()
    for wait, ns in [(0.05, 50_000_000), (30, 30_000_000_000), (1.5, 1_500_000_000)]:
        before = clock.monotonic_ns()
        clock.advance(wait)
        assert clock.monotonic_ns() - before == ns


def test_asyncio_sleep_reads_at_least_its_duration_on_every_clock() -> None:
    async def measure() -> list[float]:
        t0, p0, w0 = time.monotonic(), time.perf_counter(), time.time()
        await asyncio.sleep(0.05)
        return [time.monotonic() - t0, time.perf_counter() - p0, time.time() - w0]

    with FlowsSession(test_id="clock-ns") as session:
        for _ in range(5):
            assert all(spent >= 0.05 for spent in asyncio.run(measure()))
        assert session.scheduler.clock.monotonic() >= 0.25
