"""Where a complete search's schedules go: the race reversals that added a branch, by
the kind of the race, and how many of the search's runs are distinct traces with and
without the clock's events.

Not collected by pytest; run it from the checkout's root:

    .venv/bin/python tests/benchmarks/bench_where_schedules_go.py LostUpdate ThreeAsync

Each argument is a flow class of the test flows (``explore_flows``, ``reduction_flows``,
``scheduler_flows``, ``soundness_flows``, ``access_flows``) or a file the random-flow
check printed (``tests/crewai/soundness_misses/*.txt``). ``BENCH_CAP`` (default 20000)
caps each search; ``BENCH_TEST_ID`` (default ``bench``) is the test id it runs under.
``BENCH_NO_CLOCK=1`` leaves the clock out of the reduction (reads against moves, the
sleep sets' wake on a move, a timer's task after the move that reached it): unsound
(``ThreadStartHeldBack`` needs it), an upper bound of what a clock rule could save.

Per flow it prints the schedules, outcomes and CPU, then:

- *options added*: each option a race's reversal added to a choice point's backtrack
  set (a branch the search will run unless a sleep set covers it), by the keys the two
  steps share (``state``, ``race``, ``check``, ``trace``, ``fires``, ``flow:last``,
  ``sync``; ``clock`` for a read of the clock against a move) and the kinds of the two
  threads (``pool``, ``loop``, ``move``);
- *every option*: reversals that fell back to every option of a point (an initial of
  what leads to the later step cannot run there);
- *traces*: how many distinct Mazurkiewicz traces the runs are, as the set of ordered
  pairs of dependent steps (each step named by its method, its kind of thread and how
  many so named came before it), with the clock's moves and readings, and without them.
"""

from __future__ import annotations

import collections
import importlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchkit import HERE  # first: crewai's offline settings, the test flows' path

# isort: split
from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration import explore as explore_module
from pytest_flows._internal.exploration import race_reversal as rr
from pytest_flows._internal.runtime import schedule as schedule_module
from pytest_flows._internal.runtime import sleep_sets
from pytest_flows._internal.runtime.sleep_sets import CLOCK, dependent, overlap

CAP = int(os.environ.get("BENCH_CAP", "20000"))
TEST_ID = os.environ.get("BENCH_TEST_ID", "bench")
_PREFIXES = ("state.", "flow:last=", "race:", "check:", "fires:", "sync:", "trace:", "lg:")

_now: dict[str, Any] = {"kind": "", "loops": set()}
added: collections.Counter[str] = collections.Counter()
every: collections.Counter[str] = collections.Counter()


def _prefix(key: str) -> str:
    return next((p.rstrip(":.=") for p in _PREFIXES if key.startswith(p)), key.split(":")[0])


def _kind(a: Any, b: Any) -> str:
    keys = {
        _prefix(k)
        for x, y in ((a, b), (b, a))
        for k in x.writes
        if k != CLOCK
        for other in (*y.reads, *y.writes)
        if other != CLOCK and overlap([k], [other])
    }

    def who(step: Any) -> str:
        return "move" if step.thread == 0 else "loop" if step.thread in _now["loops"] else "pool"

    return f"{'+'.join(sorted(keys)) or 'clock'} [{who(a)}/{who(b)}]"


