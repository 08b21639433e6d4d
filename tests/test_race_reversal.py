"""Where the reduction sends the next schedules (pytest_flows._internal.exploration.
race_reversal), on hand-written runs: a race behind a thread that sleeps where it
began is reversed through another thread's move, and a thread's move is one move however
many steps it was recorded as. The flows-level effect is
tests/langgraph/test_lg_explore_random.py's writer and two readers."""

from __future__ import annotations

from pytest_flows._internal.exploration.race_reversal import Node, add_backtracks
from pytest_flows._internal.runtime.participants import LAST_WRITE, LAST_WRITE_SEEN
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


# Methods whose only shared effect is the flow's output (the crewAI adapter writes one
# last-write-wins key per value): only the run's last output is observed
# (docs/exploration.md, "Only the last output is observed").
X, Y = 4, 5


def _outputs(*, seen: bool = False) -> list[Step]:
    # X outputs "x", Y outputs "y", then X outputs "z" (a second method of X's): "z" is
    # the flow's output whichever of the first two ended first.
    steps = [
        Step(X, 0, writes={f"{LAST_WRITE}'x'": ""}),
        Step(Y, 1, writes={f"{LAST_WRITE}'y'": ""}),
        Step(X, 2, writes={f"{LAST_WRITE}'z'": ""}),
    ]
    if seen:  # Y read the outputs (self.method_outputs) before it wrote its own
        steps[1].reads[LAST_WRITE_SEEN] = ""
    return steps


def _three_points() -> list[Node]:
    return [_node((X, Y), 0), _node((Y, X), 1), _node((X,), 2)]


def test_outputs_a_later_output_hides_are_not_ordered() -> None:
    # y against x: a later output (z) comes after both in every order, so their order is
    # seen by nothing and no branch runs Y first where X ran (it did while every pair of
    # differing outputs raced). z against y is the last output's race: z first where y
    # ran, which makes y the flow's output.
    backtrack = _run(_outputs(), _three_points())
    assert backtrack[0] == {0}
    assert backtrack[1] == {0, 1}


def test_outputs_read_during_the_run_are_all_ordered_as_before() -> None:
    # Y read the outputs before writing its own: their order is seen by a method, so
    # every pair of differing outputs races, as before the rule.
    backtrack = _run(_outputs(seen=True), _three_points())
    assert backtrack[0] == {0, 1}
    assert backtrack[1] == {0, 1}


def test_outputs_that_also_share_state_still_race() -> None:
    # x and y also write state.n: their order is a race whatever the outputs.
    steps = _outputs()
    steps[0].writes["state.n"] = ""
    steps[1].writes["state.n"] = ""
    assert _run(steps, _three_points())[0] == {0, 1}
