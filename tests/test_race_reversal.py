"""Where the reduction sends the next schedules (pytest_flows._internal.exploration.
race_reversal), on hand-written runs: a race behind a thread that sleeps where it
began is reversed through another thread's move, and a thread's move is one move however
many steps it was recorded as. The flows-level effect is
tests/langgraph/test_lg_explore_random.py's writer and two readers."""

from __future__ import annotations

from reversal_runs import backtracks, node

from pytest_flows._internal.exploration.race_reversal import Node
from pytest_flows._internal.runtime.schedule import Choice, Step

PUT, B, C = 1, 2, 3  # thread seqs: a writer of x, and two readers of x


def _reader_reader_writer(asleep: frozenset[int]) -> tuple[list[Step], list[Node]]:
    """B reads x; C writes a field of its own, then reads x; then the writer puts x. At
    choice 0 (options B, the writer, C) the options ``asleep`` sleep."""
    steps = [
        Step(B, 0, reads={"state.x": ""}),
        Step(C, 1, writes={"state.c": ""}),
        Step(C, 2, reads={"state.x": ""}),
        Step(PUT, 2, writes={"state.x": ""}),
    ]
    tree = [node((B, PUT, C), 0, asleep=asleep), node((C, PUT), 1), node((C, PUT), 2)]
    return steps, tree


def test_an_earlier_race_behind_a_sleeping_thread_is_reversed_by_another_move() -> None:
    # B read x; C did something of its own, then read x; then the writer wrote x. The
    # writer's put already ran first at an earlier choice point, so it sleeps at choice
    # 0 (the search covered "put first" there). Reversing only the latest race (C's
    # read, put) and then, in that run, the put against B's read (the writer asleep:
    # nothing) never tries C first at choice 0: "C reads 0, B reads 1" was never run
    # (issue 40: a LangGraph writer and two readers, seed 4). The race of B's read and
    # the put is reversed by an initial of what leads to the put: C's first move.
    backtrack = backtracks(*_reader_reader_writer(asleep=frozenset({1})))
    assert backtrack[0] == {0, 2}  # C first where B read
    assert backtrack[2] == {0, 1}  # the put before C's read, as before


def test_an_initial_is_a_whole_move_not_its_empty_first_step() -> None:
    # The writer's move is an empty step at its switch point, then the put; the put
    # waits for C's read. Counting the empty step as an initial took the (sleeping)
    # writer for a way to reverse B's read and the put, and tried nothing.
    steps = [
        Step(B, 0, reads={"state.x": ""}),
        Step(C, 1, writes={"state.c": ""}),
        Step(C, 2, reads={"state.x": ""}),
        Step(PUT, 3),
        Step(PUT, 3, writes={"state.x": ""}, method="w0"),
    ]
    tree = [
        node((B, PUT, C), 0, asleep=frozenset({1})),
        node((C, PUT), 1),
        node((C, PUT), 2),
        node((PUT, B), 3),
    ]
    assert backtracks(steps, tree)[0] == {0, 2}


def test_an_earlier_race_whose_move_is_covered_adds_nothing() -> None:
    # When an initial of what leads to the later step is already tried (or asleep) at
    # the earlier step's choice point, that order is covered: nothing is added. (Nor is
    # anything for an earlier race whose later thread is awake there: the run that
    # reverses the latest race reverses it, as before.)
    assert backtracks(*_reader_reader_writer(asleep=frozenset({1, 2})))[0] == {0}


def test_earlier_races_are_reversed_when_the_latest_ones_reversal_is_covered() -> None:
    # The writer sleeps where C read (its put ran first there in an earlier branch), so
    # the latest race (C's read, the put) is covered and no run reverses it; the earlier
    # race (B's read, the put), whose writer is awake at choice 0, would have waited for
    # that run. It is reversed now, by C's first move.
    steps = [
        Step(B, 0, reads={"state.x": ""}),
        Step(C, 1, writes={"state.c": ""}),
        Step(C, 2, reads={"state.x": ""}),
        Step(PUT, 2, writes={"state.x": ""}),
    ]
    tree = [
        node((B, PUT, C), 0),
        node((C, PUT), 1),
        node((C, PUT), 2, asleep=frozenset({1})),
    ]
    backtrack = backtracks(steps, tree)
    assert backtrack[2] == {0}  # the sleeping writer is not tried where C read
    assert backtrack[0] == {0, 2}  # C first where B read


# An event loop's task against a pool thread: a task's race is reversed where the job that
# woke it ended, and also where the task's step itself ran (docs/exploration.md, "A loop
# step's race, where the step ran").
LOOP, POOL = 6, 7


