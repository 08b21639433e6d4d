"""Race reversal on hand-built runs: the choice-point tree and the backtracks
``add_backtracks`` adds to it (shared by the reduction's unit tests)."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_flows._internal.exploration.race_reversal import Node, add_backtracks
from pytest_flows._internal.runtime.schedule import Choice, Chooser, Step


def node(options: tuple[int, ...], step: int, *, asleep: frozenset[int] = frozenset()) -> Node:
    """A choice point among thread seqs ``options`` at ``step``, where option 0 ran."""
    return Node(Choice("thread", options, 0, step), {0}, {0}, [0], asleep=asleep)


def backtracks(steps: list[Step], tree: list[Node], loops: Iterable[int] = ()) -> list[set[int]]:
    """Each choice point's backtrack set once the races of ``steps`` are reversed;
    ``loops``: the seqs of event loop threads."""
    chooser = Chooser()
    chooser.steps = steps
    chooser.choices = [n.choice for n in tree]
    chooser.loops = set(loops)
    add_backtracks(chooser, tree, reduction=True)
    return [n.backtrack for n in tree]
