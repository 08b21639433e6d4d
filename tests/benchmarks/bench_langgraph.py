"""``flows.run`` of a 12-node LangGraph graph against the bare runtime, side by side in one run.

Not collected by pytest (``tests/benchmarks`` is in ``norecursedirs``); run it:

    .venv/bin/python tests/benchmarks/bench_langgraph.py

The graph: ``start`` fans out to 10 parallel nodes, joined by ``join`` (12 nodes, three
supersteps, one of them 10 tasks wide). Measured in alternating rounds (``BENCH_RUNS``
runs each):
  (1) ``flows.run`` in a test's session (a copy of the graph with the test's saver, the
      callbacks trace, the scheduler over LangGraph's pool threads);
  (2) the same graph's bare ``invoke`` with an ``InMemorySaver`` (pool threads, no harness);
  (1b) ``flows.run`` with the tasks run inline as in (3): the harness's own work
      (session, trace, copy, stream) without the threads it schedules;
  (3) LangGraph's own work with no threads: that ``invoke`` with the pool replaced by an
      executor that runs each task inline, as ``bench_breakdown.py`` measures crewAI's
      runtime alone: what no harness can save.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "langgraph"))
os.environ.update(LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false")

import lg_graphs
from langgraph.checkpoint.memory import InMemorySaver

from pytest_flows import FlowsSession

RUNS = int(os.environ.get("BENCH_RUNS", "60"))
ROUND = 5


def wall() -> float:
    # The harness makes time.perf_counter virtual; the OS clock stays real.
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def samples(fn: Callable[[], object], runs: int) -> list[float]:
    taken = []
    for _ in range(runs):
        started = wall()
        fn()
        taken.append(wall() - started)
    return taken


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
def no_threads() -> Iterator[None]:
    from langgraph.pregel import _executor

    @contextlib.contextmanager
    def inline(config: Any) -> Iterator[_Inline]:
        yield _Inline()

    original = _executor.get_executor_for_config
    _executor.get_executor_for_config = inline  # type: ignore[assignment]
    try:
        yield
    finally:
        _executor.get_executor_for_config = original  # type: ignore[assignment]


def main() -> None:
    graph = lg_graphs.parallel_builder(10).compile()
    assert len(graph.nodes) == 13  # 12 nodes and LangGraph's __start__
    bare = graph.copy(update={"checkpointer": InMemorySaver()})
    threads = iter(range(10**9))

    def invoke() -> None:
        bare.invoke({"notes": []}, {"configurable": {"thread_id": str(next(threads))}})

    expected = graph.invoke({"notes": []})
    with no_threads():
        assert bare.invoke({"notes": []}, {"configurable": {"thread_id": "x"}}) == expected
    rounds: list[tuple[float, float, float, float]] = []
    for _ in range(max(1, -(-RUNS // ROUND))):
        with FlowsSession(test_id="bench-langgraph") as session:
            assert session.run(graph, {"notes": []}).values == expected
            harnessed = statistics.median(samples(lambda: session.run(graph, {"notes": []}), ROUND))
            with no_threads():
                inline = statistics.median(
                    samples(lambda: session.run(graph, {"notes": []}), ROUND)
                )
        plain = statistics.median(samples(invoke, ROUND))
        with no_threads():
            alone = statistics.median(samples(invoke, ROUND))
        rounds.append((harnessed, inline, plain, alone))
    harnessed, inline, plain, alone = (
        statistics.median(c) * 1000 for c in zip(*rounds, strict=True)
    )
    print(
        f"12-node LangGraph graph, 10 parallel branches (medians over {len(rounds)} rounds "
        f"of {ROUND} runs, Python {sys.version.split()[0]}):"
    )
    for label, ms in (
        ("(1) flows.run", harnessed),
        ("(1b) flows.run, tasks inline (no threads)", inline),
        ("(2) bare invoke, InMemorySaver", plain),
        ("(3) LangGraph's own work, no threads", alone),
    ):
        print(f"  {label:<40} {ms:7.2f} ms  {ms / alone:5.2f}x of (3)")


if __name__ == "__main__":
    main()
