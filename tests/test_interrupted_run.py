"""A run interrupted while its loop waits for the baton ends instead of hanging.

pytest-timeout (signal method) and Ctrl-C raise in the main thread, which is where a
flows run's event loop parks while another thread holds the baton. The loop then
closes (asyncio cancels every task and runs the loop again to let them finish): were
it to ask the scheduler for the baton again, nobody would ever hand it back.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from types import FrameType

import pytest

from pytest_flows._internal.runtime.loop import Scheduler, run


class Interrupted(Exception):
    pass


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Interrupted()


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
# A hang here would outlive the signal method's own alarm: the thread method ends it.
@pytest.mark.timeout(60, method="thread")
def test_an_interrupt_while_the_loop_is_parked_ends_the_run() -> None:
    main = threading.get_ident()
    if main != threading.main_thread().ident:
        pytest.skip("signals reach only the main thread")
    finished: list[str] = []

    def worker() -> None:
        # Holds the baton: the loop is parked meanwhile, and the signal reaches it there.
        signal.pthread_kill(main, signal.SIGUSR1)
        time.sleep(5)  # virtual: a switch point, after which the worker is let go
        finished.append("worker")

    async def other() -> None:
        # Still pending when the interrupt comes: closing the loop cancels it and runs
        # the loop again to let it finish.
        await asyncio.to_thread(time.sleep, 10)
        finished.append("other")

    async def flow() -> None:
        pending = asyncio.ensure_future(other())
        await asyncio.to_thread(worker)
        await pending

    previous = signal.signal(signal.SIGUSR1, _raise)
    started = time.clock_gettime(time.CLOCK_MONOTONIC)
    try:
        with pytest.raises(Interrupted):
            run(flow(), Scheduler(seed=0))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - started < 30


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX signals")
@pytest.mark.timeout(60, method="thread")
def test_an_alarm_while_the_loop_is_parked_inside_a_task_step_ends_the_run() -> None:
    """Issue 45: the loop parks inside a task step (starting a thread is a switch point)
    while the thread it started spins with no switch point at all; the alarm's exception
    lands in the task step. The run ends with it and every thread's stack; it never
    parks again (before, the task took the exception and the loop parked for ever)."""
    if threading.get_ident() != threading.main_thread().ident:
        pytest.skip("signals reach only the main thread")
    stop: list[bool] = []

    def spin() -> None:
        while not stop:  # no clock read, no lock: nothing the harness could preempt
            pass

    async def flow() -> None:
        threading.Thread(target=spin, name="spinner", daemon=True).start()
        await asyncio.sleep(1)

    previous = signal.signal(signal.SIGALRM, _raise)
    started = time.clock_gettime(time.CLOCK_MONOTONIC)
    # the alarm, as pytest-timeout's signal method sets it: by then the loop is parked
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(Interrupted) as caught:
            run(flow(), Scheduler(seed=0))
    finally:
        stop.append(True)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "arrived while" in notes and "the run ends" in notes
    assert "spinner" in notes  # every thread's stack
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - started < 30
