"""The deterministic event loop.

Three things make a flow run reproducible without changing what its runtime
decides:

* **real threads, one at a time** - work sent to threads (``asyncio.to_thread``
  and ``run_in_executor``: sync flow methods, persistence writes) runs on real
  worker threads, as on a pool, but the :mod:`~pytest_flows._internal.runtime.threads` scheduler
  lets exactly one of {the loop, each worker} run at a time and passes control
  only at switch points;
* **seeded choice** - at each switch point the scheduler's seed picks who runs
  (seed 0: what a free pool usually does - handed-off work starts at once and
  runs until it blocks);
* **virtual time** - ``loop.time()`` and every ``time.sleep`` read one
  :class:`VirtualClock` that jumps to the next deadline as soon as nothing can run.

The loop is framework-neutral: it knows nothing of crewai or agent_framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import math
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pytest_flows._internal.durations import check_duration
from pytest_flows._internal.runtime import stdlib_seams as _stdlib_seams
from pytest_flows._internal.runtime.foreign_work import settle as settle_foreign_work
from pytest_flows._internal.runtime.participants import (
    RESULT_WANTED_BY,
    TIMER_MOMENT,
    FlowsAborted,
    Participant,
    current,
    internal_lock,
    note_clock_read,
    real_monotonic,
    record_access,
)
from pytest_flows._internal.runtime.schedule import Chooser
from pytest_flows._internal.runtime.threads import SAME_MOMENT, ThreadScheduler
from pytest_flows._internal.runtime.timers import moment_taken, push_ordered

__all__ = [
    "DeterministicEventLoop",
    "DeterministicEventLoopPolicy",
    "Scheduler",
    "VirtualClock",
    "activate",
    "active_scheduler",
    "install_policy",
]

T = TypeVar("T")

#: Real seconds the clean-up after a run that ended in an error may sit with nothing
#: to do (no callback, no timer, no work of a pool thread coming back) before it is
#: given up, so the run's error reaches the test (see ``DeterministicEventLoop._idle_end``).
WIND_DOWN_GRACE = 1.0


class VirtualClock:
    """A monotonic clock that only moves when told to (or when a loop is idle).

    Time is kept as a whole number of nanoseconds, and every clock the code can read
    derives from it (``monotonic``/``perf_counter`` as seconds from 0, their ``_ns``
    forms, the frozen wall clock as an epoch plus it). A wait of ``d`` seconds moves
    it by ``d`` rounded up to a nanosecond, as CPython rounds a timeout, and by a little
    more (under a quarter microsecond) when the float clocks' rounding at the current
    reading would otherwise show less than ``d``: a real clock never reports less.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._ns = _ns_at(float(start))
        self._now = self._ns / 1e9
        # The harness's own lock, real even when a session is made while another's
        # scheduler runs (a FlowsSession opened inside a flows test): a scheduled lock
        # would make each clock move a switch point of that session only, and the same
        # schedule would take other turns there.
        self._lock = internal_lock()
        #: The frozen wall clock's epoch in nanoseconds (set while a test freezes it):
        #: a span must not look shorter on ``time.time()`` either.
        self.wall_epoch_ns: int | None = None

    def monotonic(self) -> float:
        """Seconds on the virtual clock."""
        return self._now

    def monotonic_ns(self) -> int:
        """Nanoseconds on the virtual clock."""
        return self._ns

    def after(self, seconds: float) -> float:
        """The reading ``seconds`` from now (a deadline): once the clock is there, every
        clock read now and then shows at least ``seconds`` between the two."""
        ns = self._ns
        if not math.isfinite(seconds):  # a wait for ever (never due), or nan as given
            return ns / 1e9 + seconds
        return (ns + _span(ns, seconds, self.wall_epoch_ns)) / 1e9

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (never backwards); returns the new time."""
        seconds = check_duration("flows.clock.advance(seconds)", seconds)
        with self._lock:
            self._set(self._ns + _span(self._ns, seconds, self.wall_epoch_ns))
            return self._now

    def advance_to(self, when: float) -> float:
        """Move the clock to ``when`` if that is later than now; returns the new time."""
        with self._lock:
            if when > self._now:
                self._set(_ns_at(when))
            return self._now

    def _set(self, ns: int) -> None:
        self._ns = ns
        self._now = ns / 1e9

    def __repr__(self) -> str:
        return f"VirtualClock(t={self._now:g})"


def _ns_at(when: float) -> int:
    """The first whole nanosecond whose reading in seconds is ``when`` or later."""
    ns = math.ceil(when * 1e9)
    while ns / 1e9 < when:
        ns += 1
    while ns > 0 and (ns - 1) / 1e9 >= when:
        ns -= 1
    return ns


def _span(ns: int, seconds: float, wall_epoch_ns: int | None) -> int:
    """Nanoseconds to move from ``ns`` so that ``seconds`` pass on every clock: the
    timeout rounded up (as CPython does), plus what float rounding would take away."""
    if seconds <= 0:
        return 0
    span = math.ceil(seconds * 1e9)
    for _ in range(8):  # each pass adds the shortfall (at least one step of the grid)
        short = seconds - ((ns + span) / 1e9 - ns / 1e9)
        step = 1
        if wall_epoch_ns is not None:
            start = wall_epoch_ns + ns
            wall_short = seconds - ((start + span) / 1e9 - start / 1e9)
            if wall_short > short:
                # time.time()'s float moves in steps of its last bit (about 0.24 us
                # today): less than a step more would read the same.
                short = wall_short
                step = math.ceil(math.ulp(start / 1e9) * 1e9)
        if short <= 0:
            break
        span += max(step, math.ceil(short * 1e9))
    return span


@dataclass
class Scheduler:
    """What every run of one test shares: the seed, its random stream and the clock."""

    seed: int = 0
    clock: VirtualClock = field(default_factory=VirtualClock)
    stream: str = ""

    def __post_init__(self) -> None:
        self._start()

    def reseed(self, seed: int) -> None:
        """Go on under ``seed``, in the same object (the adapters hold it): a fresh random
        stream and thread scheduler; the replaced one's idle pool workers are let go."""
        self.threads.new_epoch()
        self.seed = seed
        self._start()

    def _start(self) -> None:
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(
                f"flows seed must be a whole number >= 0, got {self.seed!r}; "
                "use e.g. --flows-seed=3 or @pytest.mark.flows(seed=3)."
            )
        # A str seed goes through sha512, so the stream is the same under any
        # PYTHONHASHSEED and on any machine.
        self._rng = random.Random(f"pytest-flows:{self.seed}:{self.stream}")
        self._lock = internal_lock()  # real, made anywhere (see VirtualClock)
        #: Serializes the threads of this test's runs
        #: (see :mod:`pytest_flows._internal.runtime.threads`).
        self.threads = ThreadScheduler(self.clock, self.seed, self.stream)

    def choose(self, n: int) -> int:
        """Index of the item to take from ``n`` ready ones (0 with the default seed)."""
        chooser = self.threads.chooser
        if chooser is not None and not chooser.passive and n > 1:
            return chooser.pick("order", tuple(range(n)))
        if n <= 1 or self.seed == 0:
            return 0
        with self._lock:
            return self._rng.randrange(n)

    def order(self, items: Sequence[T]) -> list[T]:
        """``items`` in the order the seed picks (unchanged with the default seed)."""
        pool = list(items)
        return [pool.pop(self.choose(len(pool))) for _ in range(len(pool))]

    @contextlib.contextmanager
    def following(self, chooser: Chooser) -> Iterator[Chooser]:
        """Make every decision of the runs in the block through ``chooser`` (a schedule
        replayed or explored) instead of the seed."""
        threads = self.threads
        previous, previous_seed = threads.chooser, threads.seed
        if chooser.passive:
            # The seed decides as without it (same workers, same draws): only recorded.
            threads.chooser = chooser
        else:
            # Nonzero: the seams then make every blocking acquire a switch point.
            threads.chooser, threads.seed = chooser, max(previous_seed, 1)
            threads.new_epoch()
        try:
            yield chooser
        finally:
            threads.chooser, threads.seed = previous, previous_seed


