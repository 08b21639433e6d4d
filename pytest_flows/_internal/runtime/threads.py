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
import random
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_flows._internal.runtime import liveness, real_work, stuck_threads, thread_choice
from pytest_flows._internal.runtime import lock_factory as _lock_factory
from pytest_flows._internal.runtime.participants import (
    FlowsAborted,
    Participant,
    _by_thread,
    _get_ident,
    _real_thread_start,
    _RealThread,
    _stack,
    current,
    record_access,
    running_task,
)
from pytest_flows._internal.runtime.stuck_threads import unpark
from pytest_flows._internal.runtime.thread_choice import MAX_DESCHEDULE, SAME_MOMENT

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.loop import VirtualClock
    from pytest_flows._internal.runtime.schedule import Chooser

__all__ = ["MAX_DESCHEDULE", "SAME_MOMENT", "ThreadScheduler"]


class ThreadScheduler:
    """Serializes the participants of one test and keeps them on one virtual clock.

    Who runs at a switch point is decided in :mod:`.thread_choice`; threads blocked
    outside the scheduler, interrupts, deadlocks and aborts are handled in
    :mod:`.stuck_threads` (their functions are this class's methods)."""

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

    def redraw(self, p: Participant) -> None:
        """New work, a new draw: ``p`` (a pool worker taking a job) gets a fresh priority
        from the seeded stream, so a worker that ran one job does not outrank its idle
        siblings for the next."""
        p.priority = self._rng.random()

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
        try:
            self._park(p)
        except BaseException:
            # (a signal while parked) the caller never got ``p``, so never leaves it
            self._unbind(p)
            raise
        return p

    def _bind(self, p: Participant) -> None:
        p.ident = _get_ident()
        p.native = threading.get_native_id()
        _stack().append(p)

    @staticmethod
    def _unbind(p: Participant) -> None:
        """Forget ``p`` as the calling thread's participant. Every :meth:`_bind` is undone
        by the thread itself, whatever ends it: the OS reuses the id of a thread that
        ended for the next one it starts, and a participant left under that id would
        take the new thread for its own (see :meth:`start`)."""
        stack = _stack()
        if p in stack:
            stack.remove(p)
        if not stack:
            _by_thread.pop(_get_ident(), None)

    def leave(self, p: Participant) -> None:
        """The calling participant is done: hand the baton on and forget this thread."""
        if p.outside:
            # its run may have been aborted while it was outside: it is leaving anyway
            with contextlib.suppress(FlowsAborted):
                self._reenter(p)
        self._unbind(p)
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

    def submit(self, body: Callable[[], None], *, renew: bool = False) -> None:
        """Run ``body`` on a pool thread, as an executor would: an idle worker of this
        test's pool if there is one (threads are reused, as in a real pool), else a new
        one. The seed decides whether it runs at once.

        ``renew``: an idle worker taken for ``body`` is numbered and placed as a thread
        started now would be (a new ``seq``, last among the participants), so that the
        choices of seed 0 that follow (which look at both) are the ones a started thread
        gets: ``body`` stands for a thread the program starts (see kept_workers.py)."""
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
        if renew:
            with self._mutex:
                self._next_seq += 1
                worker.seq = self._next_seq
                if worker in self._parts:
                    self._parts.remove(worker)
                    self._parts.append(worker)
        self.redraw(worker)
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
            unpark(p)

    def _spawned(self, parent: Participant, child: Participant) -> None:
        if self.chooser is not None and self._aborted is None:
            self.chooser.spawned(
                parent.seq, child.seq, task=running_task(parent), loop=bool(parent.loops)
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

    def requeued(self, loop: Participant, task: object) -> Callable[[], None] | None:
        """Asyncio ``task``, running on ``loop``, put itself back in the loop's queue; what
        to call as it resumes (see Chooser.task_requeued)."""
        if self.chooser is not None and self._aborted is None:
            return self.chooser.task_requeued(loop.seq, task)
        return None

    def woke(self, loop: Participant, task: object) -> None:
        """The calling pool thread's job ends, and its result wakes ``task`` on ``loop``."""
        if self.chooser is None or self._aborted is not None:
            return  # (a plain run: no need to look the thread up)
        me = current()
        if me is not None:
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
        _lock_factory.starting.add(ident)
        try:
            try:
                _real_thread_start(thread)
            except BaseException:
                # (the OS refused a thread) ``child`` never runs: were it left among
                # the participants, the baton could be handed to it and never come back
                with self._mutex:
                    child.done = True
                    if child in self._parts:
                        self._parts.remove(child)
                raise
            child.begun.acquire()  # released once the child is parked, ready to be scheduled
        finally:
            _lock_factory.starting.discard(ident)
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
            if number is None:
                name = f"{id(lock):x}"
            elif number >= self._first_lock:
                name = f"{number - self._first_lock}"  # built in this run, as in every run
            else:
                # Built in an earlier run (a lock kept between runs): one name in every
                # run after, where counted from the run's start it changed each run.
                name = f"g{number}"
            record_access(f"sync:{name}", write=not me.loops)

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
                loop=bool(me.loops),
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

    # -- the choice (thread_choice.py) --------------------------------------------------
    _ready = thread_choice.ready
    _choose = thread_choice.choose
    _loop_turn = thread_choice.loop_turn
    _seed_zero_choice = staticmethod(thread_choice.seed_zero_choice)
    _chosen = thread_choice.chosen
    _pick = thread_choice.pick
    _next_deadline = thread_choice.next_deadline
    _next_or_idle = thread_choice.next_or_idle

    # -- the liveness guard's side, interrupts, deadlocks (stuck_threads.py) -------------
    @property
    def holder(self) -> Participant | None:
        """The participant holding the baton (None: nobody runs)."""
        return self._holder

    has_ready = stuck_threads.has_ready
    spent_quantum = stuck_threads.spent_quantum
    next_deadline = stuck_threads.next_deadline
    spinning = stuck_threads.spinning
    has_outside = stuck_threads.has_outside
    outside_patience = stuck_threads.outside_patience
    blocked_outside = stuck_threads.blocked_outside
    _resume_others = stuck_threads.resume_others
    _reenter = stuck_threads.reenter
    outside_deadlock = stuck_threads.outside_deadlock
    _watches_sockets = stuck_threads.watches_sockets
    _interrupted = stuck_threads.interrupted
    _check_abort = stuck_threads.check_abort
    _deadlock = stuck_threads.deadlock
    _abort = stuck_threads.abort

    # -- baton passing -----------------------------------------------------------------
    def _transfer(self, me: Participant, nxt: Participant) -> None:
        if self._hand(nxt):
            self._park(me)
        # else the test ended meanwhile: ``me`` runs on as an ordinary thread

    def _hand(self, nxt: Participant) -> bool:
        """Give ``nxt`` the baton; False if the test ended (``detach``) since ``nxt`` was
        chosen: detach has woken every parked thread already, ``nxt`` included."""
        with self._mutex:
            if nxt.generation != self.generation:  # let go (``let_go``, inlined: hot)
                return False
            self._holder = nxt
            self.switches += 1
        if self.chooser is not None:
            self.chooser.ran(nxt.seq)  # see _note_holder
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
        if me.cut and me.generation == self.generation:  # _check_abort, if not let go
            self._check_abort(me)

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
            unpark(p)

    @property
    def aborted(self) -> bool:
        """Whether a run of this test deadlocked (its loops then run as plain loops)."""
        return self._aborted is not None

    @property
    def idle(self) -> bool:
        return self._holder is None and bool(self._parts)


def _never() -> bool:
    return False
