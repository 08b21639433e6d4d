"""Where the reduction sends the next schedules (pytest_flows._internal.exploration.
race_reversal), on hand-written runs: a race behind a thread that sleeps where it
began is reversed through another thread's move, and a thread's move is one move however
many steps it was recorded as. The flows-level effect is
tests/langgraph/test_lg_explore_random.py's writer and two readers."""

from __future__ import annotations

from pytest_flows._internal.exploration.race_reversal import Node, add_backtracks
from pytest_flows._internal.runtime.schedule import Choice, Chooser, Step

PUT, B, C = 1, 2, 3  # thread seqs: a writer of x, and two readers of x


def _node(options: tuple[int, ...], step: int, *, asleep: frozenset[int] = frozenset()) -> Node:
    return Node(Choice("thread", options, 0, step), {0}, {0}, [0], asleep=asleep)


def _run(steps: list[Step], tree: list[Node]) -> list[set[int]]:
    chooser = Chooser()
    chooser.steps = steps
    chooser.choices = [node.choice for node in tree]
    add_backtracks(chooser, tree, reduction=True)
    return [node.backtrack for node in tree]


def test_an_earlier_race_behind_a_sleeping_thread_is_reversed_by_another_move() -> None:
    # B read x; C did something of its own, then read x; then the writer wrote x. The
    # writer's put already ran first at an earlier choice point, so it sleeps at choice
    # 0 (the search covered "put first" there). Reversing only the latest race (C's
    # read, put) and then, in that run, the put against B's read (the writer asleep:
    # nothing) never tries C first at choice 0: "C reads 0, B reads 1" was never run
    # (issue 40: a LangGraph writer and two readers, seed 4). The race of B's read and
    # the put is reversed by an initial of what leads to the put: C's first move.
    steps = [
        Step(B, 0, reads={"state.x": ""}),
        Step(C, 1, writes={"state.c": ""}),
        Step(C, 2, reads={"state.x": ""}),
        Step(PUT, 2, writes={"state.x": ""}),
    ]
    tree = [
        _node((B, PUT, C), 0, asleep=frozenset({1})),
        _node((C, PUT), 1),
        _node((C, PUT), 2),
    ]
    backtrack = _run(steps, tree)
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
        _node((B, PUT, C), 0, asleep=frozenset({1})),
        _node((C, PUT), 1),
        _node((C, PUT), 2),
        _node((PUT, B), 3),
    ]
    assert _run(steps, tree)[0] == {0, 2}


def test_an_earlier_race_whose_move_is_covered_adds_nothing() -> None:
    # When an initial of what leads to the later step is already tried (or asleep) at
    # the earlier step's choice point, that order is covered: nothing is added. (Nor is
    # anything for an earlier race whose later thread is awake there: the run that
    # reverses the latest race reverses it, as before.)
    steps = [
        Step(B, 0, reads={"state.x": ""}),
        Step(C, 1, writes={"state.c": ""}),
        Step(C, 2, reads={"state.x": ""}),
        Step(PUT, 2, writes={"state.x": ""}),
    ]
    tree = [
        _node((B, PUT, C), 0, asleep=frozenset({1, 2})),
        _node((C, PUT), 1),
        _node((C, PUT), 2),
    ]
    assert _run(steps, tree)[0] == {0}


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
        _node((B, PUT, C), 0),
        _node((C, PUT), 1),
        _node((C, PUT), 2, asleep=frozenset({1})),
    ]
    backtrack = _run(steps, tree)
    assert backtrack[2] == {0}  # the sleeping writer is not tried where C read
    assert backtrack[0] == {0, 2}  # C first where B read
