"""The thread scheduler: real OS threads, one running at a time, switching at known points.

Every thread a flow's work runs on (the event loop's thread, each ``to_thread``
worker, each thread a managed thread starts) is a *participant*. Exactly one
participant holds the baton and runs; the others are parked on a private lock.
Control passes only at *switch points*: blocking on a ``threading`` primitive,
``queue``, ``Future.result``, ``time.sleep``, thread start and join, the loop's
iterations and flow-state access. At each one the seed picks who runs next;
seed 0 does what a free pool usually does with short work (handed-off work
starts at once and runs until it blocks or finishes).

Time is virtual: a participant that sleeps or waits with a timeout gets a
deadline on the test's clock, and when nobody can run the clock jumps to the
earliest deadline. When nobody can run and no deadline is pending, the run is
deadlocked: :class:`~pytest_flows._internal.errors.FlowsDeadlockError` names every
blocked thread with its stack, instead of hanging.

The module is framework-neutral; the stdlib patches that route primitives here
live in :mod:`pytest_flows._internal.runtime.stdlib_seams`.
"""

from __future__ import annotations

import _thread
import contextlib
import math
import random
import sys
import threading
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_flows._internal.errors import FlowsDeadlockError, FlowsUsageError, FlowsWarning
from pytest_flows._internal.runtime import liveness, real_work
from pytest_flows._internal.runtime import lock_factory as _lock_factory
from pytest_flows._internal.runtime.deadlock_report import deadlock_report
from pytest_flows._internal.runtime.participants import (
    FlowsAborted,
    Participant,
    _by_thread,
    _get_ident,
    _real_sleep,
    _real_thread_start,
    _RealThread,
    _stack,
    current,
    real_monotonic,
    record_access,
    running_task,
)

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.loop import VirtualClock
    from pytest_flows._internal.runtime.schedule import Chooser

__all__ = ["ThreadScheduler"]

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


