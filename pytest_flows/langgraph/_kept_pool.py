"""A LangGraph pool's workers run on the scheduler's kept workers, not on threads started
for each run.

A sync graph's run makes a ``ThreadPoolExecutor`` (langchain-core's
``ContextThreadPoolExecutor``) and shuts it down at its end: the 12-node graph of
``tests/benchmarks/bench_langgraph.py`` starts 6 threads a run, and under the harness a
thread start (the OS thread, its adoption by the scheduler, its exit) cost more CPU
than LangGraph's own work on those threads. Here the pool stays LangGraph's (its
queue, its ``max_workers``, its idle-worker semaphore, its worker loop, its join at
shutdown): only where it would start a thread, its worker loop runs on a worker the
scheduler keeps for the test (see ``start_on_kept_worker``: the thread's name is the
pool's, its context fresh; under an explored schedule threads start as before).
"""

from __future__ import annotations

import weakref
from concurrent.futures import thread
from typing import Any

from pytest_flows.adapters import keeps_workers, start_on_kept_worker

__all__ = ["KEPT_POOL_SEAMS", "keep_workers"]

ADJUST = "concurrent.futures.thread:ThreadPoolExecutor._adjust_thread_count"


def keep_workers(pool: Any) -> None:
    """The freshly built LangGraph pool ``pool`` starts its workers on kept workers."""
    # through a weak reference: the pool holding a closure over itself would be a cycle,
    # garbage only the collector frees (with its queue, futures and locks), each run
    ref = weakref.ref(pool)
    pool._adjust_thread_count = lambda: _adjust_thread_count(ref())


def _adjust_thread_count(pool: Any) -> None:
    if not keeps_workers():  # an explored schedule, or no plain run: threads, as bare
        thread.ThreadPoolExecutor._adjust_thread_count(pool)
        return
    # ThreadPoolExecutor._adjust_thread_count (3.11-3.13), the worker's thread a kept one
    if pool._idle_semaphore.acquire(timeout=0):
        return

    def weakref_cb(_: Any, q: Any = pool._work_queue) -> None:
        q.put(None)

    num_threads = len(pool._threads)
    if num_threads < pool._max_workers:
        thread_name = "%s_%d" % (pool._thread_name_prefix or pool, num_threads)  # noqa: UP031
        args = (weakref.ref(pool, weakref_cb), pool._work_queue, pool._initializer, pool._initargs)
        pool._threads.add(start_on_kept_worker(thread_name, thread._worker, *args))


def _seams() -> tuple[Any, ...]:
    from pytest_flows.adapters import Seam

    return (
        Seam(
            ADJUST,
            "read",
            "a LangGraph pool starts its worker threads here; under the harness its worker "
            "loop runs on a kept worker instead (the rest of the method as it is)",
            source=(
                "if self._idle_semaphore.acquire(timeout=0):",
                "thread_name = '%s_%d' % (self._thread_name_prefix or self,",
                "t = threading.Thread(name=thread_name, target=_worker,",
                "args=(weakref.ref(self, weakref_cb),",
                "_threads_queues[t] = self._work_queue",
            ),
        ),
        Seam(
            "concurrent.futures.thread:_worker",
            "read",
            "the pool's worker loop, run on the kept worker",
            params=("executor_reference", "work_queue", "initializer", "initargs"),
        ),
    )


KEPT_POOL_SEAMS = _seams()
