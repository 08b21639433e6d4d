"""Two sleeps that end at one moment: their timers fire in one turn of the loop, in the
order the heap holds them, and the tasks they wake run in that order, a turn later
(first in, first out). So their steps are ordered, not a race to reverse
(``race_reversal._timer_turn``); what decides the order is where the timers were set,
and two sets for one moment race (``TIMER_MOMENT``). docs/exploration.md, "Two sleeps
that end at one moment"."""

from __future__ import annotations

import asyncio

from reversal_runs import backtracks, node

from pytest_flows._internal.runtime.loop import Scheduler, activate, run
from pytest_flows._internal.runtime.participants import TIMER_MOMENT, record_access
from pytest_flows._internal.runtime.schedule import Chooser, Step
from pytest_flows._internal.runtime.sleep_sets import CLOCK


def _sleepers(*delays: float) -> Chooser:
    async def sleeper(name: str, delay: float) -> None:
        await asyncio.sleep(delay)
        record_access(f"state.{name}", write=True)

    async def main() -> None:
        await asyncio.gather(*(sleeper(f"s{k}", d) for k, d in enumerate(delays)))

    scheduler = Scheduler(seed=0)
    with activate(scheduler), scheduler.following(Chooser([])) as chooser:
        run(main(), scheduler)
    return chooser


def test_a_timer_set_for_a_moment_another_timer_holds_writes_the_moment() -> None:
    chooser = _sleepers(1.0, 1.0, 2.0)
    sets = [step for step in chooser.steps if TIMER_MOMENT in (*step.reads, *step.writes)]
    assert len(sets) == 3
    assert [TIMER_MOMENT in step.writes for step in sets] == [False, True, False]
    assert all(TIMER_MOMENT in step.reads or TIMER_MOMENT in step.writes for step in sets)
    assert all(CLOCK in step.reads for step in sets)


def test_the_tasks_two_timers_of_one_turn_wake_follow_the_turn_and_the_move() -> None:
    chooser = _sleepers(1.0, 1.0)
    firsts = [step for step in chooser.steps if {"state.s0", "state.s1"} & set(step.writes)]
    assert len(firsts) == 2
    (turn, move) = firsts[0].after
    assert firsts[1].after == (turn, move)
    assert chooser.steps[turn].task == 0 and chooser.steps[move].thread == 0


LOOP, POOL = 6, 7


def _backtracks(second_turn: bool) -> list[set[int]]:
    # Tasks 3 and 4 set timers (the order of the two sets is another race, left out
    # here); the clock's move reaches both, a turn of the loop fires them and the tasks
    # return "a" and "b" (a pool thread stores the first end in between). With
    # ``second_turn`` task 4's timer fires in a later turn.
    steps = [
        Step(LOOP, 0, task=3, reads={CLOCK: ""}, clock=0.0),
        Step(LOOP, 0, task=4, reads={CLOCK: ""}, clock=0.0),
        Step(LOOP, 0, task=0),
        Step(0, 0, task=1, writes={CLOCK: ""}, after=(0, 1, 2), clock=1.0),
        Step(LOOP, 0, task=0),  # the turn that fires the timers
        Step(LOOP, 0, task=3, after=(4, 3), writes={"flow:last='a'": ""}),
        Step(POOL, 1, task=1, after=(5,)),
        Step(LOOP, 1, task=0),  # another turn
        Step(LOOP, 1, task=4, after=(7 if second_turn else 4, 3), writes={"flow:last='b'": ""}),
    ]
    tree = [node((LOOP, POOL), 0), node((POOL, LOOP), 6)]
    return backtracks(steps, tree, loops=(LOOP,))


def test_the_tasks_one_turns_timers_woke_run_in_order_not_in_a_race() -> None:
    assert _backtracks(second_turn=False) == [{0}, {0}]


def test_tasks_woken_by_timers_of_two_turns_still_race() -> None:
    assert _backtracks(second_turn=True)[0] == {0, 1}


async def _wake_order(order: list[str]) -> None:
    # Set in one step: timers for 0.7, 0.5, then two for 1.0 ("A" before "B"). asyncio's
    # heap, after the 0.5 and 0.7 timers leave it, holds B above A when the two are due
    # at exactly one moment.
    async def sleeper(name: str, delay: float) -> None:
        await asyncio.sleep(delay)
        order.append(name)

    await asyncio.gather(sleeper("x", 0.7), sleeper("y", 0.5), sleeper("A", 1.0), sleeper("B", 1.0))


class _RealClockLoop(asyncio.SelectorEventLoop):
    """The bare runtime with a clock that moves between two readings, as a real one does
    (a nanosecond a reading), and jumps ahead once every timer is set, so nothing waits
    in real time."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 100.0

    def time(self) -> float:
        self.now += 1e-9
        if len(self._scheduled) == 4:  # type: ignore[attr-defined]
            self.now += 10.0
        return self.now


def test_timers_due_at_one_moment_fire_in_the_order_they_were_set_as_on_a_real_clock() -> None:
    # Compared: the bare runtime on a clock that moves between readings fires A before B
    # (B was set later, so it is due later); under the harness's virtual clock both are
    # due at one moment, and asyncio's heap alone would fire B first.
    bare: list[str] = []
    loop = _RealClockLoop()
    try:
        loop.run_until_complete(_wake_order(bare))
    finally:
        loop.close()
    assert bare == ["y", "x", "A", "B"]

    harnessed: list[str] = []
    scheduler = Scheduler(seed=0)
    with activate(scheduler):
        run(_wake_order(harnessed), scheduler)
    assert harnessed == bare
