"""What a superstep's completion order decides in LangGraph, as choices and accesses.

When a superstep's tasks end, the runner (``pregel/_runner.py``) decides three things a
graph's user can see:

* **which error surfaces** when two tasks failed, and **the order of parallel
  interrupts**: ``_panic_or_proceed`` pops the finished futures from a ``set``, whose
  order follows the futures' memory addresses: production picks either failure, and one
  run of the harness could pick another than the next (a seed gave ``p failed`` in one
  run and ``q failed`` in the next). Here the failed futures are taken in an order the
  schedule chooses (submission order at seed 0, an ``order`` choice point the search
  tries in full), and only when two or more failed: one costs nothing;
* **whether a sibling had ended** when the runner saw a task fail: the runner stops
  waiting at the first failure it sees (not at an interrupt: it waits for every task
  then), a sibling still running ends later (its writes saved only if the loop still
  takes them), one not yet started is cancelled.
  Each task's end writes a key of its own (``lg:task:<n>``); the runner's look at its
  futures reads them all, but only when a task failed (where that look decides
  something): so a search tries the look before and after each sibling's end, and a
  graph whose tasks all succeed costs no schedule for it.
  Whether the runner waits for a sibling to end before it cancels the others is
  decided earlier, by a failure's order against the runner's adding of the tasks'
  futures (``FuturesDict``): an add clears the event the runner waits on once it saw a
  failure, and only a task's end sets it again. A failure before the last add (a
  worker runs its node at once, the runner submits the next later) leaves the runner
  waiting for a sibling's end, so at least one sibling has started; a failure after
  it sets the event, and the runner cancels every sibling not yet started. A failure
  and the runner's wait after an add write ``lg:superstep``, so the search tries both
  (in a ``Send`` fan-out of three, one failing, 63 schedules found both siblings'
  writes saved only; now 67 find a sibling cancelled too, as seeds 9 and 14 do).
* **which interrupt the run's last ``values`` chunk holds.** A task that calls
  ``interrupt()`` puts its interrupt on the stream's queue as it ends
  (``output_writes``: an ``updates`` chunk, and a ``values`` chunk of the state with
  that task's interrupt alone), so the order two such tasks end in orders the run's
  interrupts, and where an error then ends the stream (no final ``values`` chunk), the
  values the run reports hold the interrupt of the one that ended last. Each put of an
  interrupt writes ``lg:stream``: the search tries both orders of two interrupts. So does
  the end of an interrupting task, in the move whose commit takes the pool's submit lock
  before the put (see :func:`_interrupts`). Other chunks reach no outcome: they cost no
  schedule.
* **which thread commits a task's writes, and whether the pool still takes them.** The
  runner's add of a task's future registers the commit as a done-callback: a task that
  had ended is committed by the runner as it adds it, one that had not by its worker as
  it ends. The add is ordered against an end that interrupts or fails (see
  :func:`_commit_thread`), and a commit that waited for the pool's lock against the
  runner's shutdown after a failure, which refuses its checkpoint write (see
  :func:`recorded_pool`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from pytest_flows.adapters import QuietLock

__all__ = [
    "RecordedFuture",
    "failure_seen",
    "looked_at",
    "ordered_panic",
    "recorded",
    "recorded_stream",
    "recorded_superstep",
    "superstep_waits",
]

#: The key a sync stream's interrupt chunks write (see the module docstring).
STREAM_KEY = "lg:stream"
#: The key a task's failure and the runner's adding of tasks' futures write (see the
#: module docstring).
SUPERSTEP_KEY = "lg:superstep"
#: The key a task's failure writes and the other tasks' ends read (see
#: :func:`_ends_before_a_failure`).
FAILED_KEY = "lg:failed"

#: Numbers LangGraph's futures in the order they are made, per run of a search (its
#: chooser) so that a future has the same key in every run of one search (the sleep
#: sets compare a step of an earlier run with this run's: a key numbered across runs
#: never matched, and a thread slept past the runner's look at its future); outside a
#: search, for the whole process (only their order matters there).
_seqs: weakref.WeakKeyDictionary[Any, Iterator[int]] = weakref.WeakKeyDictionary()
_process_seqs = itertools.count()
#: Numbers LangGraph's pools the same way (see :func:`recorded_pool`).
_pool_seqs: weakref.WeakKeyDictionary[Any, Iterator[int]] = weakref.WeakKeyDictionary()
_process_pool_seqs = itertools.count()


def _next_seq(
    per_run: weakref.WeakKeyDictionary[Any, Iterator[int]] = _seqs,
    process: Iterator[int] = _process_seqs,
) -> int:
    from pytest_flows.adapters import current_participant

    me = current_participant()
    chooser = None if me is None else me.sched.chooser
    if chooser is None:
        return next(process)
    return next(per_run.setdefault(chooser, itertools.count()))


def number(future: Any) -> tuple[int, str]:
    """The order ``future`` was made in: numbered at submission to a LangGraph pool (see
    _explore_pool); an asyncio task by its name (LangGraph names each after its task)."""
    found = getattr(future, "_flows_seq", None)
    if found is not None:
        return (0, f"{int(found):012d}")
    name = getattr(future, "get_name", None)
    if callable(name):
        return (1, str(name()))
    return (2, f"{id(future):020d}")  # neither: no order to keep (never seen from LangGraph)


def _key(future: Any) -> str:
    return f"lg:task:{number(future)[1]}"


def _stopping(error: BaseException | None) -> bool:
    """Whether a task's ``error`` stops the runner waiting for the others (an interrupt
    does not: the runner waits for every task then)."""
    from langgraph.errors import GraphBubbleUp

    return error is not None and not isinstance(error, GraphBubbleUp)


def _interrupts(error: BaseException | None) -> bool:
    """Whether a task's ``error`` is an interrupt its end puts on the stream: the order of
    two such puts is decided as the tasks end, not where they put. The end's done-callback
    (``_runner.commit`` -> ``put_writes``) submits the checkpointer's write to the pool,
    and ``ThreadPoolExecutor.submit`` holds the pool's shutdown lock (a quiet lock: taking
    it free records nothing) while it starts a worker, a switch point; the put follows the
    submit in the same move. A sibling's end that submits meanwhile waits for the lock, so
    once one end has taken it the other puts second, and reversing the two puts where the
    first was made held the first back too late (the long check's
    ``two_interrupts_past_two_sleeps``). The end writes :data:`STREAM_KEY` too, in the move
    that takes the lock, so the search orders the two ends there."""
    from langgraph.errors import GraphInterrupt

    return isinstance(error, GraphInterrupt) and bool(error.args and error.args[0])


def _ends_before_a_failure(future: Any) -> None:
    """A task's end that the runner waits for (``concurrent.futures.wait`` put a waiter on
    its future) reads :data:`FAILED_KEY`, which a failing end writes: whether a task ended
    before or after a sibling's failure decides whether the runner saw it end before it
    stopped waiting (its writes saved) or not (its commit finds the pool shut down: lost).
    Each end also wakes the runner's wait, so without the key the runner's look after the
    failure came after every earlier end in every order the search knew, and a sibling held
    back past a later failure (as a seed may, within the clock's window) was never tried
    (``soundness_misses/sibling_write_held_past_a_failure.txt``). Two ends that do not fail
    only read it: their order costs no schedule."""
    if getattr(future, "_waiters", None):
        from pytest_flows.adapters import record_access, recording_accesses

        if recording_accesses():
            record_access(FAILED_KEY, write=False)


def _failed(future: Any) -> BaseException | None:
    if future.cancelled() or not future.done():
        return None
    return future.exception()  # type: ignore[no-any-return]


def _stops(future: Any) -> bool:
    """Whether ``future`` failed so that the runner stops waiting for the others (as
    ``_runner._should_stop_others`` decides: an interrupt does not, the runner waits for
    every task then)."""
    return _stopping(_failed(future))


class RecordedFuture(concurrent.futures.Future):  # type: ignore[type-arg]
    """A LangGraph pool job's future: its start and its end write the job's key (the
    runner's look at its futures after a failure reads them)."""

    def set_running_or_notify_cancel(self) -> bool:
        _touched(self)
        return super().set_running_or_notify_cancel()

    def set_result(self, result: Any) -> None:
        _touched(self)
        _ends_before_a_failure(self)
        super().set_result(result)

    def set_exception(self, exception: BaseException | None) -> None:
        _touched(self)
        if _stopping(exception):
            # see recorded_superstep and _ends_before_a_failure
            writes: tuple[str, ...] = (SUPERSTEP_KEY, FAILED_KEY)
        else:
            _ends_before_a_failure(self)
            # an interrupt's put is decided here: see _interrupts
            writes = (STREAM_KEY,) if _interrupts(exception) else ()
        if _interrupts(exception) or _stopping(exception):
            writes = (*writes, _commit_key(self))  # see _commit_thread
        if writes:
            from pytest_flows.adapters import record_access

            for key in writes:
                record_access(key, write=True)
        super().set_exception(exception)


def recorded(future: Any) -> None:
    """Make ``future`` (just made by a LangGraph pool's ``submit``, held by nobody else
    yet) a :class:`RecordedFuture`, numbered in the order futures are made."""
    if type(future) is concurrent.futures.Future:
        future.__class__ = RecordedFuture
    future._flows_seq = _next_seq()


def recorded_superstep(futures: Any) -> None:
    """The runner's bookkeeping of a sync superstep (``FuturesDict``, just made): its
    wait after adding tasks' futures writes :data:`SUPERSTEP_KEY`, as a task's failure
    does (see the module docstring)."""
    import threading

    if isinstance(getattr(futures, "event", None), threading.Event):
        futures.__class__ = _superstep_class(type(futures))


def superstep_waits(futures: Any) -> None:
    """The runner waits on ``futures`` (``concurrent.futures.wait``): if it added a task's
    future since its last wait, that add's order against a failure is recorded here, in
    the same step (the runner takes no switch point between adding and waiting)."""
    if getattr(futures, "_flows_added", False):
        futures._flows_added = False
        from pytest_flows.adapters import record_access

        record_access(SUPERSTEP_KEY, write=True)


_superstep_classes: dict[type, type] = {}


def _superstep_class(made: Any) -> type:
    """``made`` (``FuturesDict``) noting that a task's future was added (a stream
    waiter's, added with ``None``, is not a task's)."""
    found = _superstep_classes.get(made)
    if found is None:

        def __setitem__(self: Any, key: Any, value: Any) -> None:
            if value is not None:
                self._flows_added = True
                _commit_thread(key)
            made.__setitem__(self, key, value)

        found = type(made.__name__, (made,), {"__setitem__": __setitem__})
        _superstep_classes[made] = found
    return found


def _commit_key(future: Any) -> str:
    return f"lg:commit:{number(future)[1]}"


def _commit_thread(future: Any) -> None:
    """The runner adds ``future`` (a task's) to its ``FuturesDict``, which registers the
    commit of the task's writes as a done-callback: a future that has not ended runs it
    on its worker as it ends, one that has ended runs it here, on the runner's thread.
    Which thread commits, and so when, is decided by the add's order against the end.
    It matters where the commit does something an outcome sees at a time that thread
    decides: an interrupting task's commit puts the interrupt on the stream (the order of
    two puts is the order of the run's interrupts), and a failing task's commit sets the
    runner's event and records the failure. So the add reads the task's commit key, and
    the end writes it only when it interrupts or fails: a search orders those two, and a
    task that returns costs nothing (its commit's checkpoint write, the one thing of it an
    outcome sees, is accepted or refused where it takes the pool's lock, which
    :func:`recorded_pool` orders; at the add it is always accepted, the runner being
    there). In ``soundness_misses/two_interrupts_in_a_send_fan_out.txt`` seed 12 has
    ``w3`` end before the runner adds its future while ``w2``'s commit waits on its
    worker for the pool's lock the runner holds: the runner then commits ``w3`` first and
    puts its interrupt before ``w2``'s."""
    from pytest_flows.adapters import record_access, recording_accesses

    if recording_accesses():
        record_access(_commit_key(future), write=False)


def _touched(future: Any) -> None:
    from pytest_flows.adapters import record_access, recording_accesses

    if recording_accesses():  # (a plain run records nothing: no key to build)
        record_access(_key(future), write=True)


def looked_at(futures: Any, return_when: Any) -> None:
    """The runner's ``concurrent.futures.wait(..., FIRST_COMPLETED)`` returned: its look
    at which futures are done (see :func:`failure_seen`)."""
    if return_when != concurrent.futures.FIRST_COMPLETED:
        return  # all of them: the wait ends after every end, nothing to reverse
    listed = list(futures)
    if any(isinstance(f, RecordedFuture) for f in listed):
        failure_seen(listed)


def failure_seen(futures: Any) -> None:
    """The runner looks at ``futures`` and one of them failed: what it decides (stop
    waiting, which error, what to cancel) depends on which of the others had ended."""
    from pytest_flows.adapters import record_access

    listed = list(futures)
    if not any(_stops(f) for f in listed):
        return
    if any(isinstance(f, asyncio.Future) for f in listed):
        from pytest_flows.adapters import note_caveat

        note_caveat(
            "a task of an async LangGraph graph failed: when the async runner saw its "
            "tasks end (which error surfaces, which siblings' writes were saved) is not "
            "recorded, so those orders are not all explored (a sync graph's are)."
        )
        return
    for future in sorted(listed, key=number):
        record_access(_key(future), write=False)


def ordered_panic(
    futs: Any,
    *,
    timeout_exc_cls: type[Exception] = TimeoutError,
    panic: bool = True,
    handled_exception_ids: set[int] | None = None,
    handled_futures: Any = None,
) -> None:
    """LangGraph's ``_runner._panic_or_proceed`` (1.2.x), the finished futures taken in
    an order the schedule chooses instead of a set's (see the module docstring)."""
    from langgraph.errors import GraphInterrupt
    from langgraph.pregel._executor import SKIP_RERAISE_SET
    from langgraph.pregel._runner import _exception

    from pytest_flows.adapters import active_scheduler

    listed = sorted(futs, key=number)
    failure_seen(listed)
    done: list[Any] = []
    inflight: list[Any] = []
    for fut in listed:
        if fut.cancelled():
            continue
        (done if fut.done() else inflight).append(fut)
    failed = [f for f in done if _exception(f) is not None]
    if len(failed) > 1:
        scheduler = active_scheduler()
        if scheduler is not None:
            failed = scheduler.order(failed)
    done = [*failed, *(f for f in done if f not in failed)]
    interrupts: list[Any] = []
    for fut in done:
        exc = _exception(fut)
        if exc is None:
            continue
        if fut in (handled_futures or set()):
            continue
        if id(exc) in (handled_exception_ids or set()):
            continue
        while inflight:  # cancel all pending tasks
            inflight.pop().cancel()
        if panic:
            if isinstance(exc, GraphInterrupt):
                interrupts.append(exc)
            elif fut not in SKIP_RERAISE_SET:
                _stopped.thread = threading.get_ident()  # see recorded_pool
                raise exc
    if interrupts:
        raise GraphInterrupt(tuple(i for exc in interrupts for i in exc.args[0]))
    if inflight:  # timed out
        while inflight:
            inflight.pop().cancel()
        raise timeout_exc_cls("Timed out")


def _holds_interrupt(chunk: Any) -> bool:
    payload = chunk[-1] if isinstance(chunk, tuple) and chunk else None
    return isinstance(payload, dict) and "__interrupt__" in payload


def recorded_stream(stream: Any) -> None:
    """A sync stream's chunk queue (``SyncQueue``, just made): a put of an interrupt
    writes :data:`STREAM_KEY` (see the module docstring)."""
    from pytest_flows.adapters import record_access

    put = stream.put

    def put_chunk(item: Any, block: bool = True, timeout: float | None = None) -> None:
        if _holds_interrupt(item):
            record_access(STREAM_KEY, write=True)
        put(item, block, timeout)

    stream.put = put_chunk


class PoolLock(QuietLock):
    """A LangGraph pool's shutdown lock (quiet, as the pool's other locks are: see
    ``_explore_pool``) whose take after a wait reads the pool's key, and whose take by
    the thread that shuts the pool down after an error writes it (see
    :func:`recorded_pool`)."""

    __slots__ = ("flows_closer", "flows_key")

    def __init__(self, key: str) -> None:
        super().__init__()
        self.flows_key = key
        self.flows_closer: int | None = None

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self._real.acquire(False):
            self._taken(waited=False)
            return True
        if not blocking:
            return False
        got = QuietLock.acquire(self, True, timeout)
        if got:
            self._taken(waited=True)
        return got

    acquire_lock = acquire

    def __enter__(self) -> bool:
        return self.acquire()

    def _taken(self, *, waited: bool) -> None:
        closing = self.flows_closer is not None and self.flows_closer == threading.get_ident()
        if closing or waited:
            from pytest_flows.adapters import record_access, recording_accesses

            if recording_accesses():
                record_access(self.flows_key, write=closing)


class _Stopped:
    #: The thread whose runner raised a task's failure (not an interrupt) last: the
    #: shutdown that follows on that thread ends what a sibling's commit can save.
    thread: int | None = None


_stopped = _Stopped()


def recorded_pool(pool: Any) -> None:
    """A LangGraph pool (just made): its ``shutdown`` after an error (or an interrupt)
    takes its shutdown lock writing the pool's key; a take that waited for the lock reads
    it. A task's commit submits its checkpoint writes from a done-callback, and
    ``submit`` checks that the pool is open with that lock held. A commit that waits for
    the lock (held by another thread's submit while the pool starts a worker) can take it
    after the runner saw a sibling fail and shut the pool down: its submit then raises,
    and the task's writes are not saved, though the task ended before the failure
    (``soundness_misses/interrupt_lost_after_a_failure.txt``, its fourth outcome).
    Neither the end nor the failure orders that; the two takes do. A take of the free
    lock records nothing: the runner shuts the pool down only after every task's future
    is done (``BackgroundExecutor.__exit__`` waits for them), and a commit that does not
    wait takes the lock in the move its task ends in, so it comes before the shutdown
    in every order. A run that ends without an error writes nothing: no race."""
    import sys

    _stopped.thread = None  # nothing of an earlier run's is left (a thread id is reused)
    lock = pool._shutdown_lock = PoolLock(f"lg:pool:{_next_seq(_pool_seqs, _process_pool_seqs)}")
    shutdown = pool.shutdown

    def shut_down(wait: bool = True, *, cancel_futures: bool = False) -> None:
        if sys.exc_info()[1] is not None and _stopped.thread == threading.get_ident():
            _stopped.thread = None
            lock.flows_closer = threading.get_ident()
        shutdown(wait, cancel_futures=cancel_futures)

    pool.shutdown = shut_down
