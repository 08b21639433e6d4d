"""Threads that keep a run from going on: blocked outside the scheduler, interrupted
while parked, deadlocked, or spinning alone.

A thread holding the baton that blocks where the scheduler cannot see it (a lock built
before the test, a socket, a call into C) is found by the liveness guard
(:mod:`~pytest_flows._internal.runtime.liveness`), and the others run meanwhile. An error
a signal handler raises in a parked thread, a deadlock (everyone blocked, nothing due, no
work outside in flight) and a thread that spins alone end the run: every parked thread is
woken, the run's root loop raises the error, the other threads unwind.

These are the :class:`~pytest_flows._internal.runtime.threads.ThreadScheduler`'s methods
(``ThreadScheduler._abort`` is :func:`abort`), kept here as functions of the scheduler;
they call each other through it.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from pytest_flows._internal.errors import FlowsDeadlockError, FlowsWarning
from pytest_flows._internal.runtime.deadlock_report import deadlock_report
from pytest_flows._internal.runtime.frames import current_frames
from pytest_flows._internal.runtime.participants import FlowsAborted, Participant, running_task
from pytest_flows._internal.runtime.thread_choice import DEADLOCK_GRACE, REAL_IO_PATIENCE

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.threads import ThreadScheduler

__all__ = [
    "abort",
    "blocked_outside",
    "check_abort",
    "deadlock",
    "has_outside",
    "has_ready",
    "interrupted",
    "next_deadline",
    "outside_deadlock",
    "outside_patience",
    "reenter",
    "resume_others",
    "spent_quantum",
    "spinning",
    "unpark",
    "watches_sockets",
]


# -- the liveness guard (see pytest_flows._internal.runtime.liveness) ---------------------
def has_ready(sched: ThreadScheduler, me: Participant | None) -> bool:
    """Whether a participant other than ``me`` (None: any) could run now."""
    return bool(sched._ready(exclude=me))


def spent_quantum(sched: ThreadScheduler, me: Participant) -> None:
    """``me`` spun through a preemption bound (real_work.py): under a seed its
    priority drops below every other ready thread's, or a spinner drawn highest
    would win every yield and starve the thread it polls for."""
    if sched.seed == 0:
        return
    others = sched._ready(exclude=me)
    if others:
        me.priority = min(p.priority for p in others) * sched._rng.random()


def next_deadline(sched: ThreadScheduler) -> float | None:
    """The next moment a pending deadline is due (None: none is)."""
    return sched._next_deadline()


def spinning(sched: ThreadScheduler, me: Participant, method: str, limit: float) -> None:
    """``me`` spun alone for ``limit`` virtual seconds, with nothing that could end it:
    the run ends, naming the spinning method and every thread's stack."""
    text = (
        f"flow thread {me.name!r} kept running {method} for {limit:g} virtual seconds "
        "without blocking, and nothing else can run, no deadline is pending and no "
        "work outside the scheduler is in flight: nothing can ever end the loop (bare, "
        "it would spin for ever). Give the loop a way out (a deadline, a sleep, an "
        "event another thread sets), or raise the bound with "
        "flows.scheduler.threads.real_work.spin_limit.\n\n"
    )
    sched._abort(FlowsDeadlockError(text + deadlock_report(sched.clock.monotonic(), [])), me)


def has_outside(sched: ThreadScheduler) -> bool:
    """Whether a participant is blocked outside the scheduler."""
    return any(p.outside for p in sched._parts)


def outside_patience(sched: ThreadScheduler) -> float:
    """Real seconds to wait, with nothing else able to run, before calling the run
    deadlocked: a socket may take a while to answer, nothing else should."""
    if any(p.outside and p.what.startswith("a socket") for p in sched._parts):
        return REAL_IO_PATIENCE
    return DEADLOCK_GRACE


def blocked_outside(
    sched: ThreadScheduler, p: Participant, frame: object, lasti: int, what: str, in_socket: bool
) -> None:
    """The watchdog saw ``p``, holding the baton, blocked outside the scheduler for
    longer than :attr:`block_grace`: a switch point. The others run meanwhile, and
    ``p`` waits for the baton again at its next switch point."""
    with sched._mutex:
        if sched._holder is not p or p.outside or sched._aborted is not None or sched.detached:
            return
        now = current_frames().get(p.ident) if p.ident is not None else None
        if now is not frame or getattr(now, "f_lasti", None) != lasti:
            return  # it moved on meanwhile
        p.outside = True
        p.what = f"{what} (blocked outside the scheduler)"
        sched._holder = None
        if what not in sched._warned:
            sched._warned.add(what)
            p.note = what
    if sched.chooser is not None:
        sched.chooser.caveats.add(
            "a thread blocked outside the scheduler (an unmanaged lock, a socket): "
            "the order around it is the OS's"
        )
    sched._resume_others()


