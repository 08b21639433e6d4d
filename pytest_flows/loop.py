"""The deterministic event loop.

Three things make a flow run reproducible without changing what its runtime
decides:

* **serial offload** - work sent to threads (``asyncio.to_thread`` and
  ``run_in_executor``: sync flow methods, persistence writes) is queued and run
  one item at a time on a worker thread of the loop, while the loop waits;
* **seeded choice** - when several thread items are queued and nothing else can
  run, the scheduler's seed picks which one completes next (seed 0 keeps FIFO,
  the order the runtime submitted them);
* **virtual time** - ``loop.time()`` reads a :class:`VirtualClock` that jumps to
  the next timer as soon as the loop would otherwise sit idle.

The loop is framework-neutral: it knows nothing of crewai or agent_framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

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

# Real clocks, kept in a container: freezegun swaps module-level references
# to the time functions, and the loop must keep measuring real time when no
# scheduler drives it.
_REAL = {"monotonic": time.monotonic}

#: How long (real seconds) the loop waits for real I/O on sockets it watches
#: before it lets virtual time jump to the next timer. Only loops that watch a
#: real socket (a recording test talking to a loopback server) ever wait.
REAL_IO_GRACE = 0.25


class VirtualClock:
    """A monotonic clock that only moves when told to (or when a loop is idle)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        """Seconds on the virtual clock."""
        return self._now

    def advance(self, seconds: float) -> float:
        """Move the clock forward by ``seconds`` (never backwards); returns the new time."""
        if seconds < 0:
            raise ValueError(
                f"VirtualClock.advance({seconds!r}): virtual time cannot go backwards; "
                "pass a number of seconds >= 0."
            )
        with self._lock:
            self._now += seconds
            return self._now

    def advance_to(self, when: float) -> float:
        """Move the clock to ``when`` if that is later than now; returns the new time."""
        with self._lock:
            if when > self._now:
                self._now = when
            return self._now

    def __repr__(self) -> str:
        return f"VirtualClock(t={self._now:g})"


@dataclass
class Scheduler:
    """What every run of one test shares: the seed, its random stream and the clock."""

    seed: int = 0
    clock: VirtualClock = field(default_factory=VirtualClock)
    stream: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(
                f"flows seed must be a whole number >= 0, got {self.seed!r}; "
                "use e.g. --flows-seed=3 or @pytest.mark.flows(seed=3)."
            )
        # A str seed goes through sha512, so the stream is the same under any
        # PYTHONHASHSEED and on any machine.
        self._rng = random.Random(f"pytest-flows:{self.seed}:{self.stream}")
        self._lock = threading.Lock()

    def choose(self, n: int) -> int:
        """Index of the item to take from ``n`` ready ones (0 with the default seed)."""
        if n <= 1 or self.seed == 0:
            return 0
        with self._lock:
            return self._rng.randrange(n)

    def order(self, items: Sequence[T]) -> list[T]:
        """``items`` in the order the seed picks (unchanged with the default seed)."""
        pool = list(items)
        return [pool.pop(self.choose(len(pool))) for _ in range(len(pool))]


_active: Scheduler | None = None
_active_lock = threading.Lock()


def active_scheduler() -> Scheduler | None:
    """The scheduler of the test being run, or None outside a flows test."""
    return _active


@contextlib.contextmanager
def activate(scheduler: Scheduler) -> Iterator[Scheduler]:
    """Make ``scheduler`` drive every :class:`DeterministicEventLoop` until exit."""
    global _active
    with _active_lock:
        previous, _active = _active, scheduler
    try:
        yield scheduler
    finally:
        with _active_lock:
            _active = previous


@dataclass
class _Offload:
    future: asyncio.Future[Any]
    func: Callable[..., Any]
    args: tuple[Any, ...]


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
        self._scheduler = _active
        self._offloads: list[_Offload] = []
        self._worker: ThreadPoolExecutor | None = None

    def _driver(self) -> Scheduler | None:
        scheduler = self._scheduler
        return scheduler if scheduler is not None and scheduler is _active else None

    @property
    def deterministic(self) -> bool:
        """Whether this loop is currently driven by a flows scheduler."""
        return self._driver() is not None

    # -- time -------------------------------------------------------------
    def time(self) -> float:
        scheduler = self._driver()
        if scheduler is None:
            return _REAL["monotonic"]()
        return scheduler.clock.monotonic()

    # -- thread work --------------------------------------------------------
    def run_in_executor(  # type: ignore[override]
        self, executor: Any, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        if self._driver() is None:
            return super().run_in_executor(executor, func, *args)
        self._check_closed()  # type: ignore[attr-defined]
        future: asyncio.Future[T] = self.create_future()
        self._offloads.append(_Offload(future, func, args))
        return future

    def _run_offload(self, scheduler: Scheduler) -> None:
        item = self._offloads.pop(scheduler.choose(len(self._offloads)))
        # Work handed to a thread runs even if its awaiter was cancelled
        # meanwhile, as in a real thread pool: only the result is dropped.
        if self._worker is None:
            # One worker per loop: a sync method that calls asyncio.run() gets a
            # loop of its own with a worker of its own, so nesting never deadlocks.
            self._worker = ThreadPoolExecutor(1, thread_name_prefix="pytest-flows-worker")
        try:
            result = self._worker.submit(item.func, *item.args).result()
        except BaseException as exc:  # the callable's own error goes to its awaiter
            if not item.future.cancelled():
                item.future.set_exception(exc)
        else:
            if not item.future.cancelled():
                item.future.set_result(result)

    # -- the scheduler step ----------------------------------------------------
    def _run_once(self) -> None:
        scheduler = self._driver()
        if scheduler is not None:
            # Thread work runs only when nothing else can: every coroutine that
            # is ready has reached its await first, as with a real pool.
            while self._offloads and not self._ready:  # type: ignore[attr-defined]
                self._run_offload(scheduler)
            if not self._ready:  # type: ignore[attr-defined]
                self._advance_idle_time(scheduler)
        super()._run_once()  # type: ignore[misc]

    def _advance_idle_time(self, scheduler: Scheduler) -> None:
        timers = [h for h in self._scheduled if not h.cancelled()]  # type: ignore[attr-defined]
        if not timers:
            return
        if len(self._selector.get_map()) > 1:  # type: ignore[attr-defined]
            # A real socket is watched (beyond the loop's own wake-up pipe): give
            # it a short real-time chance to answer before time jumps.
            events = self._selector.select(REAL_IO_GRACE)  # type: ignore[attr-defined]
            if events:
                self._process_events(events)  # type: ignore[attr-defined]
                return
        scheduler.clock.advance_to(min(h.when() for h in timers))

    def _drain_offloads(self) -> None:
        # A real pool finishes submitted work before it shuts down.
        scheduler = self._driver() or Scheduler()
        while self._offloads:
            self._run_offload(scheduler)

    async def shutdown_default_executor(self, *args: Any) -> None:
        self._drain_offloads()
        await super().shutdown_default_executor(*args)

    def close(self) -> None:
        if not self.is_closed():
            self._drain_offloads()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)
        super().close()


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
    with activate(scheduler), asyncio.Runner(loop_factory=DeterministicEventLoop) as runner:
        return runner.run(coro)
