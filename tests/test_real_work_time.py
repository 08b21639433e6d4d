"""Virtual time passes as real time does for work the harness cannot manage (issue 40).

Framework-free, on bare threads and asyncio:

* Outside any run (a test body that drives a pool itself) the test's own threads sleep
  in real time and nobody holds the clock for them: the clock follows each such sleep,
  by the span asked for, overlapping sleeps counted once. A library's thread started
  before the test moves nothing.
* A flow thread the liveness guard found blocked outside the scheduler (it waits in a C
  ``SimpleQueue`` imported directly) runs outside it from then on: while it does real
  work for the loop, a timer must not fire in virtual time.

Bare, each scenario gives what is asserted here; before issue 40's fix the first read 0
elapsed and the second timed out. The rules are about what the harness does with real
time, not how much passes: the real sleeps are faked (fake_real_time.py, the harness's
real sleep and the OS probe substituted with ``real_work.faked``), so these tests wait
for nothing but one, which needs the liveness guard's real grace (it says why).
"""

from __future__ import annotations

import _queue
import asyncio
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest
from fake_real_time import FakeRealTime

from pytest_flows import FlowsSession, FlowsWarning
from pytest_flows._internal.runtime import real_work
from pytest_flows._internal.runtime.loop import Scheduler, VirtualClock, run
from pytest_flows._internal.runtime.threads import ThreadScheduler

#: Seconds of one sleep: faked, so it costs no real time.
NAP = 2.0


def test_the_test_threads_own_sleep_moves_the_clock_by_its_span() -> None:
    fake = FakeRealTime()
    with FlowsSession(test_id="real-work::own-sleep") as session, real_work.faked(sleep=fake.sleep):
        start = time.perf_counter()
        time.sleep(NAP)
        elapsed = time.perf_counter() - start
        assert session.clock.monotonic() == pytest.approx(NAP, abs=1e-6)
    assert fake.slept == [NAP]  # a real sleep: the harness does not manage the thread
    assert elapsed == pytest.approx(NAP, abs=1e-6)


def test_a_pool_the_test_drives_overlaps_its_sleeps_and_adds_up_the_rest() -> None:
    fake = FakeRealTime(side_by_side=2)
    with (
        FlowsSession(test_id="real-work::pool") as session,
        real_work.faked(sleep=fake.sleep),
        ThreadPoolExecutor(2) as pool,
    ):
        start = time.perf_counter()
        side_by_side = [pool.submit(time.sleep, NAP) for _ in range(2)]
        for future in side_by_side:
            future.result()
        parallel = time.perf_counter() - start
        pool.submit(time.sleep, NAP).result()
        pool.submit(time.sleep, NAP).result()
        total = time.perf_counter() - start
        assert session.clock.monotonic() == pytest.approx(3 * NAP, abs=1e-6)
    assert fake.slept == [NAP] * 4
    assert parallel == pytest.approx(NAP, abs=1e-6)
    assert total == pytest.approx(3 * NAP, abs=1e-6)


def test_a_thread_started_before_the_test_moves_nothing() -> None:
    go, stop = threading.Event(), threading.Event()
    beats = threading.Semaphore(0)  # built before the test: real

    def heartbeat() -> None:
        go.wait()
        while not stop.is_set():
            time.sleep(NAP / 2)
            beats.release()

    beating = threading.Thread(target=heartbeat, name="heartbeat", daemon=True)
    beating.start()
    fake = FakeRealTime()
    try:
        with (
            FlowsSession(test_id="real-work::heartbeat") as session,
            real_work.faked(sleep=fake.sleep),
        ):
            go.set()
            for _ in range(3):  # three of its sleeps inside the test
                assert beats.acquire(timeout=30)
            assert session.clock.monotonic() == 0.0
            stop.set()
            beating.join(timeout=30)  # its sleeps stay faked until it has ended
    finally:
        stop.set()
        go.set()
        beating.join()
    assert len(fake.slept) >= 3


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


@pytest.mark.real_time
@pytest.mark.filterwarnings("ignore:a flow thread blocked outside the scheduler")
def test_a_timer_does_not_fire_while_a_flow_thread_outside_does_real_work() -> None:
    # Real time on purpose, the one test of the rule end to end: the server thread goes
    # outside the scheduler only once the liveness guard has seen it blocked for the
    # block grace (0.25 real seconds), and that grace is what tells a thread blocked in C
    # from one waiting for the GIL: only the OS's real time can. Its CPU work is real
    # too (milliseconds). The tests below check the same rule with the OS faked.
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


