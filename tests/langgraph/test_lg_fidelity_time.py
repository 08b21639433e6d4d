"""Virtual time and work the harness cannot manage, on real LangGraph graphs (issue 40).

LangGraph's own suite, run with ``--flows-all``, changed outcome in two ways; each test
here is one of them, compared with what the graph does bare:

* A graph the test body streams itself (not through ``flows.run``) runs on a pool the
  harness does not manage: a node's ``time.sleep`` is real. LangGraph's
  ``test_stream_buffering_single_node`` times the stream with ``perf_counter``; bare it
  reads the sleep between the two custom chunks, and under the harness it read 0 (the
  virtual clock stood still while real time passed).
* An async node queries sqlite through aiosqlite under ``step_timeout``. aiosqlite's
  connection thread waits in a ``SimpleQueue`` bound at import. It was the C queue, so
  once the liveness guard found the thread blocked (0.25 real seconds and a
  ``FlowsWarning`` a connection) it ran outside the scheduler: the loop went idle while
  it answered, the clock jumped to the step timeout and the graph failed with
  ``TimeoutError`` where bare it finishes (LangGraph's
  ``test_parent_command_goto[sqlite_aio-...]``). Then its real work held the clock;
  now the class bound at import builds the queue the scheduler sees
  (queue_factory.py), so the thread is an ordinary flow thread and nothing stalls.

What is tested is how the clock treats real work it cannot see, not how much real time
passes: the nodes' real sleeps are faked (fake_real_time.py, through
``real_work.faked``: a real sleep returns at once), so the spans can be seconds and cost
nothing. The sqlite queries are real (milliseconds).
"""

from __future__ import annotations

import operator
import time
import warnings
from typing import Annotated, Any, TypedDict

import aiosqlite
import pytest
from fake_real_time import FakeRealTime
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph

from pytest_flows import FlowsWarning
from pytest_flows._internal.runtime import real_work

#: Seconds a node sleeps (faked where it would be real: it costs no real time).
NAP = 2.0


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


def _napping_graph() -> Any:
    def node(state: Notes) -> Notes:
        write = get_stream_writer()
        write("before")
        time.sleep(NAP)
        write("after")
        return {"notes": ["node"]}

    builder = StateGraph(Notes)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    return builder.compile()


def _timed_chunks(graph: Any) -> list[tuple[float, Any]]:
    """The stream's chunks, each with when it arrived; the node's sleep (faked) lasts
    until the chunk written before it has arrived, as a real sleep outlasts that."""
    fake = FakeRealTime(until_released=True)
    timed = []
    with real_work.faked(sleep=fake.sleep):
        start = time.perf_counter()
        for chunk in graph.stream({"notes": []}, stream_mode="custom"):
            timed.append((time.perf_counter() - start, chunk))
            fake.release()
    assert fake.slept == [NAP]  # a real sleep: the test's own pool is not managed
    return timed


def _parallel_napping_graph() -> Any:
    def nap(name: str) -> Any:
        def node(state: Notes) -> Notes:
            time.sleep(NAP)
            return {"notes": [name]}

        return node

    builder = StateGraph(Notes)
    for name in ("a", "b"):
        builder.add_node(name, nap(name))
        builder.add_edge(START, name)
    builder.add_node("c", nap("c"))
    builder.add_edge(["a", "b"], "c")
    builder.add_edge("c", END)
    return builder.compile()


def test_a_graph_the_test_streams_itself_shows_its_real_sleep_on_perf_counter(flows):
    bare_like = _timed_chunks(_napping_graph())

    # LangGraph's own assertion, scaled: the chunk after the sleep comes a sleep later.
    assert [chunk for _, chunk in bare_like] == ["before", "after"]
    assert bare_like[0][0] == 0.0
    assert bare_like[1][0] == pytest.approx(NAP, abs=1e-6)


def test_parallel_real_sleeps_count_once_and_one_after_another_add_up(flows):
    graph = _parallel_napping_graph()
    fake = FakeRealTime(side_by_side=2)  # a and b sleep at once, as on a real pool
    with real_work.faked(sleep=fake.sleep):
        start = time.perf_counter()
        graph.invoke({"notes": []})
        elapsed = time.perf_counter() - start

    # a and b sleep side by side on the pool, then c: two naps, as bare.
    assert fake.slept == [NAP] * 3
    assert elapsed == pytest.approx(2 * NAP, abs=1e-6)


def test_the_readings_are_the_same_on_every_run(flows):
    first = [at for at, _ in _timed_chunks(_napping_graph())]
    second = [at for at, _ in _timed_chunks(_napping_graph())]

    assert first == second == [0.0, NAP]  # the spans asked for, not what the OS took


def test_flows_run_of_the_same_graph_keeps_its_sleep_virtual(flows):
    # Through flows.run the pool is managed: the sleep costs nothing real, and the
    # clock moves by exactly the nap.
    wall = time.clock_gettime(time.CLOCK_MONOTONIC)
    before = flows.clock.monotonic()
    run = flows.run(_napping_graph(), {"notes": []})

    assert run.values["notes"] == ["node"]
    assert flows.clock.monotonic() - before == pytest.approx(NAP, abs=1e-6)
    assert time.clock_gettime(time.CLOCK_MONOTONIC) - wall < 5


#: A query sqlite spends real CPU time on (a few milliseconds), like a checkpointer's.
_COUNT = (
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20000) "
    "SELECT count(*) FROM c"
)


def _querying_graph(database: str) -> Any:
    async def count(state: Notes) -> Notes:
        async with aiosqlite.connect(database) as db:
            found = []
            for _ in range(3):
                async with db.execute(_COUNT) as cursor:
                    (n,) = await cursor.fetchone()
                found.append(str(n))
        return {"notes": found}

    builder = StateGraph(Notes)
    builder.add_node("count", count)
    builder.add_edge(START, "count")
    builder.add_edge("count", END)
    graph = builder.compile()
    graph.step_timeout = 1  # as LangGraph's test_parent_command_goto sets it
    return graph


def test_a_step_timeout_does_not_fire_while_aiosqlite_answers(flows, tmp_path):
    # aiosqlite's thread answers three queries; bare each takes milliseconds, far
    # inside the one-second step timeout.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FlowsWarning)
        run = flows.run(
            _querying_graph(str(tmp_path / "db.sqlite")),
            {"notes": []},
            asynchronous=True,
            raise_on_error=False,
        )

    assert run.error is None, run.error
    assert run.values["notes"] == ["20000"] * 3
    assert flows.clock.monotonic() < 1
    # Its connection thread waits for queries where the scheduler sees it: the liveness
    # guard never had to find it blocked (before: a warning and 0.25 real seconds), and
    # nothing ran outside the scheduler for the clock to wait for.
    assert [str(w.message) for w in caught if issubclass(w.category, FlowsWarning)] == []
    assert flows.scheduler.threads.real_work.held == []
    assert not any(line.startswith("clock held") for line in run.trace.lines())
