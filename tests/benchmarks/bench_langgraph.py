"""``flows.run`` of a 12-node LangGraph graph against the bare runtime, side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_langgraph.py
    BENCH_PHASES=1 .venv/bin/python tests/benchmarks/bench_langgraph.py  # + phases
    BENCH_TREES=before=/tmp/lgbefore,after=. .venv/bin/python tests/benchmarks/bench_langgraph.py

The graph: ``start`` fans out to 10 parallel nodes, joined by ``join`` (12 nodes, three
supersteps, one of them 10 tasks wide). Measured in alternating rounds (``BENCH_RUNS``
runs each), in wall time and in CPU time of the whole process (every thread: a load that
takes the CPU away between two hand-offs does not count), with the load average:
  (1) ``flows.run`` in a test's session (a copy of the graph with the test's saver, the
      callbacks trace, the scheduler over LangGraph's pool, whose worker loops run on
      the scheduler's workers kept from run to run: no thread starts after the first run);
  (1b) ``flows.run`` with the tasks run inline as in (3): the harness's own work
      (session, trace, copy, stream) without the threads it schedules;
  (1c) an experiment, not what ``flows.run`` does: LangGraph's pool replaced by the
      scheduler's own workers, each job a piece of work of its own (no queue, no
      ``max_workers``: not faithful), the pool's bookkeeping left out;
  (2) the same graph's bare ``invoke`` with an ``InMemorySaver`` (LangGraph makes a pool
      of threads per invoke, no harness);
  (2b) that ``invoke`` with one pool kept for every run: what (2) pays to start threads;
  (2c) (3) streamed with the modes ``flows.run`` asks for (updates, values, checkpoints);
  (3) LangGraph's own work with no threads: that ``invoke`` with the pool replaced by an
      executor that runs each task inline, as ``bench_breakdown.py`` measures crewAI's
      runtime alone: what no harness can save.

``BENCH_PHASES=1`` adds a breakdown of (1) in CPU time per phase (timers around the
adapter's steps, in separate runs: the timers cost a little) and counts per run: baton
hand-offs, threads started, scheduler-managed locks made, OS context switches.

``BENCH_TREES=name=path,...`` compares source trees (e.g. the commit before a change,
``git archive <commit> | tar -x -C /tmp/lgbefore``) in one run: each round runs every
tree once in a fresh process (``PYTHONPATH=<path>``), alternating, and the table shows
the medians side by side.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "langgraph"))
os.environ.update(LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false")

RUNS = int(os.environ.get("BENCH_RUNS", "60"))
ROUND = 5
INPUT = {"notes": []}
LABELS = {
    "1": "(1) flows.run",
    "1b": "(1b) flows.run, tasks inline (no threads)",
    "1c": "(1c) flows.run, a job per worker (experiment)",
    "2": "(2) bare invoke, InMemorySaver",
    "2b": "(2b) bare invoke, one pool for all runs",
    "2c": "(2c) (3) with flows.run's stream modes",
    "3": "(3) LangGraph's own work, no threads",
}


def wall() -> float:
    # The harness makes time.perf_counter virtual; the OS clocks stay real.
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def cpu() -> float:
    return time.clock_gettime(time.CLOCK_PROCESS_CPUTIME_ID)


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` calls of ``fn``."""
    walls, cpus = [], []
    for _ in range(runs):
        started, spent = wall(), cpu()
        fn()
        cpus.append(cpu() - spent)
        walls.append(wall() - started)
    return statistics.median(walls), statistics.median(cpus)


class _Inline(concurrent.futures.Executor):
    """Runs each submitted call at once, on the caller's thread."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


@contextlib.contextmanager
def executor(make: Callable[[Any], contextlib.AbstractContextManager[Any]]) -> Iterator[None]:
    """LangGraph's sync runs take their pool from ``make(config)`` for the block."""
    from langgraph.pregel import _executor

    original = _executor.get_executor_for_config
    _executor.get_executor_for_config = make  # type: ignore[assignment]
    try:
        yield
    finally:
        _executor.get_executor_for_config = original  # type: ignore[assignment]


