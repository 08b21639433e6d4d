"""The threads a :class:`~pytest_flows._internal.runtime.threads.ThreadScheduler` runs, and what
code on them asks.

A *participant* is one managed thread, parked on a private lock whenever it does not
hold the baton. Every patched primitive asks :func:`current` on every call (a dict
lookup by thread id), and fakes use :func:`sleep_on`, :func:`switch_point` and
:func:`record_access` without knowing the scheduler.
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.loop import VirtualClock
    from pytest_flows._internal.runtime.threads import ThreadScheduler

__all__ = [
    "LAST_WRITE",
    "RESULT_WANTED_BY",
    "TIMER_MOMENT",
    "FlowsAborted",
    "Participant",
    "clock_read_by",
    "current",
    "internal_lock",
    "note_caveat",
    "note_clock_read",
    "real_monotonic",
    "record_access",
    "recording",
    "running_task",
    "sleep_on",
    "switch_point",
    "track_container",
]

# Real primitives, captured before any patch: the scheduler's own machinery
# must never route through itself.
_real_lock = _thread.allocate_lock


def internal_lock() -> _thread.LockType:
    """A lock for the harness's own bookkeeping (ids, the trace, usage).

    Always a real lock, even when made during a run: the runtime has no lock there, so
    it must not be a switch point (nor a choice an exploration branches on), and it is
    never held across one.
    """
    return _real_lock()


_real_sleep = time.sleep


# Kept in a container: freezegun swaps module-level references to the time
# functions, and the harness must keep reading real time (idle waits, loops no
# scheduler drives).
_REAL = {"monotonic": time.monotonic}


def real_monotonic() -> float:
    """The real ``time.monotonic()``, even while the wall clock is frozen."""
    return _REAL["monotonic"]()


_get_ident = _thread.get_ident


class FlowsAborted(BaseException):
    """Unwinds a managed thread after its run deadlocked (never reaches user code's ``except
    Exception``)."""


#: The participants each managed thread plays, innermost last, by thread id: every
#: primitive asks on every call, and a dict lookup is the cheapest way to answer.
_by_thread: dict[int, list[Participant]] = {}


def _stack() -> list[Participant]:
    return _by_thread.setdefault(_get_ident(), [])


def current() -> Participant | None:
    """The participant running on this thread, or None for a thread the harness does not manage.

    A thread may take part in two schedulers at once (a ``FlowsSession`` opened inside a
    flows test runs its own flows from a thread of the outer one): the inner one counts
    until it lets go.
    """
    stack = _by_thread.get(_get_ident())
    if not stack:
        return None
    top = stack[-1]
    if top.generation == top.sched.generation:  # not let go (``let_go``, inlined: hot)
        return top
    while stack and stack[-1].let_go:
        stack.pop()
    return stack[-1] if stack else None


def sleep_on(clock: VirtualClock, seconds: float) -> None:
    """Spend ``seconds`` of virtual time: on a managed thread a sleep that overlaps with
    its siblings' (a switch point); elsewhere the clock simply moves on."""
    me = current()
    if me is not None and me.sched.clock is clock:
        me.sched.sleep(me, seconds)
    else:
        clock.advance(seconds)


def switch_point(why: str) -> None:
    """A point where another thread could run first (say, a read of shared flow state).

    Seed 0 goes on (a thread runs until it blocks); other seeds may switch here,
    so a read-modify-write race can interleave.
    """
    me = current()
    if me is not None and me.sched.seed != 0 and me.sched._aborted is None:
        me.sched.switch(me, why=why)


#: Prefix of an access key that names a value written to one place where only the last
#: write counts (``flow:last=<repr>``, the flow's output): two such writes conflict only
#: when their values differ (see sleep_sets.overlap).
LAST_WRITE = "flow:last="

#: The key an asyncio timer's setting reads, and writes when another timer is due at the
#: same moment (the loop fires such timers in the order their setting left the heap in).
TIMER_MOMENT = "timer:moment"


#: Keys whose write decides whether the result of work handed to a pool thread now is
#: still wanted (an ``or_`` racer's: the racing task may cancel it, and the result is
#: dropped). The job's end reads them, so a search orders it against that decision: the
#: loser's result arriving first lets it end before it would be cancelled.
RESULT_WANTED_BY: contextvars.ContextVar[
    tuple[tuple[object, tuple[str, ...], tuple[str, ...]], ...]
] = contextvars.ContextVar("pytest_flows_result_wanted_by", default=())


def record_access(key: str, *, write: bool, where: str = "", method: str = "") -> None:
    """Tell the schedule being explored that the running thread read or wrote ``key``
    (a state field, a sync object): the race detector and the reduction use it."""
    me = current()
    if me is not None and me.sched.chooser is not None and me.sched._aborted is None:
        me.sched.chooser.access(
            me.seq,
            key,
            write=write,
            where=where,
            method=method,
            task=running_task(me),
            loop=bool(me.loops),
        )