_active: Scheduler | None = None
_active_lock = threading.Lock()


def active_scheduler() -> Scheduler | None:
    """The scheduler of the test being run, or None outside a flows test."""
    return _active


@contextlib.contextmanager
def activate(scheduler: Scheduler) -> Iterator[Scheduler]:
    """Make ``scheduler`` drive every :class:`DeterministicEventLoop` created on the
    calling thread (or on a thread the scheduler manages) until exit."""
    global _active
    with _active_lock:
        previous, _active = _active, scheduler
    owners = _owners.setdefault(id(scheduler), [])
    if not owners:
        scheduler.threads.attach()
    owners.append(threading.get_ident())
    try:
        with _stdlib_seams.patched(scheduler.threads):
            yield scheduler
    finally:
        owners.pop()
        if not owners:
            del _owners[id(scheduler)]
            # Threads still parked (an idle pool, a thread nobody joined) go on as
            # ordinary threads: nothing will ever schedule them again.
            scheduler.threads.detach()
        with _active_lock:
            _active = previous


#: The threads that activated each scheduler: loops they create are driven by it.
_owners: dict[int, list[int]] = {}


def _driving_scheduler() -> Scheduler | None:
    """The scheduler a loop created on this thread belongs to, if any: a loop made on
    a thread the harness does not run (a framework's background loop started during
    a test) stays an ordinary loop."""
    scheduler = _active
    if scheduler is None:
        return None
    if current() is not None or threading.get_ident() in _owners.get(id(scheduler), ()):
        return scheduler
    return None


