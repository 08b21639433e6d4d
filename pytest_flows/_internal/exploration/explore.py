"""Systematic exploration: every schedule of a flow up to reduction, each outcome replayable.

:func:`explore_schedules` runs the flow again and again under a
:class:`~pytest_flows._internal.runtime.schedule.Chooser`, depth first over the choice
points the previous runs recorded; :mod:`~pytest_flows._internal.exploration.race_reversal`
says where the next schedules go (the reduction), and
:mod:`~pytest_flows._internal.exploration.outcomes` what tells one outcome from another.

``strategy="pct"`` instead runs ``runs`` random schedules (probabilistic
concurrency testing: ``depth`` priority change points per run) drawn from the
test's seed, for flows too large to enumerate.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.errors import FlowsError, FlowsUsageError, require_bool
from pytest_flows._internal.exploration.outcomes import DistinctOutcome, Exploration, outcome_key
from pytest_flows._internal.exploration.race_reversal import (
    Node,
    add_backtracks,
    next_prefix,
    sleep_plan,
    summaries,
)
from pytest_flows._internal.exploration.races import _by_seed, _check_seeds
from pytest_flows._internal.fakes.rewind import ScriptMark
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime.conflicts import conflicts_in
from pytest_flows._internal.runtime.schedule import Chooser, decode, encode
from pytest_flows._internal.runtime.sleep_sets import SleepSets

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["DistinctOutcome", "Exploration", "explore", "explore_schedules", "outcome_key"]


class _PctChooser(Chooser):
    """PCT: thread options get random priorities; ``depth`` times the running thread's
    priority drops below everyone's. Order choice points pick uniformly."""

    def __init__(self, rng: random.Random, depth: int, length: int) -> None:
        super().__init__([])
        self._rng = rng
        self._priority: dict[int, float] = {}
        self._changes = set(rng.sample(range(max(length, depth)), depth)) if depth else set()
        self._low = 0.0

    def pick(self, kind: str, options: tuple[int, ...], woken: tuple[int, ...] = ()) -> int:
        at = len(self.choices)
        if kind == "thread":
            for seq in options:
                self._priority.setdefault(seq, self._rng.random() + 1)
            index = max(range(len(options)), key=lambda i: self._priority[options[i]])
            if at in self._changes:
                self._low -= 1
                self._priority[options[index]] = self._low
                index = max(range(len(options)), key=lambda i: self._priority[options[i]])
        else:
            index = self._rng.randrange(len(options))
        self.prefix.append(index)
        return super().pick(kind, options, woken)


def explore_schedules(
    flows: FlowsSession,
    make_run: Callable[[], FlowRun],
    *,
    max_schedules: int,
    reduction: bool = True,
    strategy: str = "dfs",
    depth: int = 3,
    runs: int = 100,
    prefix: str = "s",
) -> Exploration:
    """Run ``make_run`` under schedule after schedule (see the module docstring);
    ``prefix`` (a schedule string) fixes the first choices: one part of a split search."""
    by_text: dict[str, DistinctOutcome] = {}
    choosers: list[Chooser] = []
    caveats: set[str] = set()

    def one(chooser: Chooser) -> None:
        try:
            with flows.scheduler.following(chooser):
                run = make_run()
        except FlowsUsageError:
            if chooser.misfit is None or not choosers:
                raise  # the first run follows the caller's prefix: theirs to fix
        if chooser.misfit is not None and not choosers:
            raise chooser.misfit
        if chooser.misfit is not None:
            raise FlowsError(
                f"explore(): schedule {chooser.schedule_text or encode(chooser.prefix)!r} "
                f"ran differently from the run it was derived from ({chooser.misfit}). "
                "The flow made a choice the harness does not control: real time, a thread "
                "or loop the harness does not run, or state kept between runs (a module "
                "global, a class attribute). Make the flow deterministic under a seed "
                "(two runs with --flows-seed=N give the same trace) and explore again."
            ) from None
        choosers.append(chooser)
        text = outcome_key(run)
        # Something the run did that the reduction does not model (the adapter says).
        caveats.update(chooser.caveats)
        seen = by_text.get(text)
        if seen is None:
            by_text[text] = DistinctOutcome(text, chooser.schedule, run)
        else:
            seen.schedules += 1

    complete = False
    caveat = ""
    if strategy == "pct":
        rng = random.Random(f"pytest-flows-pct:{flows.seed}:{flows.test_id}")
        length = 0
        for _ in range(min(runs, max_schedules)):
            drawn = _PctChooser(rng, depth, length)
            one(drawn)
            length = max(length, len(drawn.choices))
    elif strategy == "dfs":
        tree: list[Node] = []
        fixed = decode(prefix)
        following: list[int] | None = fixed
        while following is not None and len(choosers) < max_schedules:
            sleep = SleepSets(sleep_plan(tree, len(following))) if reduction else None
            chooser = Chooser(following, schedule=prefix if not choosers else "", sleep=sleep)
            one(chooser)
            steps_done = summaries(chooser)
            for node, choice in zip(tree, chooser.choices, strict=False):
                # The same choice point, but this run's threads: their numbers (seqs) are
                # new each run, and the reduction matches them against this run's steps.
                node.choice = choice
            fresh = [Node(c, {c.index}, {c.index}, [c.index]) for c in chooser.choices[len(tree) :]]
            tree.extend(fresh)
            for k, node in enumerate(tree[: len(chooser.choices)]):
                node.summaries.setdefault(node.choice.index, steps_done[k])
                if sleep is not None and k < len(sleep.asleep):
                    node.asleep = sleep.asleep[k]
            add_backtracks(chooser, tree, reduction)
            following = next_prefix(tree, len(fixed))
        complete = following is None and not caveats
        caveat = " ".join(sorted(caveats)) if following is None else ""
    else:
        raise FlowsUsageError(
            f"explore(..., strategy={strategy!r}): the strategies are 'dfs' (the default: "
            "every schedule up to reduction) and 'pct' (random schedules, for large flows)."
        )
    outcomes = sorted(by_text.values(), key=lambda o: o.text)
    return Exploration(
        complete=complete,
        caveat=caveat,
        outcomes=outcomes,
        schedules_run=len(choosers),
        conflicts=conflicts_in(choosers),
        strategy=strategy,
        choosers=choosers,
    )


