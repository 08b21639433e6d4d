"""What flows.run does per run that costs time, held to what it needs (see docs/langgraph.md,
Cost, and tests/benchmarks/bench_langgraph.py)."""

from __future__ import annotations

import lg_graphs
import pytest
from langgraph.pregel import Pregel

from pytest_flows.langgraph import interrupts


@pytest.fixture
def state_reads(monkeypatch):
    reads: list[str] = []
    read = Pregel.get_state

    def counted(self, config, **kwargs):
        reads.append(str(config["configurable"]["thread_id"]))
        return read(self, config, **kwargs)

    monkeypatch.setattr(Pregel, "get_state", counted)
    return reads


def test_a_finished_run_reads_its_final_state_once_with_a_human_bound(flows, human, state_reads):
    # The human's turn reads the state to find pending interrupts; a graph that waits on
    # none has finished, and that read is the final values (no second get_state).
    run = flows.run(lg_graphs.parallel_builder(3).compile(), {"notes": []})
    assert run.status == "finished"
    assert run.values["notes"][-1] == "join"
    assert state_reads == ["thread-1"]


def test_a_paused_run_reads_its_state_again_after_the_human_was_asked(flows, human, state_reads):
    # A human asked may change the thread's state (a scripted answer is the test's code):
    # the final values are read after it, not before.
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def review(state):
        return {"notes": [str(interrupt("approve?"))]}

    builder = StateGraph(lg_graphs.Notes)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    interrupts(human).on(node="review").pause()
    run = flows.run(builder.compile(), {"notes": []})
    assert run.status == "interrupted"
    assert [p.node for p in run.pending] == ["review"]
    assert state_reads == ["thread-1", "thread-1"]
