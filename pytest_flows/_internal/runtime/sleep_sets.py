"""Sleep sets (Godefroid): the threads whose turn at a choice point is already covered.

Dynamic partial-order reduction alone
(:mod:`~pytest_flows._internal.exploration.race_reversal`) tries the later step of each
race first somewhere earlier, but it does not remember which orders it already covered:
after running ``a`` then ``b`` at a choice point, a branch that starts with ``b``
reaches ``a``'s independent step again and tries it again, though ``b a`` is ``a b`` up
to commuting. Three listeners doing read-sleep-write on one
field took over 1,500 schedules that way (90 orders of their six accesses).

A sleep set holds, at each choice point of a run, the threads whose next step was
already explored from an earlier point with nothing dependent run since: those threads
are not chosen there (past the schedule's prefix the chooser takes the first option
awake; the search does not backtrack to a sleeping one). A thread leaves the sleep set
when it runs, when a step dependent on its next step runs, when it stops being an
option, and when the virtual clock moves if its next step reads the clock (a wait's
deadline, ``time.monotonic()``: the same step later is not the same step). The event
loop and the clock option never sleep: what the loop runs next depends on which of its
tasks were woken, not on accesses. A step that takes a job off a pool's queue writes
``pool:jobs`` (two idle workers compete for one job); a step that ends a job whose
result wakes a loop's task writes ``loop:posts``: it stays asleep past a turn of the
loop that was *quiet*, and past any other turn it is *held* (see
:meth:`SleepSets.settle`); and a thread's next step includes the sync objects of its
previous step (a blocked acquire records its access before it waits).

A held thread is awake for the reduction (a race can run it anywhere, and no race counts
as covered by it) but not taken by default: past a schedule's prefix the chooser runs
another awake option first. Where a job's end lands among the loop's turns is then tried
only where a race of what follows it asks for it, not at every turn
(docs/exploration.md, "A job's end placed by its races").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "CLOCK",
    "JOBS",
    "LOOKED_AT",
    "POSTS",
    "SleepSets",
    "Summary",
    "dependent",
    "loops_busy",
    "overlap",
]

#: The key a step that takes a job off a pool's queue writes (for sleep sets only).
JOBS = "pool:jobs"

#: The key a pool thread's step writes when its job ends and wakes a task of an event
#: loop (for sleep sets only): what the loop's next turn runs depends on it.
POSTS = "loop:posts"

#: The key a step that reads the virtual clock reads, and a move of the clock (a step of
#: thread 0) writes: exploration/race_reversal.py orders the two within the hold-back window.
CLOCK = "time:clock"

#: The key prefix of the crewAI adapter's "last write wins" records (participants.LAST_WRITE).
_LAST_WRITE = "flow:last="

#: The key prefixes a job's end reads when a task looks at it (participants.RESULT_WANTED_BY:
#: the crewAI adapter's ``or_`` race, ``race:or(a, b)`` and ``check:or(a, b)``). The task
#: that looks is woken through ``asyncio.as_completed``'s callbacks, which record no wake:
#: such an end never sleeps past a turn of the loop, and the look's races are all reversed
#: where they began (exploration/race_reversal.py).
LOOKED_AT = ("race:", "check:")


def loops_busy(loops: Iterable[Any], now: float) -> bool:
    """Whether an event loop of ``loops`` has a callback queued or a timer due by ``now``:
    its next turn runs something besides what a job that ends now would post."""
    for loop in loops:
        if getattr(loop, "_ready", None):
            return True
        timers = getattr(loop, "_scheduled", ())
        if any(not h.cancelled() and h.when() <= now for h in timers):
            return True
    return False


@dataclasses.dataclass(frozen=True)
class Summary:
    """What a thread's step at a choice point read and wrote (keys only)."""

    reads: frozenset[str]
    writes: frozenset[str]


#: The key prefix of an access that orders but never conflicts: a read of an ``after:``
#: key happens after the writes of it that ran before, in every order (the adapter says
#: so only where that holds), so the two are never reversed and commute for sleep sets.
AFTER = "after:"


def overlap(these: Iterable[str], those: Iterable[str]) -> bool:
    """Whether a key of one touches a key of the other: the same, or one inside the
    other (``state.cfg`` holds ``state.cfg.retries``). ``after:`` keys never do."""
    for x in these:
        if x.startswith(AFTER):
            continue
        for y in those:
            if x.startswith(_LAST_WRITE) and y.startswith(_LAST_WRITE):
                if x != y:  # the last of two writes wins: equal values commute
                    return True
            elif x == y or x.startswith(y + ".") or y.startswith(x + "."):
                return True
    return False


def dependent(
    a_reads: Iterable[str], a_writes: Iterable[str], b_reads: Iterable[str], b_writes: Iterable[str]
) -> bool:
    """Whether two steps do not commute: one writes what the other reads or writes."""
    if not a_writes and not b_writes:  # (empty collections: an iterator is always true)
        return False
    a_writes, b_writes = list(a_writes), list(b_writes)
    return overlap(a_writes, [*b_reads, *b_writes]) or overlap(b_writes, a_reads)


