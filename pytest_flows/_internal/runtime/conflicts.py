"""State races: two methods that may run concurrently touching one field, one of them writing.

Found from what the schedules of a run recorded
(:class:`~pytest_flows._internal.runtime.schedule.Step`):

* within one schedule, method B wrote a field between two accesses of method A to it
  (a read-modify-write or check-then-act that another method broke into);
* across schedules, A's and B's single accesses to a field happened in both orders
  (last writer wins, or a read that sometimes sees the other's write).

Methods ordered by the flow's edges (``@listen``, ``and_``, routers, supersteps)
never show either pattern, and neither do accesses made under a common lock, so
no graph of the flow is needed. A method that runs again (a router looping back to a
listener) is another run of it each time: its accesses pair only with accesses not
ordered before or after them by the schedule's hand-offs (the happens-before of
:attr:`Step.after` and program order), so a listener and the router that sends it
round again are no conflict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from pytest_flows._internal.runtime.schedule import Chooser

__all__ = ["Access", "Conflict", "conflicts_in"]


@dataclasses.dataclass(frozen=True)
class Access:
    method: str
    write: bool
    where: str
    #: Which run of the method (its thread and task): a method run twice is two runs.
    run: tuple[int, int] = (0, 0)
    step: int = -1


@dataclasses.dataclass(frozen=True, order=True)
class Conflict:
    """``field`` is touched by ``first`` and ``second`` (sorted) with at least one write."""

    field: str
    first: str
    second: str
    first_where: str = ""
    second_where: str = ""

    def render(self) -> str:
        return (
            f"{self.field}: {self.first} ({self.first_where}) and {self.second} "
            f"({self.second_where}) may run concurrently and one of them writes it"
        )

    def __str__(self) -> str:
        return self.render()


def _accesses(chooser: Chooser) -> dict[str, list[Access]]:
    found: dict[str, list[Access]] = {}
    for i, step in enumerate(chooser.steps):
        method = step.method or f"thread #{step.thread}"
        for key in [*step.reads, *(k for k in step.writes if k not in step.reads)]:
            if not key.startswith("state."):
                continue  # sync objects order threads; they are not state
            write = key in step.writes
            where = step.writes.get(key) or step.reads.get(key, "")
            found.setdefault(key, []).append(
                Access(method, write, where, (step.thread, step.task), i)
            )
    return found


def _happens_before(chooser: Chooser) -> list[dict[tuple[int, int], int]]:
    """Vector clocks of the steps by program order and hand-offs alone (no accesses):
    ``clocks[j][run]`` is the latest step of ``run`` that happens before step ``j``."""
    clocks: list[dict[tuple[int, int], int]] = []
    last: dict[tuple[int, int], int] = {}
    for j, step in enumerate(chooser.steps):
        run = (step.thread, step.task)
        clock: dict[tuple[int, int], int] = {}
        for before in ([last[run]] if run in last else []) + list(step.after):
            for key, value in clocks[before].items():
                if clock.get(key, -1) < value:
                    clock[key] = value
        clock[run] = j
        clocks.append(clock)
        last[run] = j
    return clocks


def _concurrent(clocks: list[dict[tuple[int, int], int]], a: Access, b: Access) -> bool:
    """Whether neither access happens before the other (``a`` recorded first)."""
    if a.step < 0 or b.step < 0:
        return True
    return clocks[b.step].get(a.run, -1) < a.step


def _pair(key: str, a: Access, b: Access) -> Conflict:
    (x, y) = sorted((a, b), key=lambda acc: acc.method)
    return Conflict(key, x.method, y.method, x.where, y.where)


def _interleaved(
    key: str, seq: list[Access], clocks: list[dict[tuple[int, int], int]]
) -> set[Conflict]:
    found: set[Conflict] = set()
    for j, middle in enumerate(seq):
        if not middle.write:
            continue
        before = {a.run: a for a in seq[:j] if a.method != middle.method}
        for later in seq[j + 1 :]:
            first = before.get(later.run)
            if first is not None and (
                _concurrent(clocks, first, middle) or _concurrent(clocks, middle, later)
            ):
                found.add(_pair(key, first, middle))
    return found


def conflicts_in(choosers: Iterable[Chooser]) -> list[Conflict]:
    """The state races the recorded schedules show, sorted by field and methods."""
    found: set[Conflict] = set()
    orders: dict[tuple[str, str, str], set[bool]] = {}
    writes: dict[tuple[str, str, str], tuple[Access, Access]] = {}
    choosers = list(choosers)
    recorded = [_accesses(c) for c in choosers]
    # A run of a method that touches a field more than once in some schedule does a
    # read-modify-write there: the interleaving rule judges it, in every schedule (in
    # one where nothing else ran meanwhile, its accesses merge into one step).
    most: dict[tuple[str, str], int] = {}
    for accesses in recorded:
        for key, seq in accesses.items():
            counts: dict[tuple[str, tuple[int, int]], int] = {}
            for access in seq:
                run = (access.method, access.run)
                counts[run] = counts.get(run, 0) + 1
            for (method, _run), n in counts.items():
                most[(key, method)] = max(most.get((key, method), 0), n)
    for chooser, accesses in zip(choosers, recorded, strict=True):
        clocks = _happens_before(chooser)
        for key, seq in accesses.items():
            found |= _interleaved(key, seq, clocks)
            singles = [a for a in seq if most[(key, a.method)] == 1]
            for i, a in enumerate(singles):
                for b in singles[i + 1 :]:
                    if not (a.write or b.write) or a.method == b.method:
                        continue
                    if not _concurrent(clocks, a, b):
                        continue
                    first, second = sorted((a.method, b.method))
                    orders.setdefault((key, first, second), set()).add(a.method == first)
                    writes[(key, first, second)] = (a, b)
    for (key, _first, _second), seen in orders.items():
        if len(seen) == 2:
            a, b = writes[(key, _first, _second)]
            found.add(_pair(key, a, b))
    unique: dict[tuple[str, str, str], Conflict] = {}
    for conflict in sorted(found):  # one per field and pair: the first lines found
        unique.setdefault((conflict.field, conflict.first, conflict.second), conflict)
    return list(unique.values())
