"""LangGraph's sync pool, modelled at the grain of what it decides.

A sync graph runs a superstep's nodes on a ``ThreadPoolExecutor`` (langchain-core's
``ContextThreadPoolExecutor``) that LangGraph makes per run. Under the scheduler every
blocking acquire of a lock made during the test is a switch point, and the pool takes
many: its work queue, its idle-worker semaphore, each future's condition, each
``Condition.wait``'s first take of its waiter lock. Two parallel nodes bumping one store
key made 91 choice points, all but four of them in that bookkeeping, each a thread
taking a free lock no other thread held, and a depth-first search backtracked through
them (3,000 schedules, 127 s, one outcome of two, not complete).

What the pool decides that a graph can see is *when* each job runs, ends and is seen to
end: which worker takes a job only names the thread. So the locks of a LangGraph pool,
of its work queue and of its futures are *quiet*: taking a free one is no switch point
(a held one still blocks through the scheduler, as before). The choices left are the
ones that matter: a worker's start, the nodes' own switch points (store calls, sleeps,
locks of the user's), a blocked waiter's wake. What orders them is recorded by
:mod:`pytest_flows.langgraph._explore_order`.

A switch point left out here is left out under seeds too (both go through the same
locks): seeds and the search share one model.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
from typing import Any

from pytest_flows.adapters import QuietLock  # a managed lock whose free take is quiet

__all__ = ["QuietCondition", "QuietLock", "QuietQueue", "quiet_pool"]


class QuietCondition(threading.Condition):
    """A condition on a :class:`QuietLock` whose ``wait`` takes its fresh waiter lock
    quietly too (``threading.Condition.wait`` takes it once free, then blocks on it)."""

    def __init__(self) -> None:
        super().__init__(QuietLock())  # type: ignore[arg-type]

    # Condition's ``with`` calls its lock's ``__enter__``/``__exit__``: here the quiet
    # lock's free take straight (its futures and queues take it hundreds of times a run).
    def __enter__(self) -> bool:
        lock = self._lock  # type: ignore[attr-defined]
        if lock._real.acquire(False):
            return True
        return bool(lock.acquire())  # held: blocks through the scheduler

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__()  # type: ignore[attr-defined]

    def wait(self, timeout: float | None = None) -> bool:
        # threading.Condition.wait (3.11-3.13), with the waiter a QuietLock
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot wait on un-acquired lock")
        waiter = QuietLock()
        waiter.acquire()
        self._waiters.append(waiter)  # type: ignore[attr-defined]
        saved_state = self._release_save()  # type: ignore[attr-defined]
        gotit = False
        try:
            if timeout is None:
                waiter.acquire()
                gotit = True
            elif timeout > 0:
                gotit = waiter.acquire(True, timeout)
            else:
                gotit = waiter.acquire(False)
            return gotit
        finally:
            self._acquire_restore(saved_state)  # type: ignore[attr-defined]
            if not gotit:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)  # type: ignore[attr-defined]


def _quiet_semaphore(value: int = 0) -> threading.Semaphore:
    semaphore = threading.Semaphore(value)
    semaphore._cond = QuietCondition()  # type: ignore[attr-defined]
    return semaphore


class QuietQueue(queue._PySimpleQueue):  # type: ignore[name-defined,misc]
    """A LangGraph pool's work queue: quiet, and each job's future made quiet as it is
    queued (before any worker can see it)."""

    def __init__(self) -> None:
        super().__init__()
        self._count = _quiet_semaphore(0)
        #: The ``after:`` key the latest job queued here writes when a worker takes it.
        self._flows_last_take: str | None = None

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        future = getattr(item, "future", None)
        if future is not None and hasattr(future, "_condition"):
            from pytest_flows.langgraph._explore_order import recorded

            future._condition = QuietCondition()
            recorded(future)
            handed_over(item)
            # First in, first out: a job is taken after the one queued before it.
            item._flows_taken_after = self._flows_last_take
            self._flows_last_take = item._flows_take = f"after:lg-take:{next(_takes)}"
        super().put(item, block, timeout)


#: Numbers the jobs handed to LangGraph's pools (the ``after:`` key of each).
_jobs = itertools.count()
#: Numbers the takes of those jobs (the ``after:`` key that orders a queue's takes).
_takes = itertools.count()


def handed_over(item: Any) -> None:
    """The running thread hands ``item`` (a pool job) over: the job's steps happen after
    what this thread did so far (an ``after:`` key: an order, never a race)."""
    from pytest_flows.adapters import record_access

    key = f"after:lg-job:{next(_jobs)}"
    item._flows_after = key
    record_access(key, write=True)


def is_langgraph_job(item: Any) -> bool:
    """Whether pool job ``item`` was queued on a LangGraph pool's queue."""
    return getattr(item, "_flows_after", None) is not None