class _ServerOutside:
    """A flow thread that the liveness guard found blocked outside the scheduler (as
    ``blocked_outside`` leaves it), beside the test's thread, which holds the baton."""

    def __init__(self) -> None:
        self.sched = ThreadScheduler(VirtualClock(), seed=0, stream="outside")
        self.me = self.sched.enter("loop")
        self.joined = threading.Event()
        self.thread = threading.Thread(target=self._serve, name="server", daemon=True)
        self.thread.start()
        assert self.joined.wait(timeout=30)
        while len(self.sched._parts) < 2:  # it parks: the test's thread has the baton
            time.sleep(0)  # a turn of the GIL; no time passes
        (self.server,) = [p for p in self.sched._parts if p is not self.me]
        with self.sched._mutex:
            self.server.outside = True
            self.server.what = "a lock or call the harness does not manage"

    def _serve(self) -> None:
        self.joined.set()
        server = self.sched.enter("server")
        self.sched.leave(server)

    def close(self) -> None:
        self.server.outside = False
        self.sched.detach()
        self.thread.join(timeout=30)
        self.sched.leave(self.me)


def test_a_flow_thread_outside_holds_the_clock_while_the_os_shows_it_working() -> None:
    fake = FakeRealTime()
    outside = _ServerOutside()
    native = outside.thread.native_id
    cpu = {"ns": 0}

    # Only the server is faked: the process may hold other tests' threads (a deadlocked
    # flow thread left blocked outside), which the fakes must not make look at work.
    def asleep(thread: int) -> bytes | None:
        return b"S" if thread == native else None

    def cpu_ns(thread: int) -> int | None:
        if thread != native:
            return None
        cpu["ns"] += 1_000  # it ran since the last look
        return cpu["ns"]

    try:
        with real_work.faked(
            sleep=fake.sleep, monotonic=fake.monotonic, state=asleep, cpu_ns=cpu_ns
        ):
            # Asleep to the OS (it waits for the GIL the looking thread holds), but its
            # CPU time grows: at work. The clock follows the real moment waited.
            held = real_work.hold(outside.sched, 1.0, 0.0)
            assert held == pytest.approx(real_work._PAUSE)
            assert outside.sched.clock.monotonic() == pytest.approx(real_work._PAUSE)
        with real_work.faked(
            sleep=fake.sleep,
            monotonic=fake.monotonic,
            state=asleep,
            cpu_ns=lambda thread: 7 if thread == native else None,
        ):
            # Its CPU time stands still: it is waiting again, the clock may jump.
            assert real_work.hold(outside.sched, 1.0, held) is None
    finally:
        outside.close()
    (hold,) = outside.sched.real_work.held
    assert hold.what == "flow thread 'server' (running outside the scheduler)"
    assert not hold.gave_up


def test_a_flow_thread_outside_holds_the_clock_for_the_block_grace_at_most() -> None:
    fake = FakeRealTime()
    outside = _ServerOutside()
    native = outside.thread.native_id
    try:
        with (
            real_work.faked(
                sleep=fake.sleep,
                monotonic=fake.monotonic,
                state=lambda thread: b"R" if thread == native else None,  # always running
            ),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always", FlowsWarning)
            held: float | None = 0.0
            looks = 0
            while held is not None:
                held = real_work.hold(outside.sched, 10.0, held)
                looks += 1
    finally:
        outside.close()
    grace = outside.sched.block_grace
    # the clock followed the (faked) real time waited, up to the grace, then was let go
    assert outside.sched.clock.monotonic() == pytest.approx(grace, abs=2 * real_work._PAUSE)
    assert looks == pytest.approx(grace / real_work._PAUSE, abs=2)
    (hold,) = outside.sched.real_work.held
    assert hold.gave_up and hold.what.startswith("flow thread 'server'")
    assert [str(w.message) for w in caught if issubclass(w.category, FlowsWarning)] == [
        f"virtual time waited {grace:g} real seconds for flow thread 'server' (running "
        "outside the scheduler), outside the scheduler, then moved on without it: a flow "
        "thread waiting for it may time out where the real runtime would not. Raise the "
        "grace with @pytest.mark.flows(block_grace=...), or build the thread or pool "
        "during the test (it is then managed)."
    ]


def test_a_real_sleep_of_another_test_is_no_fresh_sleep_on_a_faked_clock() -> None:
    # A thread outside sleeping in real time (left by another test of this process) was
    # recorded on the real clock; on a faked clock (at 0) it looked begun "just now" and
    # ending far ahead, and a hold said it gave up (CI, random order:
    # test_a_flow_thread_outside_holds_the_clock_while_the_os_shows_it_working). A sleep
    # that began later than the clock's now is judged on no clock of this block.
    fake = FakeRealTime(until_released=True)  # the 60 s "sleep" waits for release()
    thread = threading.Thread(
        target=real_work.outside_sleep, args=(60.0,), name="left-sleeping", daemon=True
    )
    with real_work.faked(sleep=fake.sleep):  # the real clock, a sleep that takes no time
        thread.start()
        while thread.ident not in real_work._sleeping:
            time.sleep(0)  # a turn of the GIL; no time passes
    try:
        with real_work.faked(monotonic=lambda: 0.0):
            assert real_work._fresh_long_sleep(0.25) is None
        # on the clock it was recorded on, it is the fresh long sleep it is
        assert real_work._fresh_long_sleep(0.25) == "thread 'left-sleeping' (sleeping in real time)"
    finally:
        fake.release()
        thread.join(timeout=30)
    assert not thread.is_alive()
