"""A task that yields with nothing to wait for (``await asyncio.sleep(0)``) puts itself back
in the loop's queue: its next step runs after what the loop queued before it, so its
place was decided by the step that yielded. That step is recorded as the task's wake
(``Chooser.task_requeued``), as a task's creation is; without it the race of the step
after the yield was reversed only where that step ran, too late to put another thread's
stored end before it (``tests/crewai/soundness_misses/sleep0_output_before_a_locked_jobs.txt``:
a complete search of 3 schedules lacked output ``m1``, which seeds 1, 3, 7, 9 and 14
reach)."""

from __future__ import annotations

import asyncio

from reversal_runs import backtracks as run_backtracks
from reversal_runs import node

from pytest_flows._internal.runtime.loop import Scheduler, activate, run
from pytest_flows._internal.runtime.participants import record_access
from pytest_flows._internal.runtime.schedule import Chooser, Step


def _recorded(body: str, *, beside: bool = True) -> Chooser:
    async def worker() -> None:
        record_access("state.a", write=True)
        if body == "sleep0":
            await asyncio.sleep(0)
        else:
            future = asyncio.get_running_loop().create_future()
            future.set_result(None)
            await future  # done already: no yield, no wake
        record_access("state.b", write=True)

    async def other() -> None:
        record_access("state.c", write=True)

    async def main() -> None:
        tasks = [asyncio.create_task(worker())]
        if beside:  # runs between the worker's yield and its next step
            tasks.append(asyncio.create_task(other()))
        await asyncio.gather(*tasks)

    scheduler = Scheduler(seed=0)
    with activate(scheduler), scheduler.following(Chooser([])) as chooser:
        run(main(), scheduler)
    return chooser


def _writer_of(chooser: Chooser, key: str) -> int:
    (found,) = [i for i, step in enumerate(chooser.steps) if key in step.writes]
    return found


def test_the_step_after_a_bare_yield_is_woken_by_the_step_that_yielded() -> None:
    chooser = _recorded("sleep0")
    before, after = _writer_of(chooser, "state.a"), _writer_of(chooser, "state.b")
    between = _writer_of(chooser, "state.c")
    assert before < between < after
    assert chooser.steps[before].task == chooser.steps[after].task != 0
    assert chooser.steps[after].after == (before,)
    # the loop's first-in-first-out order: the other task was queued before the yield
    assert chooser.steps[between].task not in (0, chooser.steps[after].task)


def test_a_yield_nothing_ran_after_leaves_one_step_and_no_wake_waiting() -> None:
    chooser = _recorded("sleep0", beside=False)
    at = _writer_of(chooser, "state.a")
    assert at == _writer_of(chooser, "state.b")
    step = chooser.steps[at]
    assert not chooser._wakes.get((step.thread, step.task))  # (a waiting wake: no quiet turn)


def test_an_await_that_does_not_yield_records_no_wake() -> None:
    chooser = _recorded("done future")
    before, after = _writer_of(chooser, "state.a"), _writer_of(chooser, "state.b")
    assert before == after  # one step: nothing ran between the two writes
    step = chooser.steps[before]
    assert not chooser._wakes.get((step.thread, step.task))


LOOP, POOL, OTHER = 6, 7, 8


def test_a_race_after_a_bare_yield_is_reversed_where_the_tasks_chain_was_woken() -> None:
    # A pool job's end (choice 0) wakes the loop's task 3, which yields (sleep(0)); in the
    # same turn task 4 hands a job to another pool thread, whose end (choice 2) wakes task
    # 5; task 3 then returns "a", task 5 "b". Task 3's step after the yield is queued
    # behind what its first step saw queued, so "b" can come first only if task 4's chain
    # gets ahead of the job that woke task 3: the race of the outputs is reversed at
    # choice 0. Without the wake it was reversed at choice 2 only, where the loop running
    # first runs task 3's step first all the same.
    def backtracks(requeued: bool) -> list[set[int]]:
        steps = [
            Step(POOL, 0, task=1),  # the job's end that wakes task 3
            Step(LOOP, 1, task=3, after=(0,)),  # task 3 runs, then yields
            Step(LOOP, 1, task=4),  # task 4 hands the other thread its job
            Step(OTHER, 2, task=1, after=(2,)),  # that job ends, waking task 5
            Step(LOOP, 2, task=3, after=(1,) if requeued else (), writes={"flow:last='a'": ""}),
            Step(LOOP, 3, task=5, after=(3,), writes={"flow:last='b'": ""}),
        ]
        tree = [
            node((POOL, LOOP), 0),
            node((OTHER, LOOP), 1),
            node((OTHER, LOOP), 3),
            node((LOOP,), 5),
        ]
        return run_backtracks(steps, tree, loops=(LOOP,))

    assert backtracks(requeued=True)[0] == {0, 1}  # the loop (task 4) before the job
    assert backtracks(requeued=False)[0] == {0}  # what the search did before