def job_taken(item: Any) -> None:
    """The running pool worker starts job ``item``: a new piece of work of its thread (the
    job could have gone to another worker), after the step that handed it over."""
    from pytest_flows.adapters import current_participant, record_access

    me = current_participant()
    if me is None or me.sched.chooser is None or me.sched.aborted:
        return
    chooser = me.sched.chooser
    chooser.job_started(me.seq)
    step = chooser.steps[-1] if chooser.steps else None
    if step is not None and step.thread == me.seq:
        # A worker LangGraph starts runs whichever job is queued first, often one another
        # thread handed over: its job comes after that hand-off (below), not after the
        # thread's start (a step of whoever submitted when the pool was short a worker).
        step.after = ()
    key = getattr(item, "_flows_after", None)
    if key is not None:
        record_access(key, write=False)
    # A worker takes the first job of its pool's queue: the take of a job comes after
    # the take of the job queued before it, in every order (no race: an order). Without
    # it a search took the take of a later job for something a worker could do first,
    # where it would have taken the earlier job (the same run, its workers renamed).
    before = getattr(item, "_flows_taken_after", None)
    if before is not None:
        record_access(before, write=False)
    taken = getattr(item, "_flows_take", None)
    if taken is not None:
        record_access(taken, write=True)


def quiet_pool(pool: Any) -> None:
    """Make a freshly built LangGraph pool's own locks quiet (see the module docstring)."""
    pool._work_queue = QuietQueue()
    pool._idle_semaphore = _quiet_semaphore(0)
    from pytest_flows.langgraph._explore_order import recorded_pool

    recorded_pool(pool)  # its shutdown lock: quiet, and recorded


def quiet_runner_parts(futures: Any) -> None:
    """The runner's own bookkeeping of one superstep (``FuturesDict``: a lock and, for a
    sync graph, an event) is quiet too."""
    futures.lock = QuietLock()
    event = getattr(futures, "event", None)
    if isinstance(event, threading.Event):
        event._cond = QuietCondition()  # type: ignore[attr-defined]


def quiet_stream_queue(stream: Any) -> None:
    """The queue a sync ``stream()`` hands its chunks through (``SyncQueue``) is quiet."""
    count = getattr(stream, "_count", None)
    if count is not None and hasattr(count, "_cond"):
        count._cond = QuietCondition()


def quiet_waiter(fs: Any, waiter: Any) -> None:
    """``concurrent.futures.wait`` on a LangGraph pool's futures (the runner's wait for
    the first task to end, the executor's for all at exit) waits through a waiter whose
    lock and event are quiet too; a wait on other futures is left as it is."""
    if not any(isinstance(getattr(f, "_condition", None), QuietCondition) for f in fs):
        return
    event = getattr(waiter, "event", None)
    if isinstance(event, threading.Event):
        event._cond = QuietCondition()  # type: ignore[attr-defined]
    if hasattr(waiter, "lock"):
        waiter.lock = QuietLock()