def no_threads() -> contextlib.AbstractContextManager[None]:
    @contextlib.contextmanager
    def inline(config: Any) -> Iterator[_Inline]:
        yield _Inline()

    return executor(inline)


@contextlib.contextmanager
def one_pool() -> Iterator[None]:
    from langchain_core.runnables.config import ContextThreadPoolExecutor

    with ContextThreadPoolExecutor() as pool:

        @contextlib.contextmanager
        def kept(config: Any) -> Iterator[Any]:
            yield pool

        with executor(kept):
            yield


class _KeptWorkers(concurrent.futures.Executor):
    """Each call on a worker of the test's scheduler (idle ones are reused), in a copy of
    the caller's context as LangGraph's pool runs it. No ``max_workers``: an experiment."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        import contextvars

        from pytest_flows._internal.runtime.participants import current

        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        context = contextvars.copy_context()

        def job() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(context.run(fn, *args, **kwargs))
                except BaseException as exc:
                    future.set_exception(exc)

        me = current()
        assert me is not None, "(1c) runs only under flows.run"
        me.sched.submit(job)
        return future


def kept_workers() -> contextlib.AbstractContextManager[None]:
    @contextlib.contextmanager
    def kept(config: Any) -> Iterator[_KeptWorkers]:
        yield _KeptWorkers()

    return executor(kept)


def variants(graph: Any) -> dict[str, Callable[[], contextlib.AbstractContextManager[Any]]]:
    """Each measured call, as a context that yields it ready to time."""
    from langgraph.checkpoint.memory import InMemorySaver

    from pytest_flows import FlowsSession

    bare = graph.copy(update={"checkpointer": InMemorySaver()})
    threads = itertools.count()

    def invoke() -> None:
        bare.invoke(INPUT, {"configurable": {"thread_id": str(next(threads))}})

    def stream() -> None:
        config = {"configurable": {"thread_id": str(next(threads))}}
        modes = ["updates", "values", "checkpoints"]
        for _ in bare.stream(INPUT, config, stream_mode=modes):
            pass

    @contextlib.contextmanager
    def harnessed(pool: contextlib.AbstractContextManager[None]) -> Iterator[Callable[[], object]]:
        with FlowsSession(test_id="bench-langgraph") as session, pool:
            session.run(graph, INPUT)  # the adapter's first-run set-up is not measured
            yield lambda: session.run(graph, INPUT)

    @contextlib.contextmanager
    def plain(
        fn: Callable[[], None], pool: contextlib.AbstractContextManager[None]
    ) -> Iterator[Callable[[], object]]:
        with pool:
            yield fn

    return {
        "1": lambda: harnessed(contextlib.nullcontext()),
        "1b": lambda: harnessed(no_threads()),
        "1c": lambda: harnessed(kept_workers()),
        "2": lambda: plain(invoke, contextlib.nullcontext()),
        "2b": lambda: plain(invoke, one_pool()),
        "2c": lambda: plain(stream, no_threads()),
        "3": lambda: plain(invoke, no_threads()),
    }


def one_round(graph: Any, runs: int) -> dict[str, tuple[float, float]]:
    found = {}
    for key, make in variants(graph).items():
        with make() as fn:
            fn()
            found[key] = timed(fn, runs)
    return found


def check(graph: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from pytest_flows import FlowsSession

    expected = graph.invoke(INPUT)
    with no_threads():
        bare = graph.copy(update={"checkpointer": InMemorySaver()})
        assert bare.invoke(INPUT, {"configurable": {"thread_id": "x"}}) == expected
    with FlowsSession(test_id="bench-langgraph") as session:
        assert session.run(graph, INPUT).values == expected


def the_graph() -> Any:
    import lg_graphs

    graph = lg_graphs.parallel_builder(10).compile()
    assert len(graph.nodes) == 13  # 12 nodes and LangGraph's __start__
    return graph


def report(results: dict[str, dict[str, list[tuple[float, float]]]], loads: list[float]) -> None:
    rounds = max(len(r) for per in results.values() for r in per.values())
    print(
        f"12-node LangGraph graph, 10 parallel branches: medians over {rounds} rounds of "
        f"{ROUND} runs, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load "
        f"(1-min average) {min(loads):.1f}..{max(loads):.1f}"
    )
    trees = list(results)
    head = "".join(f"  {t + ' wall':>12} {'cpu':>7} {'x(3)':>5}" for t in trees)
    print(f"  {'':<42}{head}")
    for key, label in LABELS.items():
        cells = []
        for tree in trees:
            taken = results[tree].get(key)
            if not taken:
                cells.append(f"  {'-':>12} {'-':>7} {'':>5}")
                continue
            w, c = (statistics.median(x[i] for x in taken) * 1000 for i in (0, 1))
            alone = statistics.median(x[1] for x in results[tree]["3"]) * 1000
            cells.append(f"  {w:9.2f} ms {c:7.2f} {c / alone:5.2f}")
        print(f"  {label:<42}{''.join(cells)}")
    print("  (x(3): CPU time of the row over CPU time of (3), the same tree's run)")


def compare_trees(spec: str) -> None:
    trees = dict(part.split("=", 1) for part in spec.split(","))
    results: dict[str, dict[str, list[tuple[float, float]]]] = {t: {} for t in trees}
    loads = []
    for _ in range(max(1, -(-RUNS // ROUND))):
        for name, path in trees.items():
            loads.append(os.getloadavg()[0])
            env = {**os.environ, "PYTHONPATH": str(Path(path).resolve()), "BENCH_CHILD": "1"}
            env.pop("BENCH_TREES", None)
            out = subprocess.run(
                [sys.executable, __file__], env=env, capture_output=True, text=True, check=True
            ).stdout
            for key, pair in json.loads(out.splitlines()[-1]).items():
                results[name].setdefault(key, []).append(tuple(pair))
    report(results, loads)
    for name, path in trees.items():
        print(f"  {name}: {Path(path).resolve()}")


# -- the phases of (1) -----------------------------------------------------------------


def phases(graph: Any, runs: int, plain: float, alone: float) -> None:
    """CPU per phase of ``flows.run`` (timers around the adapter's steps) and counts; the
    stream is split with ``plain`` and ``alone``, the CPU ms of (2b) and (3) measured
    before (flows.run starts no pool threads after its first run, as (2b))."""
    from pytest_flows import FlowsSession
    from pytest_flows._internal import session as session_module
    from pytest_flows._internal.runtime import stdlib_seams, threads
    from pytest_flows.langgraph import _adapter, _tracing

    spent: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    undo: list[Callable[[], None]] = []

    def wrap(owner: Any, name: str, label: str) -> None:
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        function = getattr(original, "__func__", original)
        if getattr(getattr(function, "__code__", None), "co_flags", 0) & 0x80:  # a coroutine

            async def timer(*args: Any, **kwargs: Any) -> Any:
                started = cpu()
                try:
                    return await function(*args, **kwargs)
                finally:
                    spent[label] += cpu() - started
        else:

            def timer(*args: Any, **kwargs: Any) -> Any:
                started = cpu()
                try:
                    return function(*args, **kwargs)
                finally:
                    spent[label] += cpu() - started

        setattr(owner, name, timer)
        undo.append(lambda: setattr(owner, name, original))

    def count(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def counter(*args: Any, **kwargs: Any) -> Any:
            counts[label] += 1
            return original(*args, **kwargs)

        setattr(owner, name, counter)
        undo.append(lambda: setattr(owner, name, original))

    wrap(FlowsSession, "run", "total")
    wrap(_adapter.LangGraphAdapter, "run", "adapter")
    wrap(_adapter.LangGraphAdapter, "_graph_for", "copy")
    wrap(_adapter, "_stored_ids_first", "stored")
    wrap(_adapter, "_drive", "stream")
    wrap(_adapter, "_finish", "finish")
    wrap(session_module, "_normalized", "normalize")
    for method in ("on_chain_start", "on_chain_end", "on_chain_error"):
        wrap(_tracing.Handler, method, "callbacks")
    count(threads, "_real_thread_start", "threads started")
    count(stdlib_seams, "_real_thread_start", "threads started")
    wrap(threads, "_real_thread_start", "starts")  # the OS thread, its bootstrap
    count(stdlib_seams, "_real_lock", "scheduler-managed locks made")
    handed: dict[int, float] = {}
    waited: list[float] = []
    hand = threads.ThreadScheduler._hand

    def timed_hand(self: Any, nxt: Any) -> bool:
        handed[id(nxt)] = wall()
        return hand(self, nxt)

    def timed_park(self: Any, me: Any) -> None:
        # ThreadScheduler._park, with the time from the hand-off to this thread running
        me._wake.acquire()
        since = handed.pop(id(me), None)
        if since is not None:
            waited.append(wall() - since)
        if not me.let_go:
            self._check_abort(me)

    for name, value in (("_hand", timed_hand), ("_park", timed_park)):
        original = threads.ThreadScheduler.__dict__[name]
        setattr(threads.ThreadScheduler, name, value)
        undo.append(
            lambda name=name, original=original: setattr(  # type: ignore[misc]
                threads.ThreadScheduler, name, original
            )
        )
    try:
        with FlowsSession(test_id="bench-langgraph") as session:
            session.run(graph, INPUT)
            spent.clear()
            counts.clear()
            waited.clear()
            switches = session.scheduler.threads.switches
            before = resource.getrusage(resource.RUSAGE_SELF)
            for _ in range(runs):
                session.run(graph, INPUT)
            after = resource.getrusage(resource.RUSAGE_SELF)
            counts["baton hand-offs"] = session.scheduler.threads.switches - switches
    finally:
        for step in reversed(undo):
            step()
    counts["OS context switches (voluntary)"] = after.ru_nvcsw - before.ru_nvcsw
    counts["OS context switches (involuntary)"] = after.ru_nivcsw - before.ru_nivcsw
    ms = {k: v / runs * 1000 for k, v in spent.items()}
    rows = [
        ("session and loop: set-up, tear-down", ms["total"] - ms["adapter"] - ms["normalize"]),
        ("Pregel.copy with the test's saver", ms["copy"]),
        ("stored checkpoint lookup (ids after it)", ms["stored"]),
        ("graph.stream:", ms["stream"]),
        ("  LangGraph's own work, as in (3)", alone),
        ("  LangGraph's pool but its thread starts, bare: (2b)-(3)", plain - alone),
        ("  the trace's callbacks", ms["callbacks"]),
        (
            "  the harness's threads, hand-offs, locks (rest)",
            ms["stream"] - ms["callbacks"] - plain,
        ),
        ("    of which starting OS threads", ms.get("starts", 0.0)),
        ("get_state and the run's last lines", ms["finish"]),
        (
            "adapter: the rest (seams, trace lines)",
            ms["adapter"] - ms["copy"] - ms["stored"] - ms["stream"] - ms["finish"],
        ),
        ("trace normalization", ms["normalize"]),
    ]
    print(
        f"\nwhere (1) spends its CPU time ({runs} runs, timers on; load {os.getloadavg()[0]:.1f}):"
    )
    for label, value in rows:
        print(f"  {label:<52} {value:6.2f} ms")
    print(f"  {'total':<52} {ms['total']:6.2f} ms")
    print(f"  (wall) baton hand-offs, from handing to running: {sum(waited) / runs * 1000:.2f} ms")
    print("per run:")
    for label, value in sorted(counts.items()):
        print(f"  {label:<52} {value / runs:6.1f}")


def main() -> None:
    if os.environ.get("BENCH_TREES"):
        compare_trees(os.environ["BENCH_TREES"])
        return
    graph = the_graph()
    if os.environ.get("BENCH_CHILD"):
        print(json.dumps(one_round(graph, ROUND)))
        return
    check(graph)
    results: dict[str, list[tuple[float, float]]] = {}
    loads = []
    for _ in range(max(1, -(-RUNS // ROUND))):
        loads.append(os.getloadavg()[0])
        for key, pair in one_round(graph, ROUND).items():
            results.setdefault(key, []).append(pair)
    report({"": results}, loads)
    if os.environ.get("BENCH_PHASES"):
        plain, alone = (statistics.median(c for _, c in results[k]) * 1000 for k in ("2b", "3"))
        phases(graph, RUNS, plain, alone)


if __name__ == "__main__":
    main()
