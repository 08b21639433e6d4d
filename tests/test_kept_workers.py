"""A thread a pool would start, run on the scheduler's kept workers: compared with a
started thread (the bare runtime's), on bare asyncio + threading."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import pytest

from pytest_flows._internal.runtime.kept_workers import keeps_workers, start_on_kept_worker
from pytest_flows._internal.runtime.loop import Scheduler, run
from pytest_flows._internal.runtime.stdlib_seams import QuietLock

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("kept_workers_mark", default="")


def _seen() -> dict[str, Any]:
    return {"name": threading.current_thread().name, "mark": MARK.get()}


def test_outside_a_run_no_worker_is_kept_and_starting_one_says_so() -> None:
    assert not keeps_workers()
    with pytest.raises(RuntimeError, match="start a Thread"):
        start_on_kept_worker("pool_0", lambda: None)


def test_the_body_sees_what_a_started_thread_sees_and_join_waits_for_it() -> None:
    # bare: a Thread named "pool_0" runs in an empty context
    bare: list[dict[str, Any]] = []
    MARK.set("caller")
    started = threading.Thread(name="pool_0", target=lambda: bare.append(_seen()))
    started.start()
    started.join()

    async def scenario() -> tuple[list[dict[str, Any]], list[bool], str]:
        found: list[dict[str, Any]] = []
        alive: list[bool] = []

        def starter() -> str:
            assert keeps_workers()
            handles = []
            for _ in range(2):  # the second start reuses the first's worker

                def body() -> None:
                    time.sleep(1.0)  # virtual: the joiner waits through the scheduler
                    found.append({**_seen(), "native": threading.get_native_id()})

                handle = start_on_kept_worker("pool_0", body)
                alive.append(handle.is_alive())
                handle.join()
                alive.append(handle.is_alive())
                handles.append(handle)
            return threading.current_thread().name

        return found, alive, await asyncio.to_thread(starter)

    scheduler = Scheduler(seed=0)
    found, alive, starter_name = run(scenario(), scheduler)
    assert [{k: v for k, v in f.items() if k != "native"} for f in found] == bare * 2
    assert found[0]["native"] == found[1]["native"]  # one kept worker, no second start
    assert alive == [True, False, True, False]
    assert starter_name != "pool_0"
    assert scheduler.clock.monotonic() >= 2.0


def test_a_quiet_lock_taken_free_is_no_switch_point_and_held_it_blocks() -> None:
    async def scenario() -> list[str]:
        lock = QuietLock()
        order: list[str] = []

        def holder() -> None:
            with lock:
                order.append("held")
                time.sleep(1.0)
                order.append("released")

        def waiter() -> None:
            time.sleep(0.5)
            assert not lock.acquire(False)  # held: a non-blocking take fails at once
            with lock:
                order.append("taken")

        await asyncio.gather(asyncio.to_thread(holder), asyncio.to_thread(waiter))
        return order

    for seed in range(4):  # under every seed
        assert run(scenario(), Scheduler(seed=seed)) == ["held", "released", "taken"]