def _loop_and_pool_run(steps: list[Step], tree: list[Node]) -> list[set[int]]:
    return backtracks(steps, tree, loops=(LOOP,))


def _router_and_sibling(*, same_loop: bool = False) -> tuple[list[Step], list[Node]]:
    # A pool job ends and wakes the loop's task 1 (a method's stored end); the loop's task
    # 3 hands the pool a router's job, which sleeps; with the pool thread asleep the loop
    # runs task 1, which starts task 4, which writes x; then the router's job reads x
    # (soundness_misses/router_read_before_sibling_write.txt, seed 10).
    steps = [
        Step(POOL, 0, task=1),  # the job's end that wakes task 1
        Step(LOOP, 0, task=3),  # hands the router's job to the pool
        Step(POOL, 1, task=2, after=(1,)),  # the router's job begins, then sleeps
        Step(LOOP, 2, task=1, after=(0,)),
        Step(LOOP, 2, task=4, after=(3,), writes={"state.x": ""}),
        Step(POOL, 2, task=2, reads={"state.x": ""}),  # the router reads x
    ]
    if same_loop:  # the read is the loop's own (task 3 again): nothing else runs there
        steps[5] = Step(LOOP, 2, task=3, reads={"state.x": ""})
    tree = [
        node((POOL, LOOP), 0),
        node((POOL, LOOP), 2),
        # The pool thread sleeps here; the clock option (0) runs to its wake-up.
        Node(Choice("thread", (LOOP, 0), 0, 3, woken=(POOL,)), {0}, {0}, [0]),
    ]
    return steps, tree


def test_a_loop_steps_race_is_reversed_where_the_step_ran_too() -> None:
    # The write of x (task 4) was reversed only where the job that woke its chain ended
    # (choice 0: the loop first); the order seed 10 reaches holds the loop back at choice
    # 2, where the write ran, while the clock runs to the router's wake-up: the router
    # reads x first. A complete search of 4 schedules missed it.
    backtrack = _loop_and_pool_run(*_router_and_sibling())
    assert backtrack[0] == {0, 1}  # the loop first where the waking job ended, as before
    assert backtrack[2] == {0, 1}  # the clock first where the write ran


def test_a_race_of_two_tasks_of_one_loop_is_reversed_only_where_it_was_woken() -> None:
    # Two steps of one loop: the loop running at choice 2 cannot put the later task's
    # step first there (it runs both), so nothing is added where the write ran.
    backtrack = _loop_and_pool_run(*_router_and_sibling(same_loop=True))
    assert backtrack[2] == {0}


def test_a_loop_tasks_race_is_reversed_through_the_job_that_wakes_it() -> None:
    # Another pool thread writes x at choice 0; a job then ends (choice 1) and wakes the
    # loop's task 5, which reads x. Running the loop at choice 0 cannot run task 5 (its
    # job has not ended there, and that end is held, not run by default, past the loop's
    # turns): the reversal tries the job's thread there, an initial of what leads to the
    # read (docs/exploration.md, "A job's end placed by its races").
    other = 8
    steps = [
        Step(other, 0, task=1, writes={"state.x": ""}),
        Step(POOL, 1, task=1),  # the job's end that wakes task 5
        Step(LOOP, 2, task=5, after=(1,), reads={"state.x": ""}),
    ]
    tree = [node((other, POOL, LOOP), 0), node((POOL, LOOP), 1), node((LOOP,), 2)]
    assert _loop_and_pool_run(steps, tree)[0] == {0, 1}  # the job first, not the loop


def test_an_or_looks_earlier_races_are_all_reversed_where_they_began() -> None:
    # Two racers' job ends read the race's key (choices 0 and 1); the racing task's look
    # writes it with no recorded wake (asyncio.as_completed). The latest race is reversed
    # where B's end began; the earlier one, A's, is reversed where it began too, through
    # B's end (an initial of what leads to the look): the run that reverses the latest
    # race need not keep A's end before the look, since what the look follows is not
    # recorded. A step with a recorded wake leaves it to that run, as before.
    a, b = 7, 8

    def run(after: tuple[int, ...]) -> list[set[int]]:
        steps = [
            Step(a, 0, task=1, reads={"race:or(a, b)": ""}),
            Step(b, 1, task=1, reads={"race:or(a, b)": ""}),
            Step(LOOP, 2, task=3, after=after, writes={"race:or(a, b)": ""}),
        ]
        tree = [node((a, b, LOOP), 0), node((b, LOOP), 1), node((LOOP,), 2)]
        return _loop_and_pool_run(steps, tree)

    assert run(after=()) == [{0, 1}, {0, 1}, {0}]
    assert run(after=(0,)) == [{0}, {0, 1}, {0}]