def _instrument() -> None:
    decided_at = rr._decided_at

    def decided(steps: Any, loops: Any, clock: Any, i: int, j: int) -> Any:
        _now["kind"] = _kind(steps[i], steps[j])
        return decided_at(steps, loops, clock, i, j)

    rr._decided_at = decided
    for name in ("_reverse", "_reverse_by_initials"):
        original = getattr(rr, name)

        def counted(tree: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            before = sum(len(node.backtrack) for node in tree)
            result = _original(tree, *args, **kwargs)
            grew = sum(len(node.backtrack) for node in tree) - before
            if grew:
                added[_now["kind"]] += grew
            return result

        setattr(rr, name, counted)
    initial_options = rr._initial_options

    def initials(*args: Any) -> Any:
        found = initial_options(*args)
        if found is None:
            every[_now["kind"]] += 1
        return found

    rr._initial_options = initials
    add_backtracks = rr.add_backtracks

    def add(chooser: Any, tree: Any, reduction: bool) -> None:
        _now["loops"] = chooser.loops
        add_backtracks(chooser, tree, reduction)

    explore_module.add_backtracks = add  # type: ignore[assignment]


def _without_the_clock() -> None:
    def steps_dependent(a: Any, b: Any) -> bool:
        return dependent(
            *([k for k in keys if k != CLOCK] for keys in (a.reads, a.writes, b.reads, b.writes))
        )

    rr.steps_dependent = steps_dependent
    settle = sleep_sets.SleepSets.settle

    def settle_no_clock(
        self: Any, steps: Any, options: Any, now: Any, *args: Any, **kw: Any
    ) -> None:
        self._now = now  # the clock never "moved": no reader wakes
        settle(self, steps, options, now, *args, **kw)

    sleep_sets.SleepSets.settle = settle_no_clock  # type: ignore[method-assign]
    schedule_module.Chooser._reached_by = property(  # type: ignore[assignment]
        lambda self: {}, lambda self, value: None
    )


def _flow(name: str) -> Any:
    if name.endswith(".txt"):
        from random_flows import load

        return load(Path(name).read_text(), "Generated")
    for module in (
        "explore_flows",
        "reduction_flows",
        "scheduler_flows",
        "soundness_flows",
        "access_flows",
    ):
        found = getattr(importlib.import_module(module), name, None)
        if found is not None:
            return found
    raise SystemExit(f"no flow {name!r} in the test flows; name a class or a printed .txt file")


def _traces(choosers: list[Any], with_clock: bool) -> int:
    seen = set()
    for chooser in choosers:
        counts: collections.Counter[tuple[Any, ...]] = collections.Counter()
        names = []
        for step in chooser.steps:
            method = step.method or chooser.methods.get((step.thread, step.task), "")
            kind = (
                "move" if step.thread == 0 else "loop" if step.thread in chooser.loops else "pool"
            )
            base = (method, kind, step.task if kind == "loop" else 0)
            counts[base] += 1
            names.append((base, counts[base]))
        steps = chooser.steps
        kept = [
            i for i, s in enumerate(steps) if (s.reads or s.writes) and (with_clock or s.thread)
        ]
        pairs = set()
        for n, a in enumerate(kept):
            for b in kept[n + 1 :]:
                x, y = steps[a], steps[b]
                if with_clock:
                    hit = rr.steps_dependent(x, y)
                else:
                    hit = dependent(
                        *(
                            [k for k in ks if k != CLOCK]
                            for ks in (x.reads, x.writes, y.reads, y.writes)
                        )
                    )
                if hit:
                    pairs.add((names[a], names[b]))
        seen.add(frozenset(pairs))
    return len(seen)


def main() -> None:
    os.chdir(HERE.parent.parent)
    _instrument()
    if os.environ.get("BENCH_NO_CLOCK") == "1":
        _without_the_clock()
    for name in sys.argv[1:]:
        added.clear()
        every.clear()
        flow = _flow(name)  # imported outside the session: an import builds locks
        started = time.process_time()
        with FlowsSession(test_id=TEST_ID) as session:
            found = explore(session, flow, max_schedules=CAP)
        took = time.process_time() - started
        print(
            f"{name}: {found.schedules_run} schedules, complete {found.complete}, "
            f"{len(found.outcomes)} outcomes, CPU {took:.1f} s; traces "
            f"{_traces(found.choosers, True)} with the clock's events, "
            f"{_traces(found.choosers, False)} without",
            flush=True,
        )
        print("  options added, by the race's keys [threads]:")
        for kind, count in added.most_common():
            print(f"    {count:6}  {kind}")
        print("  reversals that tried every option of a point:")
        for kind, count in every.most_common():
            print(f"    {count:6}  {kind}")


if __name__ == "__main__":
    main()
