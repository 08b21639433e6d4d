"""The thread scheduler on bare asyncio + threading: each pattern compared with a real pool.

Each scenario runs twice: under the harness (``run(..., Scheduler())``, virtual time)
and on a plain ``asyncio`` loop with its real thread pool (the bare runtime, with
durations kept to a few milliseconds). Where the bare outcome is deterministic the
two must agree; the harness must also never spend the wall time the scenario names.
"""

from __future__ import annotations

import asyncio
import math
import pickle
import queue
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from pytest_flows._internal.errors import FlowsDeadlockError
from pytest_flows._internal.runtime.loop import Scheduler, run

Scenario = Callable[[float], Coroutine[Any, Any, Any]]


def _wall() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def bare(scenario: Scenario, unit: float = 0.005) -> Any:
    with asyncio.Runner(loop_factory=asyncio.SelectorEventLoop) as runner:
        return runner.run(scenario(unit))


def harness(scenario: Scenario, seed: int = 0, unit: float = 30.0) -> tuple[Any, float]:
    scheduler = Scheduler(seed=seed)
    started = _wall()
    result = run(scenario(unit), scheduler)
    assert _wall() - started < 5.0, "virtual time must not cost wall time"
    return result, scheduler.clock.monotonic()


async def barrier(unit: float) -> list[int]:
    gate = threading.Barrier(2)
    return sorted(await asyncio.gather(asyncio.to_thread(gate.wait), asyncio.to_thread(gate.wait)))


async def producer_consumer(unit: float) -> list[str]:
    box: queue.Queue[str] = queue.Queue()

    def consume() -> list[str]:
        return [box.get(timeout=100 * unit), box.get(timeout=100 * unit)]

    def produce() -> None:
        box.put("first")
        time.sleep(unit)
        box.put("second")

    got, _ = await asyncio.gather(asyncio.to_thread(consume), asyncio.to_thread(produce))
    return got


async def polling_handshake(unit: float) -> str:
    flag = threading.Event()

    def setter() -> None:
        flag.set()

    task = asyncio.ensure_future(asyncio.to_thread(setter))
    while not flag.is_set():
        await asyncio.sleep(0)
    await task
    return "seen"


async def calls_back_into_the_loop(unit: float) -> int:
    loop = asyncio.get_running_loop()

    async def answer() -> int:
        await asyncio.sleep(unit)
        return 42

    def blocking() -> int:
        return asyncio.run_coroutine_threadsafe(answer(), loop).result()

    return await asyncio.to_thread(blocking)


async def wait_for_times_out(unit: float) -> str:
    try:
        await asyncio.wait_for(asyncio.to_thread(time.sleep, 5 * unit), 2 * unit)
    except TimeoutError:
        return "timed out"
    return "finished"


async def overlapping_sleeps(unit: float) -> list[float]:
    def slow() -> float:
        started = time.perf_counter()
        time.sleep(unit)
        return round((time.perf_counter() - started) / unit, 1)

    return await asyncio.wait_for(
        asyncio.gather(*(asyncio.to_thread(slow) for _ in range(4))), timeout=2 * unit
    )


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        (barrier, [0, 1]),
        (producer_consumer, ["first", "second"]),
        (polling_handshake, "seen"),
        (calls_back_into_the_loop, 42),
        (wait_for_times_out, "timed out"),
    ],
)
def test_the_harness_agrees_with_a_real_pool(scenario: Scenario, expected: Any) -> None:
    assert bare(scenario) == expected
    assert harness(scenario)[0] == expected


def test_concurrent_sleeps_overlap_and_measure_their_own_duration(flows: Any) -> None:
    # Four threads sleeping 30 s under a 60 s timeout: ~30 s together, as on a pool,
    # and each measures its sleep as 30 s: in a flows test time.perf_counter reads
    # the same virtual clock as the loop and time.sleep.
    started = _wall()
    result = run(overlapping_sleeps(30.0), flows.scheduler)
    assert _wall() - started < 1.0
    assert result == [1.0, 1.0, 1.0, 1.0]
    assert flows.clock.monotonic() == 30.0


def test_concurrent_sleeps_overlap_on_a_real_pool() -> None:
    # The bare side of the comparison above (outside a flows test: real clocks).
    assert bare(overlapping_sleeps, unit=0.02) == pytest.approx([1.0] * 4, abs=0.5)


def test_a_timed_out_worker_still_finishes_before_the_loop_closes() -> None:
    result, elapsed = harness(wait_for_times_out)
    assert result == "timed out"
    # wait_for gave up at 60 s; the pool's shutdown waited for the 150 s sleep.
    assert elapsed == 150.0


def test_a_deadlock_fails_fast_naming_both_threads() -> None:
    async def crossed(unit: float) -> None:
        red, blue = threading.Lock(), threading.Lock()

        def red_then_blue() -> None:
            with red:
                time.sleep(unit)
                with blue:
                    pass

        def blue_then_red() -> None:
            with blue:
                time.sleep(unit)
                with red:
                    pass

        await asyncio.gather(asyncio.to_thread(red_then_blue), asyncio.to_thread(blue_then_red))

    started = _wall()
    with pytest.raises(FlowsDeadlockError) as caught:
        run(crossed(1.0), Scheduler())
    assert _wall() - started < 5.0
    message = str(caught.value)
    assert "red_then_blue" in message and "blue_then_red" in message
    assert message.count("worker thread") == 2
    assert "pending task" in message


