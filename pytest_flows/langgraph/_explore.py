"""What exploring a LangGraph graph needs beyond running it.

A sync graph runs its parallel nodes on a ``ThreadPoolExecutor`` that LangGraph
(through langchain-core's ``get_executor_for_config``) makes for each run and shuts
down at its end, joining each worker. The pool keeps its workers in a ``set``, so
the join order follows the threads' memory addresses: the same schedule then gives
runs with different choice points at their end (the joiner is ready when one worker
ends or another), and ``explore()`` stopped with "ran differently from the run it was
derived from". :func:`ordered_pool_joins` makes the set iterate in start order for
the test's length: the program's behaviour is unchanged (join order has no effect
but on who waits when), only now the same under every run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = [
    "JoinOrder",
    "exploration_seams",
    "mutated_fields",
    "mutation_check",
    "ordered_pool_joins",
    "recorded_store",
    "store_keys",
]


class JoinOrder(set):  # type: ignore[type-arg]
    """A set of threads that iterates in the order they were added."""

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__()
        self._order: list[Any] = []
        for item in items:
            self.add(item)

    def add(self, item: Any) -> None:
        if item not in self:
            self._order.append(item)
        super().add(item)

    def discard(self, item: Any) -> None:
        super().discard(item)
        if item in self._order:
            self._order.remove(item)

    def remove(self, item: Any) -> None:
        super().remove(item)
        self._order.remove(item)

    def clear(self) -> None:
        super().clear()
        self._order.clear()

    def __iter__(self) -> Iterator[Any]:
        return iter([item for item in self._order if item in self])


def ordered_pool_joins() -> contextlib.AbstractContextManager[None]:
    """For the block, every pool LangGraph makes (langchain-core's
    ``ContextThreadPoolExecutor``) joins its workers in start order."""
    from concurrent.futures import ThreadPoolExecutor

    from pytest_flows.langgraph._explore_pool import quiet_pool
    from pytest_flows.langgraph._explore_seams import POOL_INIT
    from pytest_flows.langgraph._kept_pool import keep_workers
    from pytest_flows.langgraph._seams import SEAMS

    made = ThreadPoolExecutor.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        if type(self).__module__.startswith("langchain_core."):
            self._threads = JoinOrder(self._threads)
            quiet_pool(self)
            keep_workers(self)  # its worker loops run on the scheduler's kept workers

    return SEAMS[POOL_INIT].replace(__init__)


#: Source files whose frames are not the user's (the ``where`` of an access).
_INTERNAL = ("/langgraph/", "/langchain_core/", "/pytest_flows/", "/concurrent/", "/asyncio/")


def _where() -> str:
    import sys

    frame: Any = sys._getframe(3)
    while frame is not None and any(p in frame.f_code.co_filename for p in _INTERNAL):
        frame = frame.f_back
    if frame is None:
        return ""
    return f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"


def _node() -> str:
    """The LangGraph node running now (its config's metadata), or ""."""
    try:
        from langgraph.config import get_config

        return str(get_config().get("metadata", {}).get("langgraph_node", ""))
    except Exception:  # outside a node: no runnable context
        return ""


def store_keys(op: Any) -> list[tuple[str, bool]]:
    """The access keys one store op touches, each with whether it writes.

    A put or delete writes its item and every namespace prefix above it; a search or a
    namespace listing reads the prefix it lists: so a search is ordered against every
    put below its prefix (and two puts in one namespace against each other: coarser
    than needed, never unsound)."""
    from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

    if isinstance(op, GetOp):
        return [("store:" + "/".join((*op.namespace, op.key)), False)]
    if isinstance(op, PutOp):
        keys = [("store:" + "/".join((*op.namespace, op.key)), True)]
        for end in range(len(op.namespace) + 1):
            keys.append(("store:" + "/".join(op.namespace[:end]) + "/*", True))
        return keys
    if isinstance(op, SearchOp):
        return [("store:" + "/".join(op.namespace_prefix) + "/*", False)]
    if isinstance(op, ListNamespacesOp):
        return [("store:/*", False)]
    return [("store:/*", True)]  # an op this version does not know: order it with all


def _note(ops: Any) -> Any:
    from pytest_flows.adapters import record_access, switch_point

    ops = list(ops)
    where, node = _where(), _node()
    for op in ops:
        switch_point("store")
        for key, write in store_keys(op):
            record_access(key, write=write, where=where, method=node)
    return ops


@contextlib.contextmanager
def recorded_store() -> Iterator[None]:
    """For the block, every op on an ``InMemoryStore`` (LangGraph's ``store=``) is a
    switch point and an access of its key, as a ``flow.state`` field is for crewAI."""
    from langgraph.store.memory import InMemoryStore

    from pytest_flows.langgraph._explore_seams import STORE_ABATCH, STORE_BATCH
    from pytest_flows.langgraph._seams import SEAMS

    batch, abatch = InMemoryStore.batch, InMemoryStore.abatch

    def recorded_batch(self: Any, ops: Any) -> Any:
        return batch(self, _note(ops))

    async def recorded_abatch(self: Any, ops: Any) -> Any:
        return await abatch(self, _note(ops))

    with (
        SEAMS[STORE_BATCH].replace(recorded_batch),
        SEAMS[STORE_ABATCH].replace(recorded_abatch),
    ):
        yield


def fresh_priority_per_job() -> contextlib.AbstractContextManager[None]:
    """Under a seed, a pool worker draws a new priority for each job it takes.

    The seeded scheduler runs the ready thread of highest priority, each thread drawing
    one per piece of work (PCT). The harness's own pool draws per job; a
    ``ThreadPoolExecutor``'s workers drew once: the worker that took a superstep's first
    node outranked its idle siblings at every switch point, took the next node too, and
    no seed ever interleaved two parallel nodes (16 of 16 seeds gave one order).
    """
    from concurrent.futures import thread

    from pytest_flows.adapters import current_participant
    from pytest_flows.langgraph._explore_pool import is_langgraph_job, job_taken
    from pytest_flows.langgraph._explore_seams import POOL_JOB
    from pytest_flows.langgraph._seams import SEAMS

    run = thread._WorkItem.run

    def run_job(self: Any) -> None:
        me = current_participant()
        # a job of a LangGraph pool (its worker may not be in the pool's set yet: a new
        # worker runs from its start, before submit() adds it)
        if me is not None and not me.sched.aborted and is_langgraph_job(self):
            if me.sched.seed != 0:
                me.sched.redraw(me)  # the scheduler's seeded draws, as its own pool does
            job_taken(self)
        run(self)

    return SEAMS[POOL_JOB].replace(run_job)


@contextlib.contextmanager
def exploration_seams() -> Iterator[None]:
    """What a test of a LangGraph graph runs under, for seeds and explore() alike."""
    with (
        ordered_pool_joins(),
        quiet_runner(),
        fresh_priority_per_job(),
        recorded_store(),
        mutation_check(),
    ):
        yield


@contextlib.contextmanager
def quiet_runner() -> Iterator[None]:
    """The runner's per-superstep bookkeeping and a sync stream's queue take their
    locks quietly (see ``_explore_pool``)."""
    import concurrent.futures
    from concurrent.futures import ALL_COMPLETED, _base

    from langgraph._internal._queue import SyncQueue  # type: ignore[attr-defined]
    from langgraph.pregel._runner import FuturesDict

    from pytest_flows.langgraph._explore_order import (
        looked_at,
        ordered_panic,
        recorded_stream,
        recorded_superstep,
        superstep_waits,
    )
    from pytest_flows.langgraph._explore_pool import (
        quiet_runner_parts,
        quiet_stream_queue,
        quiet_waiter,
    )
    from pytest_flows.langgraph._explore_seams import (
        FUTURES_INIT,
        FUTURES_WAIT,
        PANIC,
        STREAM_QUEUE_INIT,
        WAITERS,
    )
    from pytest_flows.langgraph._seams import SEAMS

    made_futures, made_queue = FuturesDict.__init__, SyncQueue.__init__
    made_waiter = _base._create_and_install_waiters  # type: ignore[attr-defined]

    def install_waiters(fs: Any, return_when: Any) -> Any:
        waiter = made_waiter(fs, return_when)
        quiet_waiter(fs, waiter)
        return waiter

    waited = concurrent.futures.wait

    def wait(fs: Any, timeout: float | None = None, return_when: Any = ALL_COMPLETED) -> Any:
        superstep_waits(fs)
        found = waited(fs, timeout, return_when)
        looked_at(fs, return_when)
        return found

    def futures_init(self: Any, *args: Any, **kwargs: Any) -> None:
        made_futures(self, *args, **kwargs)
        quiet_runner_parts(self)
        recorded_superstep(self)

    def queue_init(self: Any, *args: Any, **kwargs: Any) -> None:
        made_queue(self, *args, **kwargs)
        quiet_stream_queue(self)
        recorded_stream(self)

    with (
        SEAMS[FUTURES_INIT].replace(futures_init),
        SEAMS[STREAM_QUEUE_INIT].replace(queue_init),
        SEAMS[WAITERS].replace(install_waiters),
        SEAMS[FUTURES_WAIT].replace(wait),
        SEAMS[PANIC].replace(ordered_panic),
    ):
        yield


def _fields(value: Any) -> dict[str, Any] | None:
    """The fields of a node's input state (a dict, or an object's attributes)."""
    if isinstance(value, dict):
        return value
    found = getattr(value, "__dict__", None)
    return found if isinstance(found, dict) else None


def _snapshot(value: Any) -> dict[str, Any]:
    import copy

    taken: dict[str, Any] = {}
    for key, field in (_fields(value) or {}).items():
        if isinstance(field, str | int | float | bool | type(None) | bytes):
            continue  # immutable: nothing to mutate in place
        try:
            taken[str(key)] = copy.deepcopy(field)
        except Exception:  # a value that cannot be copied is not checked
            continue
    return taken


def mutated_fields(value: Any, before: dict[str, Any]) -> list[str]:
    """The fields of ``value`` that differ from their snapshot ``before``."""
    now = _fields(value) or {}
    changed = []
    for key, old in before.items():
        try:
            differs = bool(now.get(key) != old)
        except Exception:  # a comparison that fails says nothing
            differs = False
        if differs:
            changed.append(key)
    return changed


def _checking() -> bool:
    from pytest_flows.adapters import current_participant

    me = current_participant()
    return me is not None and me.sched.chooser is not None


def _report(task: Any, keys: list[str]) -> None:
    import warnings

    from pytest_flows.adapters import FlowsWarning, record_access

    node = str(getattr(task, "name", "?"))
    for key in keys:
        record_access(f"state.{key}", write=True, where="in place", method=node)
    listed = ", ".join(f"state[{k!r}]" for k in keys)
    warnings.warn(
        FlowsWarning(
            f"LangGraph node {node!r} mutated {listed} in place: parallel siblings see it "
            "in completion order, and a resume from a checkpoint never does (a checkpoint "
            "holds the updates nodes return, not what they changed in place). Return the "
            f"change as an update instead, e.g. return {{{keys[0]!r}: [...]}} with a "
            "reducer."
        ),
        stacklevel=2,
    )


@contextlib.contextmanager
def mutation_check() -> Iterator[None]:
    """For the block, while a schedule is explored or recorded, each node's input is
    snapshot before its task and compared after: a change is reported (a FlowsWarning)
    and recorded as the node's write of ``state.<key>``."""
    from langgraph.pregel import _retry

    from pytest_flows.langgraph._explore_seams import ARUN_TASK, RUN_TASK
    from pytest_flows.langgraph._explore_shared import superstep_touched
    from pytest_flows.langgraph._seams import SEAMS

    run, arun = _retry.run_with_retry, _retry.arun_with_retry  # what _runner imported

    def checked(task: Any, *args: Any, **kwargs: Any) -> Any:
        if not _checking():
            return run(task, *args, **kwargs)
        superstep_touched(task)
        before = _snapshot(task.input)
        try:
            return run(task, *args, **kwargs)
        finally:
            changed = mutated_fields(task.input, before)
            if changed:
                _report(task, changed)

    async def achecked(task: Any, *args: Any, **kwargs: Any) -> Any:
        if not _checking():
            return await arun(task, *args, **kwargs)
        superstep_touched(task)
        before = _snapshot(task.input)
        try:
            return await arun(task, *args, **kwargs)
        finally:
            changed = mutated_fields(task.input, before)
            if changed:
                _report(task, changed)

    with SEAMS[RUN_TASK].replace(checked), SEAMS[ARUN_TASK].replace(achecked):
        yield
