"""Virtual time passes as real time does for work the harness cannot manage (issue 40).

Framework-free, on bare threads and asyncio:

* Outside any run (a test body that drives a pool itself) the test's own threads sleep
  in real time and nobody holds the clock for them: the clock follows each such sleep,
  by the span asked for, overlapping sleeps counted once. A library's thread started
  before the test moves nothing.
* A flow thread the liveness guard found blocked outside the scheduler (it waits in a C
  ``SimpleQueue``, as aiosqlite's connection thread does) runs outside it from then on:
  while it does real work for the loop, a timer must not fire in virtual time.

Bare, each scenario gives what is asserted here; before issue 40's fix the first read 0
elapsed and the second timed out. The real sleeps and the CPU work are a few
milliseconds: they are what the rule is about.
"""

from __future__ import annotations

import _queue
import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.loop import Scheduler, run

#: Real seconds of one sleep.
NAP = 0.01


def test_the_test_threads_own_sleep_moves_the_clock_by_its_span() -> None:
    with FlowsSession(test_id="real-work::own-sleep") as session:
        start = time.perf_counter()
        time.sleep(NAP)
        elapsed = time.perf_counter() - start
        assert session.clock.monotonic() == pytest.approx(NAP, abs=1e-6)
    assert elapsed == pytest.approx(NAP, abs=1e-6)


def test_a_pool_the_test_drives_overlaps_its_sleeps_and_adds_up_the_rest() -> None:
    with FlowsSession(test_id="real-work::pool") as session, ThreadPoolExecutor(2) as pool:
        start = time.perf_counter()
        side_by_side = [pool.submit(time.sleep, NAP) for _ in range(2)]
        for future in side_by_side:
            future.result()
        parallel = time.perf_counter() - start
        pool.submit(time.sleep, NAP).result()
        pool.submit(time.sleep, NAP).result()
        total = time.perf_counter() - start
        assert session.clock.monotonic() == pytest.approx(3 * NAP, abs=1e-6)
    assert parallel == pytest.approx(NAP, abs=1e-6)
    assert total == pytest.approx(3 * NAP, abs=1e-6)


def test_a_thread_started_before_the_test_moves_nothing() -> None:
    stop = threading.Event()
    naps = []

    def heartbeat() -> None:
        while not stop.is_set():
            time.sleep(NAP / 2)
            naps.append(1)

    beating = threading.Thread(target=heartbeat, name="heartbeat", daemon=True)
    beating.start()
    try:
        with FlowsSession(test_id="real-work::heartbeat") as session:
            seen = len(naps)
            while len(naps) < seen + 3:  # three of its sleeps inside the test
                stop.wait(NAP)  # a real wait of the test's, not a sleep
            assert session.clock.monotonic() == 0.0
    finally:
        stop.set()
        beating.join()


def _cpu(n: int) -> int:
    """Real work on the CPU, with no switch point in it."""
    total = 0
    for i in range(n):
        total += i
    return total


async def _served_by_a_thread_outside(unit: float) -> list[int]:
    """An aiosqlite-like connection: a thread that waits for jobs in a C ``SimpleQueue``
    (the harness cannot manage it) and answers the loop with ``call_soon_threadsafe``;
    each answer is awaited under a one-second timeout, far above its real cost."""
    jobs: _queue.SimpleQueue[tuple[asyncio.Future[int], int] | None] = _queue.SimpleQueue()
    loop = asyncio.get_running_loop()

    def serve() -> None:
        while (job := jobs.get()) is not None:
            future, n = job
            answer = _cpu(n)
            loop.call_soon_threadsafe(
                lambda f=future, a=answer: f.done() or f.set_result(a)  # type: ignore[misc]
            )

    server = threading.Thread(target=serve, name="outside-server")
    server.start()
    answers = []
    try:
        for _ in range(3):
            future: asyncio.Future[int] = loop.create_future()
            jobs.put((future, 200_000))
            answers.append(await asyncio.wait_for(future, unit))
    finally:
        jobs.put(None)
        server.join()
    return answers


@pytest.mark.filterwarnings("ignore:a flow thread blocked outside the scheduler")
def test_a_timer_does_not_fire_while_a_flow_thread_outside_does_real_work() -> None:
    scheduler = Scheduler(seed=0)
    held_in_trace = []
    scheduler.threads.real_work.on_hold = held_in_trace.append
    wall = time.clock_gettime(time.CLOCK_MONOTONIC)

    answers = run(_served_by_a_thread_outside(1.0), scheduler)

    assert answers == [_cpu(200_000)] * 3  # bare: three answers, no timeout
    assert scheduler.clock.monotonic() < 1.0
    held = scheduler.threads.real_work.held
    assert any(h.what.startswith("flow thread 'outside-server'") for h in held), held
    assert held_in_trace == []  # the flow's own thread: not a trace line
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - wall < 10
