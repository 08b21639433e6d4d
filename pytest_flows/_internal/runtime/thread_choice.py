"""Who runs next, and what happens when nobody can.

At each switch point the :class:`~pytest_flows._internal.runtime.threads.ThreadScheduler`
chooses the participant that runs: seed 0 does what a free pool usually does (handed-off
work starts at once and runs until it blocks), another seed draws a priority per piece
of work (PCT), and a schedule (``explore()``, a replay) makes the choice through its
:class:`~pytest_flows._internal.runtime.schedule.Chooser`. When nobody can run, the clock
jumps to the next deadline (after real work outside the scheduler had its hold, see
:mod:`~pytest_flows._internal.runtime.real_work`), the world outside the flow gets real
time, or the run is a deadlock.

These are the scheduler's methods (``ThreadScheduler._chosen`` is :func:`chosen`), kept
here as functions of the scheduler; they call each other through it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.runtime import real_work
from pytest_flows._internal.runtime.participants import Participant, _real_sleep, real_monotonic
from pytest_flows._internal.runtime.sleep_sets import loops_busy

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.threads import ThreadScheduler

__all__ = [
    "DEADLOCK_GRACE",
    "MAX_DESCHEDULE",
    "REAL_IO_PATIENCE",
    "SAME_MOMENT",
    "choose",
    "chosen",
    "loop_turn",
    "next_deadline",
    "next_or_idle",
    "pick",
    "ready",
    "seed_zero_choice",
]

#: Real seconds to wait for something outside the flow (a thread the test
#: started, a socket) before calling an all-blocked run a deadlock.
DEADLOCK_GRACE = 1.0
#: Real seconds a run that watches real sockets may wait for them with no timer pending.
REAL_IO_PATIENCE = 60.0
#: With a seed other than 0, a runnable thread may be held back for at most this
#: many virtual seconds (an OS deschedules a thread for a while, never for long).
MAX_DESCHEDULE = 0.1
#: Deadlines closer than this (virtual seconds) are one moment. The clock rounds each
#: wait up by a fraction of a microsecond that depends on the reading it starts at (see
#: VirtualClock.after), so two waits that end together (0.03 + 0.07 and 0.1) end a few
#: hundred nanoseconds apart in an order the absolute time decides. Were that order
#: (or which side of MAX_DESCHEDULE a 0.1 s wait falls) to decide who runs, runs of one
#: flow started at different readings would choose differently: the same schedule would
#: meet different choice points in an exploration, and seeds (which start at 0) would
#: reach orders no schedule makes. The scheduler treats them as one moment instead.
SAME_MOMENT = 1e-5


def ready(sched: ThreadScheduler, exclude: Participant | None = None) -> list[Participant]:
    # Participant.ready, inlined: every switch point asks this of every participant.
    now = sched.clock._now
    found = []
    for p in list(sched._parts):
        if p is exclude or p.done or p.outside:
            continue
        ready_when = p.ready_when
        if ready_when is not None and (p.deadline is None or now < p.deadline):
            try:
                if not ready_when():
                    continue
            except Exception:  # a predicate over torn-down state: let its owner look
                pass
        found.append(p)
    return found


def choose(
    sched: ThreadScheduler, me: Participant, *, handoff: Participant | None, yielding: bool
) -> Participant:
    if (
        handoff is not None
        and sched.seed == 0
        and (sched.chooser is None or sched.chooser.passive)
        and handoff is not me
        and handoff in sched._parts
        and handoff.ready(sched.clock._now)
    ):
        # Seed 0 runs work it hands off at once (seed_zero_choice): no need to look at
        # who else could run.
        return handoff
    others = sched._ready(exclude=me)
    if not others:
        return me
    if sched.chooser is not None and not sched.chooser.passive:
        if me.loops and handoff is None:
            return sched._loop_turn(me, others)
        default = sched._seed_zero_choice(me, others, handoff=handoff, yielding=yielding)
        return sched._chosen(default, [me, *others], me) or me
    if sched.seed == 0:
        return sched._seed_zero_choice(me, others, handoff=handoff, yielding=yielding)
    return sched._pick([me, *others])


def loop_turn(sched: ThreadScheduler, me: Participant, others: list[Participant]) -> Participant:
    """The loop's turn under a schedule: a ready worker, or the loop goes on.

    A seed keeps the loop running past a ready worker when the loop's priority is
    the higher, and then at every turn until the worker blocks: so going on is one
    choice, and the workers it passed over are not offered again meanwhile.
    """
    offered = [p for p in others if not p.deferred]
    if not offered:
        return me
    default = sched._seed_zero_choice(me, offered, handoff=None, yielding=False)
    chosen = sched._chosen(default, [me, *offered], me) or me
    if chosen is me:
        for p in offered:
            p.deferred = True
    return chosen


def seed_zero_choice(
    me: Participant,
    others: list[Participant],
    *,
    handoff: Participant | None,
    yielding: bool,
) -> Participant:
    if handoff is not None and handoff in others:
        return handoff
    if yielding or me.loops:
        # The loop's turn (and sleep(0)) lets runnable threads go first, as
        # they would have run meanwhile on a real pool.
        workers = [p for p in others if not p.loops] or others
        later = [p for p in workers if p.seq > me.seq]
        return (later or workers)[0]
    return me


def chosen(
    sched: ThreadScheduler,
    default: Participant,
    candidates: list[Participant],
    me: Participant | None,
) -> Participant | None:
    """The schedule's choice: options are the seed-0 choice, then the others by seq.

    ``me`` is the thread choosing (None: one that left). A schedule that does not fit
    the run ends the run (see :meth:`_abort`): None then, or ``me`` to run on.
    """
    assert sched.chooser is not None
    rest = sorted((p for p in candidates if p is not default), key=lambda p: p.seq)
    options = [default, *rest]
    seqs = [p.seq for p in options]
    now = sched.clock.monotonic()
    due = sched._next_deadline(after=now)
    woken: tuple[int, ...] = ()
    if due is not None and _soon(due, now):
        # As with seeds: every ready thread may be held back while the clock runs
        # to a deadline that is near (seq 0 stands for "the clock").
        seqs.append(0)
        woken = tuple(
            p.seq
            for p in sched._parts
            if p.deadline is not None and not p.done and now < p.deadline <= due
        )
    if len(seqs) == 1:
        return default
    sched.chooser.loops.update(p.seq for p in options if p.loops)
    sched.chooser.now = now  # the sleep sets wake every thread when the clock moves
    sched.chooser.queued = loops_busy([loop for p in sched._parts for loop in p.loops], now)
    try:
        index = sched.chooser.pick("thread", tuple(seqs), woken)
    except FlowsUsageError as error:
        # Raised into the flow's code it would be the flow's error (or be caught by
        # it); the run ends instead, and the run's caller gets it (schedule_runs.py).
        sched._abort(error, me)
        return me
    if index == len(options):
        assert due is not None
        sched.clock.advance_to(due)
        sched.chooser.clock_moved(due, reaching=due + SAME_MOMENT)
        ready = [p for p in sched._ready() if p in candidates or p.ready(due)]
        return sched._chosen(default if default in ready else ready[0], ready, me)
    return options[index]


def pick(sched: ThreadScheduler, candidates: list[Participant]) -> Participant:
    """The seeded choice (seeds other than 0): the ready thread of highest priority.

    Each thread draws a random priority for each piece of work it takes on, as in
    probabilistic concurrency testing (PCT): whichever of several ready threads an
    OS would have run first is equally likely to be any of them. A thread may also
    be held back a little while the clock runs on (an OS deschedules a thread for a
    while, never for long).
    """
    due = sched._next_deadline(after=sched.clock.monotonic())
    soon = due is not None and _soon(due, sched.clock.monotonic())
    if soon and sched._rng.random() < 1 / (len(candidates) + 1):
        assert due is not None
        sched.clock.advance_to(due)
        candidates = sched._ready() or candidates
    return max(candidates, key=lambda p: (p.priority, -p.seq))


def next_deadline(sched: ThreadScheduler, after: float | None = None) -> float | None:
    """The next moment a deadline is due (later than ``after``: a thread held back while
    the clock runs on skips those already reached, whose threads are ready): the
    latest of the deadlines within :data:`SAME_MOMENT` of the earliest, so the clock
    moving there wakes them all at once."""
    deadlines = [
        p.deadline
        for p in sched._parts
        if p.deadline is not None and not p.done and (after is None or p.deadline > after)
    ]
    due = min(deadlines) if deadlines else None
    if due is not None:
        due = max(d for d in deadlines if d <= due + SAME_MOMENT)
    # A wait for ever (asyncio.sleep(math.inf)) is never due: time does not jump there.
    return due if due is not None and math.isfinite(due) else None


def next_or_idle(sched: ThreadScheduler, me: Participant | None) -> Participant | None:
    """The next participant to run after ``me`` blocked (or left), resolving idleness:
    move the clock, wait for the world outside the flow, or report a deadlock."""
    waited = 0.0
    pause = 0.00005
    held = 0.0  # real seconds virtual time waited for real work outside (real_work.py)
    while True:
        ready = sched._ready()
        if ready:
            real_work.held_until_ready(sched, held)
            if sched.chooser is not None and not sched.chooser.passive:
                workers = [p for p in ready if not p.loops]
                return sched._chosen((workers or ready)[0], ready, me)
            if sched.seed == 0:
                workers = [p for p in ready if not p.loops]
                return (workers or ready)[0]
            return sched._pick(ready)
        due = sched._next_deadline()
        if due is not None and not sched._watches_sockets():
            holding = real_work.hold(sched, due, held)
            if holding is not None:
                held = holding
                continue
            held = 0.0
            sched.clock.advance_to(due)
            if sched.chooser is not None and not sched.chooser.passive:
                sched.chooser.clock_moved(due, reaching=due + SAME_MOMENT)
            continue
        if not any(p.loops for p in sched._parts):
            # Only threads are left and all are blocked: something outside the flow
            # (a test thread, interpreter shutdown) may still release them.
            return None
        limit = REAL_IO_PATIENCE if sched._watches_sockets() else sched.outside_patience()
        if waited >= limit and (
            waited >= limit + sched.block_grace or real_work.in_flight(sched.block_grace) is None
        ):
            # A deadlock only when nothing outside the scheduler (a thread sleeping
            # or running, a child process) can still wake a waiter (real_work.py).
            return sched._deadlock(me)
        # Something outside the flow (a socket, a thread of the test) may still
        # wake a participant: give it real time, and let the clock follow by as
        # much real time as passed (a loaded machine oversleeps).
        started = real_monotonic()
        _real_sleep(pause)
        slept = real_monotonic() - started
        waited += slept
        if due is not None:
            sched.clock.advance_to(min(due, sched.clock.monotonic() + slept))
        pause = min(pause * 2, 0.002)


def _soon(due: float, now: float) -> bool:
    """Whether a ready thread may be held back while the clock runs to ``due`` (a wait
    of exactly MAX_DESCHEDULE is within, however the clock rounded it: SAME_MOMENT)."""
    return due - now <= MAX_DESCHEDULE + SAME_MOMENT