def track_container(key: str, value: Any, snapshot: Callable[[Any], Any], where: str = "") -> bool:
    """Tell the schedule being explored that the running thread read ``key``, a container
    it may mutate later (through an alias, after a sleep): a change of ``snapshot(value)``
    is recorded as a write when it happens (see schedule_aliases.py). False where that
    cannot be told (an event loop's thread runs many tasks without giving up its turn,
    so a change could not be placed among theirs): the caller counts the read as a write."""
    me = current()
    if me is None or me.sched.chooser is None or me.sched._aborted is not None:
        return True  # nothing is recorded
    if me.loops:
        return False
    me.sched.chooser.track(me.seq, key, value, snapshot, where=where)
    return True


def note_clock_read(deadline: float | None = None) -> None:
    """Tell the schedule being explored that the running thread read the virtual clock
    (its step is then not the same step after the clock moved: see schedule_sleep.py),
    to set a timer for ``deadline`` if given (the clock's move there comes after it)."""
    me = current()
    if me is not None:
        clock_read_by(me, deadline)


def clock_read_by(me: Participant, deadline: float | None = None) -> None:
    """:func:`note_clock_read` for ``me``, the running thread's participant, already
    looked up (a clock read tells this and the spin count: one lookup for both)."""
    if me.sched.chooser is not None and me.sched._aborted is None:
        me.sched.chooser.read_clock(
            me.seq,
            task=running_task(me),
            loop=bool(me.loops),
            now=me.sched.clock.monotonic(),
            deadline=deadline,
        )


def recording() -> bool:
    """Whether the running thread's accesses are recorded (a schedule is being followed)."""
    me = current()
    return me is not None and me.sched.chooser is not None and me.sched._aborted is None


def note_caveat(text: str) -> None:
    """Tell the schedule being explored that this run did something the reduction does
    not model (the exploration then says it is not complete, and why)."""
    me = current()
    if me is not None and me.sched.chooser is not None and me.sched._aborted is None:
        me.sched.chooser.caveats.add(text)


def running_task(p: Participant) -> object | None:
    """The asyncio task ``p``'s innermost loop is running now (None: a plain callback,
    or ``p`` runs no loop)."""
    return asyncio.current_task(p.loops[-1]) if p.loops else None


class Participant:
    """One managed thread: parked on ``_wake`` whenever it does not hold the baton."""

    __slots__ = (
        "_wake",
        "begun",
        "cut",
        "deadline",
        "deferred",
        "done",
        "epoch",
        "error",
        "generation",
        "ident",
        "idle",
        "job",
        "loops",
        "name",
        "native",
        "note",
        "outside",
        "priority",
        "ready_when",
        "sched",
        "seq",
        "what",
    )

    def __init__(self, sched: ThreadScheduler, name: str, seq: int) -> None:
        self.sched = sched
        self.name = name
        self.seq = seq
        self.ident: int | None = None
        self.native: int | None = None  # the OS thread id (its state in /proc)
        #: Blocked outside the scheduler (an unmanaged lock, a socket, a C call) for longer
        #: than the scheduler's bound: the others run meanwhile, and this thread waits
        #: for the baton at its next switch point (see ThreadScheduler's liveness guard).
        self.outside = False
        self.note = ""  # what it blocked on, for the warning it gives when it comes back
        self._wake = _real_lock()
        self._wake.acquire()  # parked until someone hands it the baton
        self.begun = _real_lock()
        self.begun.acquire()
        self.ready_when: Callable[[], bool] | None = None  # None: runnable
        self.deadline: float | None = None
        self.what = ""
        self.done = False
        self.error: BaseException | None = None
        #: Its run was aborted (a deadlock, a schedule that does not fit): it unwinds.
        self.cut = False
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.job: Callable[[], None] | None = None  # a pool thread's next work item
        self.generation = 0  # the scheduler's generation when this thread joined
        self.priority = 0.0  # seeds other than 0: who runs first among ready threads
        self.idle = False
        self.epoch = 0
        #: Under a schedule: the loop chose to go on while this thread was ready, so
        #: the loop's next turns do not offer it again until it blocks (see _choose).
        self.deferred = False

    @property
    def let_go(self) -> bool:
        """Whether the scheduler let go of this thread (its test ended): an ordinary thread."""
        return self.generation != self.sched.generation

    @property
    def is_loop(self) -> bool:
        return bool(self.loops)

    def ready(self, now: float) -> bool:
        if self.done or self.outside:
            return False
        if self.ready_when is None:
            return True
        if self.deadline is not None and now >= self.deadline:
            return True
        try:
            return self.ready_when()
        except Exception:  # a predicate over torn-down state: let its owner look
            return True

    def __repr__(self) -> str:
        return f"<participant {self.name} #{self.seq}>"


# The unpatched Thread machinery: the scheduler's own threads never go through
# the seams (they are participants from their first instruction).
class _RealThread(threading.Thread):
    pass


_real_thread_start = threading.Thread.start
