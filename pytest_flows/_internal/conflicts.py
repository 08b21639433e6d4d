"""State races: two methods that may run concurrently touching one field, one of them writing.

Found from what the schedules of a run recorded (:class:`~pytest_flows._internal.schedule.Step`):

* within one schedule, method B wrote a field between two accesses of method A to it
  (a read-modify-write or check-then-act that another method broke into);
* across schedules, A's and B's single accesses to a field happened in both orders
  (last writer wins, or a read that sometimes sees the other's write).

Methods ordered by the flow's edges (``@listen``, ``and_``, routers, supersteps)
never show either pattern, and neither do accesses made under a common lock, so
no graph of the flow is needed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from pytest_flows._internal.schedule import Chooser

__all__ = ["Access", "Conflict", "conflicts_in"]


@dataclasses.dataclass(frozen=True)
class Access:
    method: str
    write: bool
    where: str


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
    for step in chooser.steps:
        method = step.method or f"thread #{step.thread}"
        for key in [*step.reads, *(k for k in step.writes if k not in step.reads)]:
            write = key in step.writes
            where = step.writes.get(key) or step.reads.get(key, "")
            found.setdefault(key, []).append(Access(method, write, where))
    return found


def _pair(key: str, a: Access, b: Access) -> Conflict:
    (x, y) = sorted((a, b), key=lambda acc: acc.method)
    return Conflict(key, x.method, y.method, x.where, y.where)


def _interleaved(key: str, seq: list[Access]) -> set[Conflict]:
    found: set[Conflict] = set()
    for j, middle in enumerate(seq):
        if not middle.write:
            continue
        before = {a.method: a for a in seq[:j] if a.method != middle.method}
        for later in seq[j + 1 :]:
            if later.method in before:
                found.add(_pair(key, before[later.method], middle))
    return found


def conflicts_in(choosers: Iterable[Chooser]) -> list[Conflict]:
    """The state races the recorded schedules show, sorted by field and methods."""
    found: set[Conflict] = set()
    orders: dict[tuple[str, str, str], set[bool]] = {}
    writes: dict[tuple[str, str, str], tuple[Access, Access]] = {}
    recorded = [
        {k: v for k, v in _accesses(c).items() if k.startswith("state.")} for c in choosers
    ]  # sync objects order threads; they are not state
    # A method that touches a field more than once in some schedule does a
    # read-modify-write there: the interleaving rule judges it, in every schedule (in
    # one where nothing else ran meanwhile, its accesses merge into one step).
    most: dict[tuple[str, str], int] = {}
    for accesses in recorded:
        for key, seq in accesses.items():
            counts: dict[str, int] = {}
            for access in seq:
                counts[access.method] = counts.get(access.method, 0) + 1
            for method, n in counts.items():
                most[(key, method)] = max(most.get((key, method), 0), n)
    for accesses in recorded:
        for key, seq in accesses.items():
            found |= _interleaved(key, seq)
            singles = [a for a in seq if most[(key, a.method)] == 1]
            for i, a in enumerate(singles):
                for b in singles[i + 1 :]:
                    if not (a.write or b.write):
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