def resume_others(sched: ThreadScheduler) -> None:
    """Hand the free baton to whoever can run (the clock jumps to a due deadline if
    nobody can); else the outside thread takes it when it comes back."""
    with sched._mutex:
        if sched._holder is not None or sched._aborted is not None or sched.detached:
            return
        ready = sched._ready()
        if not ready:
            due = sched._next_deadline()
            if due is not None:
                sched.clock.advance_to(due)
                ready = sched._ready()
        if not ready:
            return
        if sched.seed == 0 or sched.chooser is not None:
            workers = [p for p in ready if not p.is_loop]
            nxt = (workers or ready)[0]
        else:
            nxt = sched._pick(ready)
        sched._holder = nxt
        sched.switches += 1
    sched._note_holder(nxt)
    nxt._wake.release()


def reenter(sched: ThreadScheduler, me: Participant) -> None:
    """``me`` came back from a block outside the scheduler: it waits for the baton."""
    with sched._mutex:
        me.outside = False
        me.what = ""
        me.ready_when, me.deadline = None, None
        take = sched._holder is None and sched._aborted is None
        if take:
            sched._holder = me
            sched._note_holder(me)
    note, me.note = me.note, ""
    if not take:
        sched._park(me)
    if note:
        warnings.warn(
            FlowsWarning(
                f"a flow thread blocked outside the scheduler for over {sched.block_grace:g} "
                f"real seconds on {note}; the other threads ran meanwhile, so the order "
                "around it is only as deterministic as that primitive. Build locks, "
                "conditions and events during the test (they are then managed), or "
                "raise the grace with @pytest.mark.flows(block_grace=...)."
            ),
            stacklevel=4,
        )


def outside_deadlock(sched: ThreadScheduler) -> None:
    """Nothing has run for the patience while a thread is blocked outside the
    scheduler and nobody else can move: report every thread, never wait for ever."""
    with sched._mutex:
        if sched._holder is not None or sched._aborted is not None or sched.detached:
            return
        if sched._ready() or not any(p.is_loop for p in sched._parts):
            return
    sched._deadlock(None)


def watches_sockets(sched: ThreadScheduler) -> bool:
    for p in sched._parts:
        for loop in p.loops:
            selector = getattr(loop, "_selector", None)
            if selector is not None and len(selector.get_map()) > 1:
                return True
    return False


# -- a signal handler's error in a parked thread -------------------------------------------
def interrupted(sched: ThreadScheduler, me: Participant, error: BaseException) -> None:
    if sched._aborted is not None or sched.detached:
        return
    report = deadlock_report(sched.clock.monotonic(), list(sched._parts)).split("\n", 2)[-1]
    error.add_note(
        f"pytest-flows: {type(error).__name__} arrived while {me.name!r} waited for its "
        f"turn; the run ends. Its threads:\n{report}"
    )
    with sched._mutex:
        sched._aborted = error
        parked = [p for p in sched._parts if p is not me]
        for p in sched._parts:
            p.cut = True
        sched._parts.clear()
        sched._idle.clear()
        sched._holder = None
    if me.is_loop and running_task(me) is not None:
        # Raised inside a task step, the task may take it as its own result: the
        # loop's next turn raises it again, outside any task, and the run ends.
        me.cut, me.error = True, error
        sched._interrupt = error
    for p in parked:
        unpark(p)


# -- deadlock --------------------------------------------------------------------------------
def check_abort(sched: ThreadScheduler, me: Participant) -> None:
    if not me.cut:
        return
    if me.error is not None:
        if me.error is sched._interrupt and running_task(me) is not None:
            return  # raised again only between task steps (see _interrupted)
        error, me.error = me.error, None
        raise error
    if not me.is_loop:
        raise FlowsAborted()


def deadlock(sched: ThreadScheduler, me: Participant | None) -> Participant | None:
    sched._abort(FlowsDeadlockError(deadlock_report(sched.clock.monotonic(), sched._parts)), me)
    return None


def abort(sched: ThreadScheduler, error: BaseException, me: Participant | None) -> None:
    """End the run with ``error``: every parked thread is woken, the run's root loop
    raises it, the other threads unwind (FlowsAborted) and the loops run on as plain
    loops. ``me`` is the calling thread (None: one that left)."""
    sched._aborted = error
    with sched._mutex:
        sched._holder = None
        parked = [p for p in sched._parts if p is not me]
        loops = [p for p in sched._parts if p.is_loop]
        # Every thread of the run unwinds, however long it takes to get there: the
        # scheduler forgets them now, so the next run starts afresh (see enter).
        for p in sched._parts:
            p.cut = True
        if me is not None:
            me.cut = True
        sched._parts.clear()
        sched._idle.clear()
    root = loops[0] if loops else None
    if root is not None and root is not me:
        root.error = error
    for p in parked:
        unpark(p)
    if root is None or me is root:
        raise error  # nobody else to tell: the caller's thread ends the run
    if me is not None and not me.is_loop:
        raise FlowsAborted()


def unpark(p: Participant) -> None:
    """Unpark ``p`` when letting every thread go (it may already be unparked)."""
    if p._wake.locked():
        p._wake.release()
