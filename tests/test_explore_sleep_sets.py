"""Sleep sets (pytest_flows._internal.runtime.sleep_sets): which threads a branch leaves asleep
and what wakes them. The flows-level effect is in tests/crewai/test_explore.py (the
locked twin of the lost update explores complete in about a hundred schedules)."""

from __future__ import annotations

from pytest_flows._internal.runtime.schedule import Step
from pytest_flows._internal.runtime.sleep_sets import (
    CLOCK,
    JOBS,
    POSTS,
    SleepSets,
    Summary,
    loops_busy,
)


def _summary(reads: tuple[str, ...] = (), writes: tuple[str, ...] = ()) -> Summary:
    return Summary(frozenset(reads), frozenset(writes))


def _asleep_after(plan_summary: Summary, step: Step, *, now: float = 0.0) -> bool:
    """Thread 7 was explored first at choice 0 (threads 7 and 8 ready), thread 8 runs
    ``step``: is 7 still asleep at the next choice point?"""
    sleep = SleepSets([[(0, plan_summary)]])
    assert sleep.choose(0, (7, 8), 1, loops=set()) == 1
    sleep.settle([step], (7, 8), now)
    return sleep.choose(1, (7, 8), None, loops=set()) == 1


def test_a_thread_covered_by_an_earlier_branch_stays_asleep_past_independent_steps() -> None:
    sleep = SleepSets([[(0, _summary(writes=("state.a",)))]])
    sleep.settle([], (7, 8), 0.0)
    assert sleep.choose(0, (7, 8), 1, loops=set()) == 1
    assert _asleep_after(_summary(writes=("state.a",)), Step(8, 0, writes={"state.b": ""}))
    assert sleep.asleep == [frozenset()]


def test_a_dependent_step_wakes_it() -> None:
    assert not _asleep_after(_summary(reads=("state.n",)), Step(8, 0, writes={"state.n": ""}))
    assert not _asleep_after(
        _summary(writes=("state.cfg.retries",)), Step(8, 0, reads={"state.cfg": ""})
    )


def test_the_clock_moving_wakes_only_a_thread_whose_step_reads_it() -> None:
    quiet = _summary(writes=("state.a",))
    timed = _summary(reads=(CLOCK,), writes=("state.a",))
    for summary, stays in ((quiet, True), (timed, False)):
        sleep = SleepSets([[(0, summary)]])
        sleep.settle([], (7, 8), 0.0)
        sleep.choose(0, (7, 8), 1, loops=set())
        sleep.settle([Step(8, 0)], (7, 8), 0.01)
        assert (sleep.choose(1, (7, 8), None, loops=set()) == 1) is stays


def test_two_threads_taking_jobs_off_one_queue_are_dependent() -> None:
    sleep = SleepSets([[(0, _summary(writes=(JOBS,)))]])
    sleep.choose(0, (7, 8), 1, loops=set())
    sleep.job_taken()
    sleep.settle([Step(8, 0)], (7, 8), None)
    assert sleep.choose(1, (7, 8), None, loops=set()) == 0


def test_a_thread_that_ran_or_left_the_options_is_awake_again() -> None:
    for options, ran in (((7, 8), True), ((8, 9), False)):
        sleep = SleepSets([[(0, _summary())]])
        sleep.choose(0, (7, 8), 1, loops=set())
        if ran:
            sleep.ran(7)
        sleep.settle([], options, None)
        assert sleep.choose(1, (7, 8), None, loops=set()) == 0


def test_the_loop_and_the_clock_never_sleep() -> None:
    sleep = SleepSets([[(0, _summary()), (1, _summary())]])
    assert sleep.choose(0, (1, 0, 8), 2, loops={1}) == 2
    sleep.settle([], (1, 0, 8), None)
    assert sleep.choose(1, (1, 0, 8), None, loops={1}) == 0
    assert sleep.asleep[1] == frozenset()


def test_when_every_option_sleeps_the_first_is_taken() -> None:
    sleep = SleepSets([[(0, _summary())]])
    sleep.choose(0, (7, 8), 1, loops=set())
    sleep.settle([], (7,), None)
    assert sleep.choose(1, (7,), None, loops=set()) == 0