class DeterministicEventLoop(asyncio.SelectorEventLoop):
    """A selector loop that is deterministic while a :class:`Scheduler` is active.

    Outside an active scheduler it behaves exactly like ``SelectorEventLoop``,
    so a loop created for one test and reused by another stays correct.
    """

    def __init__(self) -> None:
        super().__init__()
        # Bound for life to the scheduler active at creation: a loop made
        # outside a flows test (a framework's own background loop, a
        # module-scoped pytest-asyncio loop) stays an ordinary loop.
        self._scheduler = _driving_scheduler()
        self._live_workers = 0
        self._exit_waiter: asyncio.Future[None] | None = None
        #: Set by :func:`run` once the run raised: asyncio's clean-up is under way.
        self.winding_down = False
        self.gave_up: list[asyncio.Task[Any]] = []
        self._give_up: asyncio.TimerHandle | None = None
        self._timers_set = 0  # (timers.py: timers due at one moment fire in this order)

    def _driver(self) -> Scheduler | None:
        # Asked several times a loop iteration: attributes only, no property.
        scheduler = self._scheduler
        if scheduler is None or scheduler is not _active or scheduler.threads._aborted is not None:
            return None
        return scheduler

    @property
    def deterministic(self) -> bool:
        """Whether this loop is currently driven by a flows scheduler."""
        return self._driver() is not None

    # -- time -------------------------------------------------------------
    def time(self) -> float:
        scheduler = self._driver()
        if scheduler is None:
            return real_monotonic()
        return scheduler.clock._now  # VirtualClock.monotonic(), inlined: every iteration

    def call_later(  # type: ignore[override]
        self, delay: float, callback: Any, *args: Any, context: Any = None
    ) -> asyncio.TimerHandle:
        scheduler = self._driver()
        if scheduler is None or not isinstance(delay, int | float):
            return super().call_later(delay, callback, *args, context=context)
        # asyncio.sleep(d) and friends: once the timer fires, every clock shows d passed.
        when = scheduler.clock.after(delay)
        # Timers that end at one moment (SAME_MOMENT: 0.03 + 0.07 and 0.1) fire at one
        # reading, so the order the clock's rounding gives them (which depends on the
        # reading the run started at) decides nothing: both wait for the later one.
        for handle in self._scheduled:  # type: ignore[attr-defined]
            other = handle.when()
            if not handle.cancelled() and abs(other - when) <= SAME_MOMENT and other != when:
                if other > when:
                    when = other
                else:
                    handle._when = when
                    heapq.heapify(self._scheduled)  # type: ignore[attr-defined]
        note_clock_read(when)  # the deadline is the clock's reading plus d
        if scheduler.threads.chooser is not None:
            # Timers due at one moment fire in the order they were set (timers.py): two
            # such sets race (a set finding another timer at its moment writes the key,
            # every set reads it), and the tasks they wake run in the order their turn
            # fired them (race_reversal._timer_turn).
            record_access(TIMER_MOMENT, write=moment_taken(self._scheduled, when))  # type: ignore[attr-defined]
        setter = asyncio.current_task(self) if scheduler.threads.chooser is not None else None
        if setter is not None:
            # Under a schedule: the task the timer wakes runs after the loop's turn that
            # fires it (whose order against a pool job's end is a choice the search
            # reverses); asyncio.sleep's timer wakes the task that set it.
            callback = functools.partial(self._timer_fired, setter, callback)
        self._timers_set += 1
        return push_ordered(self, when, callback, args, context, self._timers_set)

    def call_soon(  # type: ignore[override]
        self, callback: Any, *args: Any, context: Any = None
    ) -> asyncio.Handle:
        scheduler = self._scheduler
        if scheduler is not None and scheduler.threads.chooser is not None:
            task = getattr(callback, "__self__", None)
            if isinstance(task, asyncio.Task) and task is asyncio.current_task(self):
                # A task requeues itself (a bare yield: ``await asyncio.sleep(0)``): its
                # next step's place in the queue is decided by the step running now, a
                # wake like a task's creation (docs/exploration.md, "A task's step after
                # a bare yield").
                me = current()
                if me is not None and self in me.loops and scheduler is self._driver():
                    woke = scheduler.threads.requeued(me, task)
                    if woke is not None:
                        callback = functools.partial(self._resumed, woke, callback)
        return super().call_soon(callback, *args, context=context)

    def _resumed(self, woke: Callable[[], None], callback: Any, *args: Any) -> None:
        woke()
        callback(*args)

    def _timer_fired(self, setter: asyncio.Task[Any], callback: Any, *args: Any) -> None:
        scheduler = self._driver()
        me = current()
        if scheduler is not None and me is not None and self in me.loops:
            scheduler.threads.timer_fired(me, setter)
        callback(*args)

    # -- taking part in the thread scheduler ----------------------------------
    def run_forever(self) -> None:
        scheduler = self._driver()
        if scheduler is None:
            super().run_forever()
            return
        threads = scheduler.threads
        me = current()
        if me is not None and me.sched is not threads:
            me = None  # a thread of an outer test's scheduler, running an inner one's loop
        if me is None and threading.get_ident() not in _owners.get(id(scheduler), ()):
            # Made during a test but run by a thread the harness does not run (say, a
            # framework's background loop thread): an ordinary loop for life.
            self._scheduler = None
            super().run_forever()
            return
        joined = me is None
        if joined:
            me = threads.enter(f"loop:{threading.current_thread().name}")
        assert me is not None
        me.loops.append(self)
        try:
            super().run_forever()
        finally:
            me.loops.remove(self)
            if joined:
                threads.leave(me)

    def _run_once(self) -> None:
        # ``_driver()``, inlined: once an iteration
        scheduler = self._scheduler
        if scheduler is not None and (
            scheduler is not _active or scheduler.threads._aborted is not None
        ):
            scheduler = None
        me = current()
        if scheduler is not None and me is not None and self in me.loops:
            self._take_turn(scheduler.threads, me)
        elif self.winding_down:
            self._idle_end()
        super()._run_once()  # type: ignore[misc]

    def _idle_end(self) -> None:
        """The clean-up of a run that raised, on a loop no scheduler drives any more (the
        run deadlocked): ``asyncio.run`` cancels every task left and waits for them. A
        task that takes the cancellation and waits again, or a ``gather`` an interrupt
        (pytest-timeout's) broke mid-callback, would keep that wait, and the run's error
        with it, from ever ending: the plain loop would sleep in ``select`` for ever.
        With nothing ready and no timer but this one, the clean-up stops after
        :data:`WIND_DOWN_GRACE` real seconds (a thread outside may still post)."""
        scheduled = self._scheduled  # type: ignore[attr-defined]
        timers = any(h is not self._give_up and not h.cancelled() for h in scheduled)
        if self._ready or timers:  # type: ignore[attr-defined]
            if self._give_up is not None:
                self._give_up.cancel()
                self._give_up = None
            return
        if self._give_up is None:
            self._give_up = super().call_later(WIND_DOWN_GRACE, self._stuck)

    def _stuck(self) -> None:
        self._give_up = None
        self.gave_up = [t for t in asyncio.all_tasks(self) if not t.done()]
        for task in self.gave_up:
            task._log_destroy_pending = False  # type: ignore[attr-defined]  # the error names them
        self.stop()

    def _take_turn(self, threads: ThreadScheduler, me: Participant) -> None:
        if self._ready or self._stopping:  # type: ignore[attr-defined]
            # A loop iteration is a switch point: threads that became runnable
            # meanwhile would have run on a real pool.
            threads.switch(me)
            return
        due = self._next_timer()
        if due is not None and due <= threads.clock._now:
            return
        settle_foreign_work()  # before time can jump (foreign_work.py)
        if self._ready:  # type: ignore[attr-defined]
            return
        threads.block(me, self._has_work, due, "the event loop (idle)", fixed=True)

    def _next_timer(self) -> float | None:
        scheduled = self._scheduled  # type: ignore[attr-defined]
        if not scheduled:
            return None
        timers = [h.when() for h in scheduled if not h.cancelled()]
        return min(timers) if timers else None

    def _has_work(self) -> bool:
        if self._ready or self._stopping:  # type: ignore[attr-defined]
            return True
        selector = self._selector  # type: ignore[attr-defined]
        # Beyond the loop's own wake-up pipe, a real socket (a loopback server in
        # the test) may have answered.
        return len(selector.get_map()) > 1 and bool(selector.select(0))

    def create_task(self, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = super().create_task(coro, **kwargs)
        scheduler = self._driver()
        if scheduler is None or scheduler.threads.chooser is None:
            return task  # only a schedule records who created a task
        me = current()
        if me is not None and self in me.loops:
            # What the creating task did so far happens before the new task's steps.
            scheduler.threads.task_created(me, task)
            if scheduler.threads.chooser is not None:
                task.add_done_callback(self._task_ended)
        return task

    def _task_ended(self, task: asyncio.Task[Any]) -> None:
        """What ``task`` did happens before what the tasks awaiting it (directly, or
        through ``gather``) do once it wakes them."""
        scheduler = self._driver()
        me = current()
        if scheduler is None or me is None or self not in me.loops:
            return
        waiters: list[object] = []
        for other in asyncio.all_tasks(self):
            awaited = getattr(other, "_fut_waiter", None)
            if awaited is task or task in getattr(awaited, "_children", ()):
                waiters.append(other)
        scheduler.threads.task_done(me, task, waiters)

    # -- thread work ----------------------------------------------------------
    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        scheduler = self._driver()
        loop_thread = current()
        if scheduler is None or executor is not None or loop_thread is None:
            return super().run_in_executor(executor, func, *args)
        self._check_closed()  # type: ignore[attr-defined]
        future: asyncio.Future[T] = self.create_future()
        threads = scheduler.threads
        # What the job did happens before what its awaiter does once woken by it.
        awaiter = asyncio.current_task(self)
        wanted = [
            k
            for task, own, inner in RESULT_WANTED_BY.get()
            for k in (own if task is awaiter else inner)
        ]

        def work() -> None:
            result: Any = None
            error: BaseException | None = None
            try:
                result = func(*args)
            except FlowsAborted:  # the run deadlocked: nobody awaits this any more
                self._post(self._worker_exited, None, None, None)
                raise
            except BaseException as exc:  # the callable's own error goes to its awaiter
                error = exc
            for key in wanted:
                record_access(key, write=False)
            threads.woke(loop_thread, awaiter)
            self._post(self._worker_exited, future, result, error)

        # Work handed to a thread runs even if its awaiter is cancelled
        # meanwhile, as in a real pool: only the result is dropped.
        self._live_workers += 1
        scheduler.threads.submit(work)
        return future

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            if self._driver() is not None and not self.is_closed():
                # The loop's thread is parked in the scheduler while this one runs, and
                # the scheduler wakes it for a non-empty ready queue: no need to write
                # to its wake-up pipe (a system call a work item).
                self.call_soon(callback, *args)
            else:
                self.call_soon_threadsafe(callback, *args)

    def _worker_exited(
        self, future: asyncio.Future[Any] | None, result: Any, error: BaseException | None
    ) -> None:
        # Work handed to a thread runs even if its awaiter was cancelled, as in a real
        # pool: only the result is dropped.
        if future is not None and not future.cancelled():
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
        self._live_workers -= 1
        waiter = self._exit_waiter
        if self._live_workers <= 0 and waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def shutdown_default_executor(self, *args: Any) -> None:
        # A real pool finishes submitted work before it shuts down, and the loop
        # keeps running meanwhile (a worker may be waiting on it).
        while self._live_workers > 0 and self._driver() is not None:
            self._exit_waiter = self.create_future()
            await self._exit_waiter
        await super().shutdown_default_executor(*args)


class DeterministicEventLoopPolicy(asyncio.DefaultEventLoopPolicy):
    """Hands out :class:`DeterministicEventLoop` s, so ``asyncio.run`` (and with it
    crewai's ``kickoff()``) runs on one without the caller changing anything."""

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        return DeterministicEventLoop()


@contextlib.contextmanager
def install_policy() -> Iterator[DeterministicEventLoopPolicy]:
    """Install the policy for the block (the plugin does this for a whole session)."""
    previous = asyncio.get_event_loop_policy()
    policy = DeterministicEventLoopPolicy()
    asyncio.set_event_loop_policy(policy)
    try:
        yield policy
    finally:
        asyncio.set_event_loop_policy(previous)


@contextlib.contextmanager
def ensure_policy() -> Iterator[None]:
    """Install the policy for the block unless it already is (a conftest may have
    installed another one, e.g. uvloop's, after the plugin did)."""
    if isinstance(asyncio.get_event_loop_policy(), DeterministicEventLoopPolicy):
        yield
        return
    with install_policy():
        yield


def run(coro: Any, scheduler: Scheduler) -> Any:
    """Run ``coro`` to completion on a fresh deterministic loop under ``scheduler``."""
    scheduler.threads.fresh_run()
    with activate(scheduler):
        runner = asyncio.Runner(loop_factory=DeterministicEventLoop)
        try:
            result = runner.run(coro)
        except BaseException as error:
            _wind_down(runner, error)
            raise
        runner.close()
        return result


def _wind_down(runner: asyncio.Runner, error: BaseException) -> None:
    """Close ``runner`` after its run raised ``error``, which stays the error raised:
    a clean-up that could never end is given up (``DeterministicEventLoop._idle_end``)."""
    loop = runner.get_loop()
    assert isinstance(loop, DeterministicEventLoop)  # run()'s loop_factory
    loop.winding_down = True
    try:
        runner.close()
    except BaseException:
        if not loop.gave_up:
            raise
    if loop.gave_up:
        error.add_note(
            f"pytest-flows: asyncio's clean-up after this error waited for "
            f"{len(loop.gave_up)} task(s) that could not end (nothing left could wake "
            f"them), and was given up after {WIND_DOWN_GRACE:g} real seconds: "
            + ", ".join(repr(t) for t in loop.gave_up)
        )
