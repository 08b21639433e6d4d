"""The deterministic loop: virtual time, thread work on real threads, seeded choice."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.runtime.loop import (
    DeterministicEventLoop,
    Scheduler,
    VirtualClock,
    activate,
    active_scheduler,
    run,
)


def test_virtual_sleep_advances_the_clock_not_the_wall() -> None:
    scheduler = Scheduler()

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(30)
        await asyncio.sleep(12.5)
        return start, loop.time()

    started = time.perf_counter()
    start, end = run(main(), scheduler)
    assert (start, end) == (0.0, 42.5)
    assert scheduler.clock.monotonic() == 42.5
    # 42.5 virtual seconds cost (far) less than one real second.
    assert time.perf_counter() - started < 1.0


def test_time_jumps_only_to_live_timers() -> None:
    scheduler = Scheduler()

    async def main() -> float:
        # wait_for arms a 100 s timeout that is cancelled once the sleep ends
        await asyncio.wait_for(asyncio.sleep(5), timeout=100)
        await asyncio.sleep(1)
        return asyncio.get_running_loop().time()

    assert run(main(), scheduler) == 6.0


def test_timeouts_fire_on_virtual_time() -> None:
    async def main() -> str:
        try:
            await asyncio.wait_for(asyncio.sleep(3600), timeout=30)
        except TimeoutError:
            return f"timed out at {asyncio.get_running_loop().time():g}"
        return "no timeout"

    assert run(main(), Scheduler()) == "timed out at 30"


async def _gather_threads(names: list[str], log: list[str]) -> list[str]:
    def work(name: str) -> str:
        log.append(f"ran {name} on {threading.current_thread().name.split('_')[0]}")
        return name

    async def one(name: str) -> str:
        log.append(f"submit {name}")
        return await asyncio.to_thread(work, name)

    return await asyncio.gather(*(one(n) for n in names))


def test_seed_zero_runs_handed_off_work_at_once_on_its_own_thread() -> None:
    # A free pool starts a submitted callable at once; short work finishes before
    # the submitting coroutine gets the loop back, and the idle thread takes the
    # next item (compared with a bare asyncio.run in tests/test_threads.py).
    log: list[str] = []
    result = run(_gather_threads(["a", "b", "c"], log), Scheduler())
    assert result == ["a", "b", "c"]
    assert log == [
        "submit a",
        "ran a on pytest-flows-worker-1",
        "submit b",
        "ran b on pytest-flows-worker-1",
        "submit c",
        "ran c on pytest-flows-worker-1",
    ]


def test_seed_chooses_the_completion_order_of_thread_work() -> None:
    def order(seed: int) -> list[str]:
        log: list[str] = []
        run(_gather_threads(["a", "b", "c", "d"], log), Scheduler(seed=seed))
        return [line.split()[1] for line in log if line.startswith("ran")]

    assert order(0) == ["a", "b", "c", "d"]
    orders = {tuple(order(seed)) for seed in range(1, 12)}
    assert len(orders) > 1, "different seeds must be able to pick different orders"
    assert all(sorted(o) == ["a", "b", "c", "d"] for o in orders)
    assert order(7) == order(7)


def test_thread_work_may_call_asyncio_run() -> None:
    def sync_method() -> int:
        async def inner() -> int:
            await asyncio.sleep(10)
            return 7

        return asyncio.run(inner())

    async def main() -> int:
        return await asyncio.to_thread(sync_method)

    scheduler = Scheduler()
    with activate(scheduler):
        previous = asyncio.get_event_loop_policy()
        from pytest_flows._internal.runtime.loop import DeterministicEventLoopPolicy

        asyncio.set_event_loop_policy(DeterministicEventLoopPolicy())
        try:
            assert run(main(), scheduler) == 7
        finally:
            asyncio.set_event_loop_policy(previous)
    # the nested loop shares the test's clock
    assert scheduler.clock.monotonic() == 10


def test_errors_from_thread_work_reach_the_awaiter() -> None:
    def boom() -> None:
        raise LookupError("from the worker")

    async def main() -> None:
        await asyncio.to_thread(boom)

    with pytest.raises(LookupError, match="from the worker"):
        run(main(), Scheduler())


def test_cancelled_thread_work_still_runs_like_in_a_pool() -> None:
    ran: list[str] = []

    async def main() -> None:
        task = asyncio.ensure_future(asyncio.to_thread(ran.append, "side effect"))
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.sleep(0)

    run(main(), Scheduler())
    assert ran == ["side effect"]


def test_a_loop_outside_a_flows_test_is_an_ordinary_loop() -> None:
    loop = DeterministicEventLoop()
    try:
        assert not loop.deterministic
        assert abs(loop.time() - time.monotonic()) < 1
    finally:
        loop.close()


def test_activate_restores_the_previous_scheduler() -> None:
    outer, inner = Scheduler(seed=1), Scheduler(seed=2)
    assert active_scheduler() is None
    with activate(outer):
        with activate(inner):
            assert active_scheduler() is inner
        assert active_scheduler() is outer
    assert active_scheduler() is None


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_scheduler_rejects_bad_seeds(seed: object) -> None:
    with pytest.raises(ValueError, match="whole number >= 0"):
        Scheduler(seed=seed)  # type: ignore[arg-type]


def test_clock_never_goes_backwards() -> None:
    clock = VirtualClock()
    clock.advance(5)
    assert clock.advance_to(3) == 5
    with pytest.raises(FlowsUsageError, match="cannot go backwards"):
        clock.advance(-1)
    assert clock.monotonic() == 5


def test_order_is_identity_for_seed_zero_and_a_permutation_otherwise() -> None:
    items = list(range(8))
    assert Scheduler(seed=0).order(items) == items
    shuffled = Scheduler(seed=3).order(items)
    assert sorted(shuffled) == items
    assert shuffled == Scheduler(seed=3).order(items)


def test_a_flows_session_reinstalls_the_policy_a_conftest_replaced() -> None:
    from pytest_flows import FlowsSession

    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
    try:

        async def kind() -> bool:
            return bool(getattr(asyncio.get_running_loop(), "deterministic", False))

        with FlowsSession(test_id="policy"):
            assert asyncio.run(kind()) is True
        assert type(asyncio.get_event_loop_policy()) is asyncio.DefaultEventLoopPolicy
    finally:
        asyncio.set_event_loop_policy(previous)