class SleepSets:
    """One run's sleep sets, driven by the
    :class:`~pytest_flows._internal.runtime.schedule.Chooser`.

    ``plan[k]`` lists the options explored at choice point ``k`` of the prefix before
    the one this run takes there, each with its step's :class:`Summary`: they fall
    asleep in this run's branch.
    """

    def __init__(self, plan: list[list[tuple[int, Summary]]]) -> None:
        self.plan = plan
        #: The option indices asleep at each choice point of the run.
        self.asleep: list[frozenset[int]] = []
        self._sleeping: dict[int, Summary] = {}
        #: Job ends a turn of the loop took out of the sleep set that was not quiet: awake,
        #: but the default runs another awake option first.
        self._held: dict[int, Summary] = {}
        self._checked = 0  # the steps already checked against the sleeping threads
        self._now: float | None = None
        self._job = False

    @property
    def checked(self) -> int:
        """How many of the run's steps were settled (the steps after it are new)."""
        return self._checked

    def ran(self, thread: int) -> None:
        """``thread`` got the baton: its next step is running."""
        self._sleeping.pop(thread, None)
        self._held.pop(thread, None)

    def job_taken(self) -> None:
        self._job = True

    def settle(
        self,
        steps: Sequence[object],
        options: tuple[int, ...],
        now: float | None,
        loops: set[int] = frozenset(),  # type: ignore[assignment]
        *,
        quiet: bool = False,
    ) -> None:
        """Wake the threads that ran, that a dependent step disturbed, that are no longer
        options, or all of them if the clock moved, since the last choice point.

        A job's end that wakes a loop's task (its summary writes ``loop:posts``) stays
        asleep past the loop's turn when the turn was ``quiet``: the loops have nothing
        queued now and no task woke and ran within the steps since the last choice point
        (the chooser says so). Then the end posted before the turn or after it leaves the
        woken task alone in the queue, with the same tasks before it and after it, so the
        two orders differ in the loop's bookkeeping only (docs/exploration.md, "A job's
        end against a quiet turn"). An end a task looks at (``or_`` racers' jobs) is
        the exception: that task's wake is not recorded. Past any other turn the end is
        *held*: awake, but not the default (docs/exploration.md, "A job's end placed by
        its races")."""
        if now is not None and self._now is not None and now != self._now:
            for kept in (self._sleeping, self._held):
                for seq, summary in list(kept.items()):
                    if CLOCK in summary.reads:
                        del kept[seq]
        self._now = now
        fresh = steps[self._checked :]
        self._checked = len(steps)
        turned = False
        for step in fresh:
            thread = getattr(step, "thread", -1)
            self._sleeping.pop(thread, None)
            self._held.pop(thread, None)
            reads, writes = getattr(step, "reads", {}), getattr(step, "writes", {})
            # A turn of the loop takes in what jobs that ended posted (its tasks' steps
            # run within a turn whose callbacks were counted when it began).
            turned = turned or (thread in loops and getattr(step, "task", 0) == 0)
            for kept in (self._sleeping, self._held):
                for seq, summary in list(kept.items()):
                    if dependent(summary.reads, summary.writes, reads, writes):
                        del kept[seq]
        if turned:
            for seq, summary in list(self._sleeping.items()):
                if POSTS in summary.writes and (
                    not quiet or any(k.startswith(LOOKED_AT) for k in summary.reads)
                ):
                    del self._sleeping[seq]
                    self._held[seq] = summary
        if self._job:
            self._job = False
            for seq, summary in list(self._sleeping.items()):
                if JOBS in summary.writes:
                    del self._sleeping[seq]
        for seq in [s for s in self._sleeping if s not in options]:
            del self._sleeping[seq]
        for seq in [s for s in self._held if s not in options]:
            del self._held[seq]

    def choose(self, at: int, options: tuple[int, ...], index: int | None, loops: set[int]) -> int:
        """The index taken at choice point ``at``: ``index`` (the prefix's), or past the
        prefix the first option awake and not held (the first awake, if all are held; the
        first, if all sleep)."""
        asleep = frozenset(i for i, seq in enumerate(options) if seq in self._sleeping)
        self.asleep.append(asleep)
        if index is None:
            awake = [i for i in range(len(options)) if i not in asleep]
            free = [i for i in awake if options[i] not in self._held]
            index = (free or awake or [0])[0]
        if at < len(self.plan):
            for explored, summary in self.plan[at]:
                if explored == index or explored >= len(options):
                    continue
                seq = options[explored]
                if seq != 0 and seq not in loops:
                    self._sleeping[seq] = summary
        self._sleeping.pop(options[index], None)
        self._held.pop(options[index], None)
        return index
