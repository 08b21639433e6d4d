"""A thread a pool would start, run on one of the scheduler's kept workers instead.

A framework that makes a thread pool for each run (LangGraph's sync ``invoke`` makes one
and starts up to ``min(32, cpu_count + 4)`` threads) pays an OS thread start for each
worker: the bootstrap, the scheduler adopting the thread, its exit. Under the scheduler
only one thread runs at a time anyway, and the scheduler keeps idle workers of its own
(``ThreadScheduler.submit``, as ``asyncio.to_thread`` runs under the harness): a pool's
worker loop can run on one of them, as a piece of work of that thread, at no start.

What code on the worker can tell apart from a fresh thread, and what is done about it:

* the thread's name (``threading.current_thread().name``, logging's ``threadName``) is
  the one the pool gave its thread, for as long as the worker loop runs;
* the context: the loop runs in a fresh, empty ``contextvars.Context``, as a new
  thread starts in one (each job runs in its own copy of its submitter's, as before);
* its identity (``get_ident``) and its thread-locals are the kept thread's: a value a
  job left in a ``threading.local`` in an earlier run of the same test is still there
  (workers are kept for one test: never across tests, never under an explored
  schedule, which starts its threads afresh so that it replays alone).

Only plain runs keep workers: under an explored schedule (``sched.chooser``) and after
an abort :func:`start_on_kept_worker` returns None and the caller starts a thread.
A kept worker goes through the same switch points as a started thread (a seeded
priority drawn, the baton handed to it at once at seed 0), so a seed picks the same
interleavings either way.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Callable
from typing import Any

from pytest_flows._internal.runtime.participants import FlowsAborted, _real_lock, current

__all__ = ["KeptThread", "keeps_workers", "start_on_kept_worker"]


class KeptThread:
    """What a pool keeps for a worker it started on a kept worker: ``join`` waits until
    the worker loop returned (a switch point, as ``Thread.join`` of a managed thread)."""

    __slots__ = ("__weakref__", "_done", "_finished", "_sched", "daemon", "name")

    def __init__(self, name: str, sched: Any) -> None:
        self.name = name
        self.daemon = True
        self._sched = sched
        self._done = False
        self._finished = _real_lock()  # released when done, for a join outside the run
        self._finished.acquire()

    def is_alive(self) -> bool:
        return not self._done

    def join(self, timeout: float | None = None) -> None:
        if self._done:
            return
        me = current()
        if me is not None and me.sched is self._sched:
            sched = self._sched
            deadline = None if timeout is None else sched.clock.after(max(timeout, 0))
            if sched.block(me, self.is_done, deadline, f"Thread.join({self.name!r})"):
                return
            if current() is not None:
                return  # timed out on the virtual clock
        # a thread outside the run, or the test ended meanwhile: wait for real
        if self._finished.acquire(True, -1 if timeout is None else max(timeout, 0)):
            self._finished.release()

    def is_done(self) -> bool:
        return self._done

    def _finish(self) -> None:
        self._done = True
        self._finished.release()

    def __repr__(self) -> str:
        return f"<KeptThread {self.name!r} {'stopped' if self._done else 'started'}>"


def keeps_workers() -> bool:
    """Whether :func:`start_on_kept_worker` may be called here: the calling thread takes
    part in a plain run (not an explored schedule, not aborted)."""
    me = current()
    if me is None:
        return False
    sched = me.sched
    return sched.chooser is None and not sched.aborted and not sched.detached


def start_on_kept_worker(name: str, target: Callable[..., object], *args: Any) -> KeptThread:
    """Run ``target(*args)`` on an idle kept worker of the calling thread's scheduler (or
    a new one), as a thread named ``name`` would. Only where :func:`keeps_workers`
    (elsewhere start a ``threading.Thread``)."""
    me = current()
    if me is None or not keeps_workers():
        raise RuntimeError("start_on_kept_worker() outside a plain run: start a Thread")
    sched = me.sched
    handle = KeptThread(name, sched)

    def body() -> None:
        worker = current()
        thread = threading.current_thread()
        was = thread.name
        named = worker.name if worker is not None else ""
        thread.name = name
        if worker is not None:
            worker.name = name
        try:
            contextvars.Context().run(target, *args)
        except FlowsAborted:
            raise
        except BaseException:  # as a thread's end: reported, the worker goes on
            threading.excepthook(threading.ExceptHookArgs((*sys.exc_info(), thread)))
        finally:
            thread.name = was
            if worker is not None:
                worker.name = named
            handle._finish()

    sched.submit(body, renew=True)
    return handle
