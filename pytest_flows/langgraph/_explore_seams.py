"""The seams exploration of LangGraph graphs needs (joined to ``_seams.SEAMS``)."""

from __future__ import annotations

from pytest_flows.adapters import Seam

__all__ = [
    "ARUN_TASK",
    "EXPLORE_SEAMS",
    "FUTURES_INIT",
    "FUTURES_WAIT",
    "PANIC",
    "POOL_INIT",
    "POOL_JOB",
    "RUN_TASK",
    "STORE_ABATCH",
    "STORE_BATCH",
    "STREAM_QUEUE_INIT",
    "WAITERS",
]

POOL_INIT = "concurrent.futures.thread:ThreadPoolExecutor.__init__"
POOL_JOB = "concurrent.futures.thread:_WorkItem.run"
STORE_BATCH = "langgraph.store.memory:InMemoryStore.batch"
STORE_ABATCH = "langgraph.store.memory:InMemoryStore.abatch"
RUN_TASK = "langgraph.pregel._runner:run_with_retry"
FUTURES_INIT = "langgraph.pregel._runner:FuturesDict.__init__"
STREAM_QUEUE_INIT = "langgraph._internal._queue:SyncQueue.__init__"
WAITERS = "concurrent.futures._base:_create_and_install_waiters"
FUTURES_WAIT = "concurrent.futures:wait"
PANIC = "langgraph.pregel._runner:_panic_or_proceed"
ARUN_TASK = "langgraph.pregel._runner:arun_with_retry"

EXPLORE_SEAMS = (
    Seam(
        POOL_INIT,
        "patch",
        "a pool keeps its workers in a set and shutdown(wait=True) joins them in the set's "
        "order, which follows their memory addresses: per test a LangGraph pool's set "
        "iterates in the order the workers started, so one schedule of a sync graph "
        "(LangGraph makes and shuts down a pool per run) replays, and explore() can "
        "derive the next",
        source=("self._threads = set()",),
    ),
    Seam(
        "concurrent.futures.thread:ThreadPoolExecutor.shutdown",
        "read",
        "the join order the patch above fixes",
        source=("for t in self._threads:",),
    ),
    Seam(
        STORE_BATCH,
        "patch",
        "every get/put/search/delete of an InMemoryStore goes through batch(ops): each op "
        "is a switch point and a recorded access of its key, so parallel nodes' "
        "read-modify-writes on one key interleave under seeds and explore() orders them",
        params=("self", "ops"),
    ),
    Seam(STORE_ABATCH, "patch", "the async twin of batch", params=("self", "ops")),
    Seam(
        RUN_TASK,
        "patch",
        "the runner runs each node's task through it: while a schedule is explored or a "
        "race check records, the node's input is snapshot before and compared after, to "
        "report a node that mutated shared state in place",
        params=("task", "retry_policy"),
    ),
    Seam(ARUN_TASK, "patch", "the async twin of run_with_retry", params=("task", "retry_policy")),
    Seam(
        POOL_JOB,
        "patch",
        "a pool worker runs each job through it: under a seed the worker draws a fresh "
        "priority for each job, as the harness's own pool does, or the worker that won "
        "the first job kept the highest priority and ran every parallel node to its end",
        params=("self",),
    ),
    Seam(
        FUTURES_INIT,
        "patch",
        "the runner's bookkeeping of a superstep's futures (a lock, an event) takes its "
        "locks quietly: taking a free one is no switch point (see _explore_pool); and "
        "its adding of a task's future is noted, so that the runner's wait after adding "
        "is ordered against a task's failure (see _explore_order)",
        source=("self.lock = threading.Lock()",),
    ),
    Seam(
        "langgraph.pregel._runner:FuturesDict.__setitem__",
        "read",
        "adding a task's future clears the event the runner waits on after it saw a "
        "failure: a failure before the last add leaves the runner waiting for a "
        "sibling's end, one after has it cancel every sibling not yet started",
        source=("self.event.clear()", "key.add_done_callback(partial(self.on_done, value))"),
    ),
    Seam(
        "langgraph.pregel._runner:FuturesDict.on_done",
        "read",
        "a task's end sets that event again when a task failed",
        source=("if self.counter == 0 or self.should_stop(self.failed):",),
    ),
    Seam(
        STREAM_QUEUE_INIT,
        "patch",
        "a sync stream's chunk queue takes its semaphore's lock quietly",
        source=("self._count = Semaphore(0)",),
    ),
    Seam(
        WAITERS,
        "patch",
        "concurrent.futures.wait on a LangGraph pool's futures (the runner's wait for the "
        "first task to end, the executor's for all at exit) waits through a waiter whose "
        "lock and event are quiet; waits on other futures are left as they are",
        params=("fs", "return_when"),
    ),
    Seam(
        FUTURES_WAIT,
        "patch",
        "the runner waits for the first of a superstep's futures to end through it: when "
        "one of LangGraph's futures failed, that look at which had ended is a recorded "
        "read of each (each future's start and end write its key), so a search tries the "
        "look before and after each sibling's end; other waits are left as they are",
        params=("fs", "timeout", "return_when"),
    ),
    Seam(
        PANIC,
        "patch",
        "which error surfaces when two tasks failed, and the order of parallel "
        "interrupts, followed the order a set pops futures in (their memory addresses): "
        "_explore_order.ordered_panic is the same function taking the failed futures in "
        "an order the schedule chooses",
        params=("futs", "timeout_exc_cls", "panic", "handled_exception_ids", "handled_futures"),
        source=("fut = done.pop()", "interrupts.append(exc)", "inflight.pop().cancel()"),
    ),
)
