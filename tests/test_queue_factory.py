"""``queue.SimpleQueue`` bound at import builds a managed queue during a flows test.

aiosqlite does ``from queue import SimpleQueue`` at import, and its connection thread
waits for queries in one. The C queue blocks where the scheduler cannot see it: the
thread, started by the flow, held the baton in ``get`` until the liveness guard gave up
on it (0.25 real seconds a connection and a ``FlowsWarning``) and ran outside the
scheduler from then on. As with ``threading.Lock`` (lock_factory.py), the class bound
at import now builds the pure-Python queue while a scheduler is active, whose blocked
``get`` is a switch point; outside a flows test it builds the C queue, as bare.
"""

from __future__ import annotations

import _queue
import asyncio
import queue
import threading
import warnings
from queue import SimpleQueue  # bound at import, as aiosqlite binds it

import pytest

from pytest_flows import FlowsSession, FlowsWarning
from pytest_flows._internal.runtime.loop import Scheduler, run


def test_the_class_bound_at_import_builds_the_c_queue_outside_a_test() -> None:
    assert SimpleQueue is queue.SimpleQueue  # the plugin's class, from its start
    assert type(SimpleQueue()) is _queue.SimpleQueue  # exactly the bare object


def test_during_a_flows_test_it_builds_the_queue_the_scheduler_sees() -> None:
    with FlowsSession(test_id="queue-factory::kind"):
        built = SimpleQueue()
        assert type(built) is queue._PySimpleQueue  # type: ignore[attr-defined]
    assert type(SimpleQueue()) is _queue.SimpleQueue


def test_it_stays_a_class_that_checks_subscripts_and_subclasses_as_bare() -> None:
    c_queue = _queue.SimpleQueue()
    with FlowsSession(test_id="queue-factory::class"):
        managed = SimpleQueue()
        assert isinstance(managed, SimpleQueue) and isinstance(c_queue, SimpleQueue)
        assert issubclass(_queue.SimpleQueue, SimpleQueue)
        assert SimpleQueue[int] == SimpleQueue[int]  # annotations such as aiosqlite's
        assert SimpleQueue.__name__ == "SimpleQueue" and SimpleQueue.__module__ == "_queue"

        class Mine(SimpleQueue):  # type: ignore[type-arg]
            pass

        mine = Mine()
        # the author chose the class: the C queue, as bare
        assert type(mine) is Mine and isinstance(mine, _queue.SimpleQueue)
        assert not isinstance(managed, Mine)
        mine.put(1)
        assert mine.get() == 1


async def _served_by_a_connection_like_thread(unit: float) -> list[int]:
    """aiosqlite's shape: a thread the flow starts waits for jobs in a SimpleQueue and
    answers the loop with ``call_soon_threadsafe``, under a timeout."""
    jobs: SimpleQueue[tuple[asyncio.Future[int], int] | None] = SimpleQueue()
    loop = asyncio.get_running_loop()

    def serve() -> None:
        while (job := jobs.get()) is not None:
            future, n = job
            loop.call_soon_threadsafe(lambda f=future, a=n * 2: f.done() or f.set_result(a))  # type: ignore[misc]

    server = threading.Thread(target=serve, name="connection")
    server.start()
    answers = []
    try:
        for n in range(3):
            future: asyncio.Future[int] = loop.create_future()
            jobs.put((future, n))
            answers.append(await asyncio.wait_for(future, unit))
    finally:
        jobs.put(None)
        server.join()
    return answers


def test_a_thread_blocked_in_its_get_is_a_switch_point_not_a_stall() -> None:
    scheduler = Scheduler(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FlowsWarning)
        answers = run(_served_by_a_connection_like_thread(1.0), scheduler)

    assert answers == [0, 2, 4]  # bare: three answers, no timeout
    # Before: the guard found the thread blocked in the C queue's get (after 0.25 real
    # seconds, each connection) and warned.
    assert [str(w.message) for w in caught if issubclass(w.category, FlowsWarning)] == []
    assert scheduler.clock.monotonic() == 0.0  # nobody slept: no time passed
    # nothing ran outside the scheduler, so nothing held the clock for it
    assert scheduler.threads.real_work.held == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_under_other_seeds_the_answers_are_the_same(seed: int) -> None:
    scheduler = Scheduler(seed=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FlowsWarning)
        assert run(_served_by_a_connection_like_thread(1.0), scheduler) == [0, 2, 4]
    assert [str(w.message) for w in caught if issubclass(w.category, FlowsWarning)] == []