def explore(
    flows: FlowsSession,
    target: Any,
    *args: Any,
    seeds: Iterable[int] | None = None,
    max_schedules: int = 1000,
    strategy: str = "dfs",
    depth: int = 3,
    runs: int = 100,
    reduction: bool = True,
    prefix: str = "s",
    **kwargs: Any,
) -> Any:
    """Every outcome of ``target``, one run per schedule (see
    :mod:`pytest_flows._internal.exploration.explore`).

    Without ``seeds`` the schedules are enumerated (``strategy="dfs"``, up to
    ``max_schedules``) or drawn (``strategy="pct"``) and an
    :class:`~pytest_flows._internal.exploration.explore.Exploration` comes back. With ``seeds`` the
    flow runs once per seed and the races are collected into :class:`RaceOutcomes`.

    ``prefix`` (a schedule string, ``"s1"``) fixes the first choices: the parts
    ``"s0"``, ``"s1"``, ... of the first choice point's options split one search
    across tests (and xdist workers); their outcomes together are the whole's.

    ``target`` is a flow class or a zero-argument factory: every run needs a
    fresh instance. Runs that fail are kept (their error is part of the
    outcome). Scripted fakes are shared by all runs, so script replies every
    run can use (``fake_llm.on(...)`` rules rather than a one-off queue).
    """
    if not hasattr(flows, "scheduler") or not callable(getattr(flows, "run", None)):
        raise FlowsUsageError(
            f"explore(flows, MyFlow, ...) takes the `flows` fixture first, got "
            f"{type(flows).__qualname__}."
        )
    require_bool(reduction, "explore(reduction=...)")
    if isinstance(target, type):
        build = None
    elif callable(target):
        build = target
    else:
        raise FlowsUsageError(
            f"explore() runs the flow once per seed, so it needs the flow class or a "
            f"zero-argument factory (lambda: MyFlow(...)), not an instance; got {target!r} "
            f"({type(target).__qualname__}). An instance keeps what it completed and cannot "
            "run again."
        )

    def fresh() -> Any:
        return target if build is None else build()

    if seeds is None:
        # Each run is the same scenario: it answers from the scripts as they stand now.
        mark = ScriptMark(flows)
        found = _systematic(
            flows,
            fresh,
            args,
            kwargs,
            max_schedules,
            strategy,
            depth,
            runs,
            reduction,
            prefix,
            mark,
        )
        if getattr(flows, "races", "off") not in (None, "off"):
            # races="fail" counts the explored runs too (their conflicts are the test's).
            name = target.__name__ if build is None else type(fresh()).__name__

            def again() -> FlowRun:
                return mark.replay(
                    lambda: flows.run(fresh(), *args, raise_on_error=False, **kwargs)
                )

            for chooser in found.choosers:
                chooser.rerun = (name, again)
            flows.recorded_schedules.extend(found.choosers)
        return found
    chosen = _check_seeds(seeds)
    return _by_seed(flows, fresh, args, kwargs, chosen)


def _systematic(
    flows: FlowsSession,
    fresh: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    max_schedules: int,
    strategy: str,
    depth: int,
    runs: int,
    reduction: bool,
    prefix: str,
    mark: ScriptMark,
) -> Any:
    for name, value, least in (
        ("max_schedules", max_schedules, 1),
        ("runs", runs, 1),
        ("depth", depth, 0),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise FlowsUsageError(
                f"explore(..., {name}={value!r}): pass a whole number >= {least}, "
                f"e.g. {name}={max(least, 3)}."
            )
    return explore_schedules(
        flows,
        lambda: mark.replay(lambda: flows.run(fresh(), *args, raise_on_error=False, **kwargs)),
        max_schedules=max_schedules,
        reduction=reduction,
        strategy=strategy,
        depth=depth,
        runs=runs,
        prefix=prefix,
    )