def test_seed_zero_runs_a_started_thread_until_it_blocks() -> None:
    async def handoff(unit: float) -> list[str]:
        log: list[str] = []

        def child() -> None:
            log.append("child runs")
            time.sleep(unit)
            log.append("child woke")

        def parent() -> None:
            thread = threading.Thread(target=child)
            thread.start()
            log.append("parent after start")
            thread.join()
            log.append("parent after join")

        await asyncio.to_thread(parent)
        return log

    assert harness(handoff)[0] == [
        "child runs",
        "parent after start",
        "child woke",
        "parent after join",
    ]


def test_other_seeds_reach_other_interleavings_and_repeat_them() -> None:
    async def race(unit: float) -> str:
        log: list[str] = []
        guard = threading.Lock()

        def worker(name: str) -> None:
            for _ in range(2):
                with guard:
                    log.append(name)

        await asyncio.gather(*(asyncio.to_thread(worker, n) for n in "ab"))
        return "".join(log)

    outcomes = {seed: harness(race, seed=seed)[0] for seed in range(12)}
    assert outcomes[0] == "aabb"
    assert len(set(outcomes.values())) > 1
    assert all(harness(race, seed=seed)[0] == outcomes[seed] for seed in range(12))


def test_a_datetime_made_in_a_flows_test_pickles_as_a_real_datetime(flows: Any) -> None:
    import datetime

    now = datetime.datetime.now()
    assert type(now) is datetime.datetime
    data = pickle.dumps(now)
    assert b"freezegun" not in data
    assert pickle.loads(data) == now


def test_a_deadlock_is_reported_though_a_task_waits_on_after_its_cancellation() -> None:
    # After the run raised, asyncio.run cancels every task left and waits for them, on a
    # loop no scheduler drives any more. A task that takes the cancellation and waits
    # again (or a gather an interrupt broke mid-callback: pytest-timeout's timeout in a
    # crash-resume property, the docs blocks' hang in CI) made that wait, and the
    # deadlock report with it, last for ever. (Bare asyncio would hang in the run itself:
    # nothing here can end; what is compared is that the harness ends it.)
    async def stubborn() -> None:
        never = asyncio.get_running_loop().create_future()
        try:
            await never
        except asyncio.CancelledError:
            await asyncio.get_running_loop().create_future()

    async def main(unit: float) -> None:
        task = asyncio.create_task(stubborn())
        await asyncio.sleep(math.inf)
        await task

    started = _wall()
    with pytest.raises(FlowsDeadlockError) as caught:
        run(main(1.0), Scheduler())
    assert _wall() - started < 10.0
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "asyncio's clean-up after this error waited for 1 task(s)" in notes
    assert "stubborn" in notes


def test_sleeping_for_ever_with_nothing_else_to_do_is_reported_not_jumped_to() -> None:
    async def forever(unit: float) -> None:
        await asyncio.sleep(math.inf)

    scheduler = Scheduler()
    with pytest.raises(FlowsDeadlockError):
        run(forever(1.0), scheduler)
    assert scheduler.clock.monotonic() == 0.0


def test_while_a_real_socket_is_awaited_the_clock_follows_real_time(flows: Any) -> None:
    # A loopback server (a thread of the test, not of the flow) answers after 0.3 s of
    # real time; a client with a 0.5 s timeout must get the answer, as it would without
    # the harness (the 1 s / 0.6 s, halved): the clock may not jump past the wait.
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer_late() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(16)
            threading.Event().wait(0.3)  # real time: this thread is the test's, not the flow's
            conn.sendall(b"pong")

    helper = threading.Thread(target=answer_late)
    helper.start()

    async def client() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"ping")
        await writer.drain()
        data = await asyncio.wait_for(reader.read(4), timeout=0.5)
        writer.close()
        return data

    try:
        assert run(client(), flows.scheduler) == b"pong"
    finally:
        helper.join()
        server.close()
    assert 0.25 <= flows.clock.monotonic() < 0.5


def test_a_test_ending_between_choosing_a_thread_and_waking_it_wakes_it_once() -> None:
    # The holder picks the next thread, the test ends (detach wakes every parked thread),
    # then the holder hands the baton over: that hand-off must not wake the thread a
    # second time ("release unlocked lock", seen once in a long exploration) and the
    # holder must not park for ever.
    from pytest_flows._internal.runtime.loop import VirtualClock
    from pytest_flows._internal.runtime.threads import ThreadScheduler

    sched = ThreadScheduler(VirtualClock(), seed=0, stream="detach-race")
    holder = sched.enter("holder")
    parked_thread_done = threading.Event()

    def parked() -> None:
        sched.enter("parked")  # parks: the holder has the baton
        parked_thread_done.set()

    thread = threading.Thread(target=parked)
    thread.start()
    while len(sched._ready(exclude=holder)) < 1:  # the other thread has joined
        time.sleep(0)  # yields the GIL; no timing involved
    chosen = sched._ready(exclude=holder)[0]
    sched.detach()  # the test ends here
    sched._transfer(holder, chosen)  # returns: holder is an ordinary thread now
    thread.join(timeout=10)
    assert parked_thread_done.is_set() and not thread.is_alive()
    assert holder.let_go and chosen.let_go


def test_a_lock_released_by_the_garbage_collector_inside_the_scheduler_does_not_hang() -> None:
    # A client's __del__ (run by the garbage collector while a participant was being made,
    # the scheduler's mutex held) released a managed lock, whose release pokes the idle
    # scheduler: the poke took the same mutex again and the thread hung for good.
    from pytest_flows._internal.runtime.loop import VirtualClock
    from pytest_flows._internal.runtime.threads import ThreadScheduler

    sched = ThreadScheduler(VirtualClock(), seed=0, stream="gc-poke")
    done = threading.Event()

    def collector_inside_the_scheduler() -> None:
        with sched._mutex:
            sched.poke()
        done.set()

    thread = threading.Thread(target=collector_inside_the_scheduler, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert done.is_set()