class ThreadScheduler:
    """Serializes the participants of one test and keeps them on one virtual clock."""

    def __init__(self, clock: VirtualClock, seed: int, stream: str) -> None:
        self.clock = clock
        self.seed = seed
        self._rng = random.Random(f"pytest-flows-threads:{seed}:{stream}")
        # Re-entrant: a lock released by a __del__ the garbage collector runs while this
        # thread holds it (making a participant) pokes the scheduler (see poke).
        self._mutex = _thread.RLock()
        self._parts: list[Participant] = []
        self._holder: Participant | None = None
        self._next_seq = 0
        self._aborted: BaseException | None = None
        self.detached = False
        #: Bumped by each :meth:`detach`: threads of an earlier generation were let go.
        self.generation = 0
        self._idle: list[Participant] = []
        self._next_worker = 1
        #: How many times the baton changed hands (for the benchmark).
        self.switches = 0
        #: While exploring or replaying a schedule: makes every choice (see
        #: :mod:`pytest_flows._internal.runtime.schedule`); ``seed`` is then nonzero so every switch
        #: point is one.
        self.chooser: Chooser | None = None
        #: Bumped for each run under a schedule (see :meth:`submit`).
        self.epoch = 0
        self._first_lock = 0  # see new_epoch
        #: Real seconds the thread holding the baton may block outside the scheduler
        #: before the others run meanwhile (see :mod:`pytest_flows._internal.runtime.liveness`).
        self.block_grace = liveness.DEFAULT_BLOCK_GRACE
        self._warned: set[str] = set()
        #: Holds of virtual time for real work outside, and spin counting (real_work.py).
        self.real_work = real_work.RealWork()
        self._interrupt: BaseException | None = None  # see _interrupted
        liveness.watch(self)

    # -- joining and leaving ---------------------------------------------------------
    def _new(self, name: str) -> Participant:
        self._next_seq += 1
        p = Participant(self, name, self._next_seq)
        p.generation = self.generation
        p.epoch = self.epoch
        p.priority = self._rng.random()
        return p

    def enter(self, name: str) -> Participant:
        """Make the calling thread a participant; returns once it holds the baton."""
        with self._mutex:
            if not self._parts:
                self._aborted = None
            p = self._new(name)
            self._bind(p)
            self._parts.append(p)
            if self._holder is None:
                self._holder = p
                return p
        self._park(p)
        return p

    def _bind(self, p: Participant) -> None:
        p.ident = _get_ident()
        p.native = threading.get_native_id()
        _stack().append(p)

    def leave(self, p: Participant) -> None:
        """The calling participant is done: hand the baton on and forget this thread."""
        if p.outside:
            # its run may have been aborted while it was outside: it is leaving anyway
            with contextlib.suppress(FlowsAborted):
                self._reenter(p)
        stack = _stack()
        if p in stack:
            stack.remove(p)
        if not stack:
            _by_thread.pop(_get_ident(), None)
        with self._mutex:
            p.done = True
            if p in self._parts:
                self._parts.remove(p)
            holding = self._holder is p
        if not holding:
            return
        # ``p`` keeps the baton while it picks the next thread: were it free meanwhile,
        # a thread outside the flow releasing a lock would hand it out a second time.
        try:
            nxt = self._next_or_idle(None) if self._aborted is None else None
        except BaseException:
            # The baton must not stay with a thread that is gone (everyone would wait
            # for it for ever): the error goes on to this thread's caller.
            with self._mutex:
                if self._holder is p:
                    self._holder = None
            raise
        if nxt is not None:
            self._hand(nxt)
            return
        with self._mutex:
            if self._holder is p:
                self._holder = None
        if self._aborted is None:
            self.poke()  # something may have become ready while the baton was held

    def submit(self, body: Callable[[], None]) -> None:
        """Run ``body`` on a pool thread, as an executor would: an idle worker of this
        test's pool if there is one (threads are reused, as in a real pool), else a new
        one. The seed decides whether it runs at once."""
        me = current()
        if me is not None and me.outside:
            self._reenter(me)
        with self._mutex:
            # Under a schedule, a run reuses only its own workers: every run of an
            # exploration then starts alike and the schedule replays.
            idle = [p for p in self._idle if p.epoch == self.epoch]
            worker = idle[-1] if idle else None
            if worker is not None:
                self._idle.remove(worker)
        if worker is None:
            worker = self._new(f"pytest-flows-worker-{self._next_worker}")
            self._next_worker += 1
            worker.job = body
            thread = _RealThread(target=self._work, args=(worker,), name=worker.name, daemon=True)
            with self._mutex:
                self._parts.append(worker)
            self.start(thread, worker)
            return
        worker.job = body
        worker.priority = self._rng.random()  # new work, a new draw
        worker.deferred = False
        if me is not None:
            self._spawned(me, worker)
            self.switch(me, handoff=worker)

    def new_epoch(self) -> None:
        """A run under a schedule starts: it reuses only workers it starts itself (see
        :meth:`submit`), so the idle workers of earlier runs are let go now. Kept, they
        would pile up parked (three a schedule for three listeners) and every switch,
        which looks at each participant, would slow down as an exploration goes on."""
        # the next lock built is this run's sync:1 (stdlib_seams.SchedLock)
        self._first_lock = next(_lock_factory.numbers)
        with self._mutex:
            self.epoch += 1
            retired = [p for p in self._idle if p.epoch != self.epoch]
            for p in retired:
                self._idle.remove(p)
                if p in self._parts:
                    self._parts.remove(p)
                p.generation = -1  # let go: it wakes, sees no job and ends
        for p in retired:
            _wake(p)

    def _spawned(self, parent: Participant, child: Participant) -> None:
        if self.chooser is not None and self._aborted is None:
            self.chooser.spawned(
                parent.seq, child.seq, task=running_task(parent), loop=parent.is_loop
            )

    def task_created(self, loop: Participant, child: object) -> None:
        """The task ``loop`` runs now created asyncio task ``child`` (see Step.task)."""
        if self.chooser is not None and self._aborted is None:
            self.chooser.task_created(loop.seq, running_task(loop), child)

    def task_done(self, loop: Participant, task: object, waiters: list[object]) -> None:
        """Asyncio ``task`` on ``loop`` ended; ``waiters`` were awaiting it."""
        if self.chooser is not None and self._aborted is None:
            self.chooser.task_done(loop.seq, task, waiters)

    def timer_fired(self, loop: Participant, task: object) -> None:
        """A timer ``task`` set (``asyncio.sleep``) fires now, on ``loop``'s own turn."""
        if self.chooser is not None and self._aborted is None:
            self.chooser.timer_fired(loop.seq, task)

    def woke(self, loop: Participant, task: object) -> None:
        """The calling pool thread's job ends, and its result wakes ``task`` on ``loop``."""
        me = current()
        if me is not None and self.chooser is not None and self._aborted is None:
            self.chooser.woke(me.seq, loop.seq, task)

    def _work(self, me: Participant) -> None:
        try:
            self.begin(me)  # the run may be aborted before this thread's first turn
            while not me.let_go:
                job, me.job = me.job, None
                if job is not None:
                    if self.chooser is not None and self._aborted is None:
                        self.chooser.job_started(me.seq)
                    job()
                with self._mutex:
                    self._idle.append(me)
                me.idle = True
                try:
                    self.block(me, lambda: me.job is not None, None, "an idle pool thread")
                finally:
                    me.idle = False
                if me.job is None:  # let go when the test ended
                    return
        except FlowsAborted:
            pass
        finally:
            with self._mutex:
                if me in self._idle:
                    self._idle.remove(me)
            self.leave(me)

    def adopt(self, name: str) -> Participant:
        """A participant for a thread about to be started by a managed thread; the new
        thread calls :meth:`begin` first thing in its ``run``."""
        p = self._new(name)
        with self._mutex:
            self._parts.append(p)
        return p

    def start(self, thread: threading.Thread, child: Participant) -> None:
        """Start ``thread`` (its run calls :meth:`begin` for ``child``) from the calling thread."""
        me = current()
        if me is not None and me.outside:
            self._reenter(me)
        # Thread.start() waits for the new thread's bootstrap, which runs before any
        # managed code: both sides of that wait are real, so nothing can switch.
        ident = _get_ident()
        stack = _by_thread.pop(ident, [])
        try:
            _real_thread_start(thread)
            child.begun.acquire()  # released once the child is parked, ready to be scheduled
        finally:
            _by_thread[ident] = stack
        if me is not None:
            self._spawned(me, child)
            self.switch(me, handoff=child)

    def begin(self, p: Participant) -> None:
        self._bind(p)
        p.begun.release()
        self._park(p)

    # -- switching ---------------------------------------------------------------------
    def switch(self, me: Participant, *, handoff: Participant | None = None, why: str = "") -> None:
        """A switch point where ``me`` could go on: the seed picks who runs now."""
        if me.outside:
            self._reenter(me)
        if self._aborted is not None:
            self._check_abort(me)
            return
        nxt = self._choose(me, handoff=handoff, yielding=why == "yield")
        if nxt is not me:
            self._transfer(me, nxt)
        if why == "lock" and self.chooser is not None:
            # The acquire that follows touches this lock (the seam's ``self``): only
            # threads using the same lock are ordered by it.
            lock = sys._getframe(1).f_locals.get("self")
            # Two asyncio tasks of one loop are not ordered by a lock (it is free
            # whenever the loop switches tasks, or the loop would deadlock): on the loop,
            # taking it is a read, ordered only against threads taking it.
            number = getattr(lock, "number", None)
            name = f"{number - self._first_lock}" if number is not None else f"{id(lock):x}"
            record_access(f"sync:{name}", write=not me.is_loop)

    def block(
        self,
        me: Participant,
        ready_when: Callable[[], bool],
        deadline: float | None,
        what: str,
        *,
        fixed: bool = False,
    ) -> bool:
        """Park ``me`` until ``ready_when()`` or the virtual ``deadline``; True if ready.

        A ``fixed`` deadline was set before (the loop's next timer): computing it read
        no clock, so ``me`` running later would wait for the same moment."""
        if me.outside:
            self._reenter(me)
        if deadline is not None and self.chooser is not None:
            # a deadline is the clock's reading plus a wait
            setter = self.chooser.read_clock(
                me.seq,
                task=running_task(me),
                loop=me.is_loop,
                now=self.clock.monotonic(),
                deadline=deadline,
                fixed=fixed,
            )
            try:
                return self._block(me, ready_when, deadline, what)
            finally:
                if self.chooser is not None:
                    self.chooser.waited(setter)
        return self._block(me, ready_when, deadline, what)

    def _block(
        self,
        me: Participant,
        ready_when: Callable[[], bool],
        deadline: float | None,
        what: str,
    ) -> bool:
        while True:
            if ready_when():
                return True
            if deadline is not None and self.clock.monotonic() >= deadline:
                return False
            if me.let_go:
                return False  # the caller sees current() is None and waits for real
            if self._aborted is not None:
                self._check_abort(me)
                return True  # aborted loops run on as plain loops
            me.ready_when, me.deadline, me.what = ready_when, deadline, what
            me.deferred = False
            try:
                nxt = self._next_or_idle(me)
            finally:
                me.ready_when, me.deadline = None, None
            if nxt is me:
                continue
            if nxt is None:
                # Nobody can run and nothing in the flow will change that: free the
                # baton and wait for a thread outside the flow to poke us.
                if self._aborted is not None:
                    self._check_abort(me)
                    return True
                me.ready_when, me.deadline = ready_when, deadline
                with self._mutex:
                    self._holder = None
                try:
                    self._park(me)
                finally:
                    me.ready_when, me.deadline = None, None
                continue
            # ``me`` stays blocked while parked: others test its predicate.
            me.ready_when, me.deadline = ready_when, deadline
            try:
                self._transfer(me, nxt)
            finally:
                me.ready_when, me.deadline = None, None

    def sleep(self, me: Participant, seconds: float) -> None:
        if seconds <= 0:
            self.switch(me, why="yield")
            return
        self.block(me, _never, self.clock.after(seconds), f"time.sleep({seconds:g})")

    # -- the choice ----------------------------------------------------------------------
    def _ready(self, exclude: Participant | None = None) -> list[Participant]:
        now = self.clock.monotonic()
        return [p for p in list(self._parts) if p is not exclude and p.ready(now)]

    def _choose(
        self, me: Participant, *, handoff: Participant | None, yielding: bool
    ) -> Participant:
        others = self._ready(exclude=me)
        if not others:
            return me
        if self.chooser is not None and not self.chooser.passive:
            if me.is_loop and handoff is None:
                return self._loop_turn(me, others)
            default = self._seed_zero_choice(me, others, handoff=handoff, yielding=yielding)
            return self._chosen(default, [me, *others], me) or me
        if self.seed == 0:
            return self._seed_zero_choice(me, others, handoff=handoff, yielding=yielding)
        return self._pick([me, *others])

    def _loop_turn(self, me: Participant, others: list[Participant]) -> Participant:
        """The loop's turn under a schedule: a ready worker, or the loop goes on.

        A seed keeps the loop running past a ready worker when the loop's priority is
        the higher, and then at every turn until the worker blocks: so going on is one
        choice, and the workers it passed over are not offered again meanwhile.
        """
        offered = [p for p in others if not p.deferred]
        if not offered:
            return me
        default = self._seed_zero_choice(me, offered, handoff=None, yielding=False)
        chosen = self._chosen(default, [me, *offered], me) or me
        if chosen is me:
            for p in offered:
                p.deferred = True
        return chosen

    @staticmethod
    def _seed_zero_choice(
        me: Participant,
        others: list[Participant],
        *,
        handoff: Participant | None,
        yielding: bool,
    ) -> Participant:
        if handoff is not None and handoff in others:
            return handoff
        if yielding or me.is_loop:
            # The loop's turn (and sleep(0)) lets runnable threads go first, as
            # they would have run meanwhile on a real pool.
            workers = [p for p in others if not p.is_loop] or others
            later = [p for p in workers if p.seq > me.seq]
            return (later or workers)[0]
        return me

    def _chosen(
        self, default: Participant, candidates: list[Participant], me: Participant | None
    ) -> Participant | None:
        """The schedule's choice: options are the seed-0 choice, then the others by seq.

        ``me`` is the thread choosing (None: one that left). A schedule that does not fit
        the run ends the run (see :meth:`_abort`): None then, or ``me`` to run on.
        """
        assert self.chooser is not None
        rest = sorted((p for p in candidates if p is not default), key=lambda p: p.seq)
        options = [default, *rest]
        seqs = [p.seq for p in options]
        now = self.clock.monotonic()
        due = self._next_deadline(after=now)
        woken: tuple[int, ...] = ()
        if due is not None and _soon(due, now):
            # As with seeds: every ready thread may be held back while the clock runs
            # to a deadline that is near (seq 0 stands for "the clock").
            seqs.append(0)
            woken = tuple(
                p.seq
                for p in self._parts
                if p.deadline is not None and not p.done and now < p.deadline <= due
            )
        if len(seqs) == 1:
            return default
        self.chooser.loops.update(p.seq for p in options if p.is_loop)
        self.chooser.now = now  # the sleep sets wake every thread when the clock moves
        try:
            index = self.chooser.pick("thread", tuple(seqs), woken)
        except FlowsUsageError as error:
            # Raised into the flow's code it would be the flow's error (or be caught by
            # it); the run ends instead, and the run's caller gets it (schedule_runs.py).
            self._abort(error, me)
            return me
        if index == len(options):
            assert due is not None
            self.clock.advance_to(due)
            self.chooser.clock_moved(due, reaching=due + SAME_MOMENT)
            ready = [p for p in self._ready() if p in candidates or p.ready(due)]
            return self._chosen(default if default in ready else ready[0], ready, me)
        return options[index]

    def _pick(self, candidates: list[Participant]) -> Participant:
        """The seeded choice (seeds other than 0): the ready thread of highest priority.

        Each thread draws a random priority for each piece of work it takes on, as in
        probabilistic concurrency testing (PCT): whichever of several ready threads an
        OS would have run first is equally likely to be any of them. A thread may also
        be held back a little while the clock runs on (an OS deschedules a thread for a
        while, never for long).
        """
        due = self._next_deadline(after=self.clock.monotonic())
        soon = due is not None and _soon(due, self.clock.monotonic())
        if soon and self._rng.random() < 1 / (len(candidates) + 1):
            assert due is not None
            self.clock.advance_to(due)
            candidates = self._ready() or candidates
        return max(candidates, key=lambda p: (p.priority, -p.seq))

    def _next_deadline(self, after: float | None = None) -> float | None:
        """The next moment a deadline is due (later than ``after``: a thread held back while
        the clock runs on skips those already reached, whose threads are ready): the
        latest of the deadlines within :data:`SAME_MOMENT` of the earliest, so the clock
        moving there wakes them all at once."""
        deadlines = [
            p.deadline
            for p in self._parts
            if p.deadline is not None and not p.done and (after is None or p.deadline > after)
        ]
        due = min(deadlines) if deadlines else None
        if due is not None:
            due = max(d for d in deadlines if d <= due + SAME_MOMENT)
        # A wait for ever (asyncio.sleep(math.inf)) is never due: time does not jump there.
        return due if due is not None and math.isfinite(due) else None

    def _next_or_idle(self, me: Participant | None) -> Participant | None:
        """The next participant to run after ``me`` blocked (or left), resolving idleness:
        move the clock, wait for the world outside the flow, or report a deadlock."""
        waited = 0.0
        pause = 0.00005
        held = 0.0  # real seconds virtual time waited for real work outside (real_work.py)
        while True:
            ready = self._ready()
            if ready:
                real_work.held_until_ready(self, held)
                if self.chooser is not None and not self.chooser.passive:
                    workers = [p for p in ready if not p.is_loop]
                    return self._chosen((workers or ready)[0], ready, me)
                if self.seed == 0:
                    workers = [p for p in ready if not p.is_loop]
                    return (workers or ready)[0]
                return self._pick(ready)
            due = self._next_deadline()
            if due is not None and not self._watches_sockets():
                holding = real_work.hold(self, due, held)
                if holding is not None:
                    held = holding
                    continue
                held = 0.0
                self.clock.advance_to(due)
                if self.chooser is not None and not self.chooser.passive:
                    self.chooser.clock_moved(due, reaching=due + SAME_MOMENT)
                continue
            if not any(p.is_loop for p in self._parts):
                # Only threads are left and all are blocked: something outside the flow
                # (a test thread, interpreter shutdown) may still release them.
                return None
            limit = REAL_IO_PATIENCE if self._watches_sockets() else self.outside_patience()
            if waited >= limit and (
                waited >= limit + self.block_grace or real_work.in_flight(self.block_grace) is None
            ):
                # A deadlock only when nothing outside the scheduler (a thread sleeping
                # or running, a child process) can still wake a waiter (real_work.py).
                return self._deadlock(me)
            # Something outside the flow (a socket, a thread of the test) may still
            # wake a participant: give it real time, and let the clock follow by as
            # much real time as passed (a loaded machine oversleeps).
            started = real_monotonic()
            _real_sleep(pause)
            slept = real_monotonic() - started
            waited += slept
            if due is not None:
                self.clock.advance_to(min(due, self.clock.monotonic() + slept))
            pause = min(pause * 2, 0.002)

    # -- the liveness guard (see pytest_flows._internal.runtime.liveness) ---------------------
    @property
    def holder(self) -> Participant | None:
        """The participant holding the baton (None: nobody runs)."""
        return self._holder

    def has_ready(self, me: Participant) -> bool:
        """Whether a participant other than ``me`` could run now."""
        return bool(self._ready(exclude=me))

    def spent_quantum(self, me: Participant) -> None:
        """``me`` spun through a preemption bound (real_work.py): under a seed its
        priority drops below every other ready thread's, or a spinner drawn highest
        would win every yield and starve the thread it polls for."""
        if self.seed == 0:
            return
        others = self._ready(exclude=me)
        if others:
            me.priority = min(p.priority for p in others) * self._rng.random()

    def next_deadline(self) -> float | None:
        """The next moment a pending deadline is due (None: none is)."""
        return self._next_deadline()

    def spinning(self, me: Participant, method: str, limit: float) -> None:
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
        self._abort(FlowsDeadlockError(text + deadlock_report(self.clock.monotonic(), [])), me)

    def has_outside(self) -> bool:
        """Whether a participant is blocked outside the scheduler."""
        return any(p.outside for p in self._parts)

    def outside_patience(self) -> float:
        """Real seconds to wait, with nothing else able to run, before calling the run
        deadlocked: a socket may take a while to answer, nothing else should."""
        if any(p.outside and p.what.startswith("a socket") for p in self._parts):
            return REAL_IO_PATIENCE
        return DEADLOCK_GRACE

    def blocked_outside(
        self, p: Participant, frame: object, lasti: int, what: str, in_socket: bool
    ) -> None:
        """The watchdog saw ``p``, holding the baton, blocked outside the scheduler for
        longer than :attr:`block_grace`: a switch point. The others run meanwhile, and
        ``p`` waits for the baton again at its next switch point."""
        with self._mutex:
            if self._holder is not p or p.outside or self._aborted is not None or self.detached:
                return
            now = sys._current_frames().get(p.ident) if p.ident is not None else None
            if now is not frame or getattr(now, "f_lasti", None) != lasti:
                return  # it moved on meanwhile
            p.outside = True
            p.what = f"{what} (blocked outside the scheduler)"
            self._holder = None
            if what not in self._warned:
                self._warned.add(what)
                p.note = what
        if self.chooser is not None:
            self.chooser.caveats.add(
                "a thread blocked outside the scheduler (an unmanaged lock, a socket): "
                "the order around it is the OS's"
            )
        self._resume_others()

    def _resume_others(self) -> None:
        """Hand the free baton to whoever can run (the clock jumps to a due deadline if
        nobody can); else the outside thread takes it when it comes back."""
        with self._mutex:
            if self._holder is not None or self._aborted is not None or self.detached:
                return
            ready = self._ready()
            if not ready:
                due = self._next_deadline()
                if due is not None:
                    self.clock.advance_to(due)
                    ready = self._ready()
            if not ready:
                return
            if self.seed == 0 or self.chooser is not None:
                workers = [p for p in ready if not p.is_loop]
                nxt = (workers or ready)[0]
            else:
                nxt = self._pick(ready)
            self._holder = nxt
            self.switches += 1
        self._note_holder(nxt)
        nxt._wake.release()

    def _reenter(self, me: Participant) -> None:
        """``me`` came back from a block outside the scheduler: it waits for the baton."""
        with self._mutex:
            me.outside = False
            me.what = ""
            me.ready_when, me.deadline = None, None
            take = self._holder is None and self._aborted is None
            if take:
                self._holder = me
                self._note_holder(me)
        note, me.note = me.note, ""
        if not take:
            self._park(me)
        if note:
            warnings.warn(
                FlowsWarning(
                    f"a flow thread blocked outside the scheduler for over {self.block_grace:g} "
                    f"real seconds on {note}; the other threads ran meanwhile, so the order "
                    "around it is only as deterministic as that primitive. Build locks, "
                    "conditions and events during the test (they are then managed), or "
                    "raise the grace with @pytest.mark.flows(block_grace=...)."
                ),
                stacklevel=4,
            )

    def outside_deadlock(self) -> None:
        """Nothing has run for the patience while a thread is blocked outside the
        scheduler and nobody else can move: report every thread, never wait for ever."""
        with self._mutex:
            if self._holder is not None or self._aborted is not None or self.detached:
                return
            if self._ready() or not any(p.is_loop for p in self._parts):
                return
        self._deadlock(None)

    def _watches_sockets(self) -> bool:
        for p in self._parts:
            for loop in p.loops:
                selector = getattr(loop, "_selector", None)
                if selector is not None and len(selector.get_map()) > 1:
                    return True
        return False

    # -- baton passing -----------------------------------------------------------------
    def _transfer(self, me: Participant, nxt: Participant) -> None:
        if self._hand(nxt):
            self._park(me)
        # else the test ended meanwhile: ``me`` runs on as an ordinary thread

    def _hand(self, nxt: Participant) -> bool:
        """Give ``nxt`` the baton; False if the test ended (``detach``) since ``nxt`` was
        chosen: detach has woken every parked thread already, ``nxt`` included."""
        with self._mutex:
            if nxt.let_go:
                return False
            self._holder = nxt
            self.switches += 1
        self._note_holder(nxt)
        nxt._wake.release()
        return True

    def _note_holder(self, p: Participant) -> None:
        """``p`` runs next: a schedule's sleep sets must know (it is no longer asleep)."""
        if self.chooser is not None:
            self.chooser.ran(p.seq)

    def _park(self, me: Participant) -> None:
        try:
            me._wake.acquire()
        except BaseException as error:
            # A signal handler raised while this thread was parked (an alarm, Ctrl-C on
            # the main thread): the run ends here with every thread's stack. Parking
            # again would leave the run as stuck as it was.
            self._interrupted(me, error)
            raise
        if not me.let_go:
            self._check_abort(me)

    def _interrupted(self, me: Participant, error: BaseException) -> None:
        if self._aborted is not None or self.detached:
            return
        report = deadlock_report(self.clock.monotonic(), list(self._parts)).split("\n", 2)[-1]
        error.add_note(
            f"pytest-flows: {type(error).__name__} arrived while {me.name!r} waited for its "
            f"turn; the run ends. Its threads:\n{report}"
        )
        with self._mutex:
            self._aborted = error
            parked = [p for p in self._parts if p is not me]
            for p in self._parts:
                p.cut = True
            self._parts.clear()
            self._idle.clear()
            self._holder = None
        if me.is_loop and running_task(me) is not None:
            # Raised inside a task step, the task may take it as its own result: the
            # loop's next turn raises it again, outside any task, and the run ends.
            me.cut, me.error = True, error
            self._interrupt = error
        for p in parked:
            _wake(p)

    def poke(self) -> None:
        """Something outside the flow released a primitive: if nobody holds the baton,
        give it to whoever can run now."""
        with self._mutex:
            if self._holder is not None or self._aborted is not None:
                return
            ready = self._ready()
            if not ready:
                return
            nxt = ready[0]
            self._holder = nxt
        self._note_holder(nxt)
        nxt._wake.release()

    def fresh_run(self) -> None:
        """A new run starts on a fresh loop: an earlier run's abort (whose threads the
        scheduler already let go) no longer makes loops plain."""
        with self._mutex:
            if self._aborted is not None and not self._parts:
                self._aborted = None

    def attach(self) -> None:
        """A test (or a run outside one) starts using this scheduler (again); threads let
        go by an earlier :meth:`detach` stay ordinary threads."""
        with self._mutex:
            if self.detached:
                self.detached = False
                self._aborted = None

    def detach(self) -> None:
        """The test is over: every participant still parked runs on as an ordinary thread."""
        with self._mutex:
            self.detached = True
            self.generation += 1
            parked = [p for p in self._parts if p is not self._holder]
            self._parts.clear()
            self._idle.clear()
            self._holder = None
        for p in parked:
            _wake(p)

    @property
    def aborted(self) -> bool:
        """Whether a run of this test deadlocked (its loops then run as plain loops)."""
        return self._aborted is not None

    @property
    def idle(self) -> bool:
        return self._holder is None and bool(self._parts)

    # -- deadlock ------------------------------------------------------------------------
    def _check_abort(self, me: Participant) -> None:
        if not me.cut:
            return
        if me.error is not None:
            if me.error is self._interrupt and running_task(me) is not None:
                return  # raised again only between task steps (see _interrupted)
            error, me.error = me.error, None
            raise error
        if not me.is_loop:
            raise FlowsAborted()

    def _deadlock(self, me: Participant | None) -> Participant | None:
        self._abort(FlowsDeadlockError(deadlock_report(self.clock.monotonic(), self._parts)), me)
        return None

    def _abort(self, error: BaseException, me: Participant | None) -> None:
        """End the run with ``error``: every parked thread is woken, the run's root loop
        raises it, the other threads unwind (FlowsAborted) and the loops run on as plain
        loops. ``me`` is the calling thread (None: one that left)."""
        self._aborted = error
        with self._mutex:
            self._holder = None
            parked = [p for p in self._parts if p is not me]
            loops = [p for p in self._parts if p.is_loop]
            # Every thread of the run unwinds, however long it takes to get there: the
            # scheduler forgets them now, so the next run starts afresh (see enter).
            for p in self._parts:
                p.cut = True
            if me is not None:
                me.cut = True
            self._parts.clear()
            self._idle.clear()
        root = loops[0] if loops else None
        if root is not None and root is not me:
            root.error = error
        for p in parked:
            _wake(p)
        if root is None or me is root:
            raise error  # nobody else to tell: the caller's thread ends the run
        if me is not None and not me.is_loop:
            raise FlowsAborted()


def _never() -> bool:
    return False


def _wake(p: Participant) -> None:
    """Unpark ``p`` when letting every thread go (it may already be unparked)."""
    if p._wake.locked():
        p._wake.release()


def _soon(due: float, now: float) -> bool:
    """Whether a ready thread may be held back while the clock runs to ``due`` (a wait
    of exactly MAX_DESCHEDULE is within, however the clock rounded it: SAME_MOMENT)."""
    return due - now <= MAX_DESCHEDULE + SAME_MOMENT