def test_an_after_key_orders_but_never_conflicts() -> None:
    # The firing look of an and_ whose sources start nothing else reads the other
    # sources' after: keys: it comes after them in every order, so the two commute for
    # sleep sets and are never a race, but the reduction orders them (happens-before).
    from pytest_flows._internal.exploration.race_reversal import ordered_after, steps_dependent

    look = Step(7, 0, writes={"after:join/one": ""})
    firing = Step(8, 0, reads={"after:join/one": ""}, writes={"after:join/two": ""})
    assert _asleep_after(_summary(writes=("after:join/one",)), firing)
    assert not steps_dependent(look, firing)
    assert ordered_after(look, firing)
    assert not ordered_after(firing, look)


def _end_after_turn(summary: Summary, *, quiet: bool) -> str:
    """Thread 7's job end (it wakes a loop task) was explored first at choice 0; the loop
    (thread 1) takes a turn instead: at the next choice point 7 is ``asleep`` (the
    reduction counts it as covered), ``held`` (awake, but the loop runs by default) or
    ``awake`` (the default)."""
    sleep = SleepSets([[(0, summary)]])
    assert sleep.choose(0, (7, 1), 1, loops={1}) == 1
    sleep.settle([Step(1, 0, task=0)], (7, 1), None, {1}, quiet=quiet)
    default = sleep.choose(1, (7, 1), None, loops={1})
    if 0 in sleep.asleep[1]:
        return "asleep"
    return "held" if default == 1 else "awake"


def test_a_job_end_sleeps_past_a_quiet_turn_and_is_held_past_any_other() -> None:
    # Posted before a turn that leaves nothing queued, or after it, the woken task is
    # alone in the loop's queue either way: the two orders are one. After a turn that
    # queued something (or while a callback or timer waits), where the end lands decides
    # the woken task's place among the others: it leaves the sleep set (a race can run it
    # anywhere, docs/exploration.md), held: a run does not take it by default.
    end = _summary(writes=(POSTS, "state.a"))
    assert _end_after_turn(end, quiet=True) == "asleep"
    assert _end_after_turn(end, quiet=False) == "held"
    # An or_ racer's job end, which the racing task looks at (woken through
    # asyncio.as_completed, a wake no step records), never sleeps past a turn: without
    # this QuietLoser lost "won fast; lost slow" (a loser ending before the look).
    racer = _summary(reads=("race:or(fast, slow)",), writes=(POSTS,))
    assert _end_after_turn(racer, quiet=True) == "held"
    # A step that is no job end is not concerned by turns at all.
    assert _end_after_turn(_summary(writes=("state.a",)), quiet=False) == "asleep"


def test_a_held_end_is_taken_when_nothing_else_is_awake_and_wakes_like_a_sleeper() -> None:
    end = _summary(writes=(POSTS,), reads=("state.a",))

    def held_then(steps: list[Step], options: tuple[int, ...]) -> int:
        sleep = SleepSets([[(0, end)]])
        sleep.choose(0, (7, 1), 1, loops={1})
        sleep.settle([Step(1, 0, task=0)], (7, 1), None, {1}, quiet=False)
        sleep.settle(steps, options, None, {1})
        return options[sleep.choose(1, options, None, loops={1})]

    turn = [Step(1, 0, task=0)]
    assert held_then(turn, (7, 1)) == 1  # held: the loop first
    assert held_then(turn, (7,)) == 7  # the only option: taken
    # A step that writes what the end reads wakes it in full: the default again.
    assert held_then([*turn, Step(2, 0, writes={"state.a": ""})], (7, 1)) == 7


def test_a_loop_is_busy_with_a_callback_queued_or_a_timer_due() -> None:
    class Timer:
        def __init__(self, when: float, cancelled: bool = False) -> None:
            self._when, self._cancelled = when, cancelled

        def when(self) -> float:
            return self._when

        def cancelled(self) -> bool:
            return self._cancelled

    class Loop:
        def __init__(self, ready: list[object], scheduled: list[Timer]) -> None:
            self._ready, self._scheduled = ready, scheduled

    assert not loops_busy([], 1.0)
    assert not loops_busy([Loop([], [Timer(2.0), Timer(0.5, cancelled=True)])], 1.0)
    assert loops_busy([Loop([object()], [])], 1.0)
    assert loops_busy([Loop([], []), Loop([], [Timer(1.0)])], 1.0)
