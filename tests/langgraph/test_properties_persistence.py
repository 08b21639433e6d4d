"""Crash-resume, time-travel and fork-isolation properties on graphs shaped like users',
under each durability, on the flows checkpointer; each can fail, and a failure that a
LangGraph bug explains names the upstream issue."""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any, TypedDict

import pytest
from hypothesis import strategies as st
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from test_store_graphs import GRAPHS, loop_graph

from pytest_flows.adapters import CrashPoint, FlowStore, FlowsUsageError
from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver
from pytest_flows.langgraph._properties import (
    GraphCase,
    assert_crash_resume,
    assert_fork_isolated,
    assert_time_travel,
    check_crash_resume,
    check_fork_isolation,
    check_time_travel,
    crash_points,
)

DURABILITIES = ["sync", "async", "exit"]


def case_of(name: str, durability: str, **kw: Any) -> GraphCase:
    build, inputs, answers = GRAPHS[name]
    return GraphCase(build, inputs, store=FlowStore(), answers=answers, durability=durability, **kw)


@pytest.mark.parametrize("durability", DURABILITIES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_crash_resume_holds_at_every_crash_point(name: str, durability: str) -> None:
    case = case_of(name, durability)

    points = list(crash_points(case))
    for point in points:
        assert_crash_resume(case, point)

    # exit writes once at the end (or at the interrupt); the others at every step
    assert len(points) >= (2 if durability == "exit" else 20)


@pytest.mark.parametrize("durability", DURABILITIES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_time_travel_holds_from_every_root_checkpoint(name: str, durability: str) -> None:
    check_time_travel(case_of(name, durability), max_examples=10)


@pytest.mark.parametrize("durability", DURABILITIES)
def test_fork_isolation_holds_for_any_update(durability: str) -> None:
    case = case_of("loop", durability)
    notes = st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=2)

    # under "exit" the run's one checkpoint is its last
    at = [0] if durability == "exit" else None

    check_fork_isolation(
        case,
        st.fixed_dictionaries({"notes": notes}),
        as_nodes=["a", "join"],
        checkpoints=at,
        max_examples=8,
    )


def test_check_crash_resume_draws_with_hypothesis() -> None:
    check_crash_resume(case_of("approval", "async"), max_examples=6)


# -- graphs the properties catch -----------------------------------------------------------
SENT: list[str] = []


class Mail(TypedDict):
    sent: int
    log: Annotated[list[str], operator.add]


def mailer() -> StateGraph[Any]:
    """Sends a mail (outside the state), then records how many went out: not safe to re-run."""

    def send(state: Mail) -> dict[str, Any]:
        SENT.append("mail")
        return {"sent": len(SENT), "log": ["send"]}

    def done(state: Mail) -> dict[str, Any]:
        return {"log": ["done"]}

    builder = StateGraph(Mail)
    builder.add_node("send", send)
    builder.add_node("done", done)
    builder.add_edge(START, "send")
    builder.add_edge("send", "done")
    builder.add_edge("done", END)
    return builder


@pytest.fixture(autouse=True)
def _no_mail() -> None:
    SENT.clear()


def _fresh_counter_case(durability: str) -> GraphCase:
    # each run starts with an empty outbox, as a fresh process would
    def run(graph: Any, value: Any, config: Any, mode: str) -> Any:
        if isinstance(value, dict):  # a run from the inputs: a fresh process, no mail sent
            SENT.clear()
        return graph.invoke(value, config, durability=mode)

    return GraphCase(
        mailer, {"sent": 0, "log": []}, store=FlowStore(), durability=durability, run=run
    )


def test_a_step_that_is_not_safe_to_rerun_fails_crash_resume_with_a_reproducer() -> None:
    case = _fresh_counter_case("sync")

    with pytest.raises(AssertionError) as failure:
        assert_crash_resume(case, CrashPoint(4, "before"))

    text = str(failure.value)
    assert (
        "crash-resume equivalence fails for LangGraph (durability='sync'): crashed before save 4"
        in text
    )
    assert "values.sent: 1 came back as 2" in text
    assert "not safe to run again" in text
    assert (
        "assert_crash_resume(flow_store, graph, inputs, crash=CrashPoint(save=4, when='before')"
        in text
    )


def test_check_crash_resume_shrinks_to_the_first_failing_point() -> None:
    # sync: each write lands before the next step. `send` runs after save 3 (the step-0
    # checkpoint); its writes are save 4: crashing just before them loses a sent mail.
    case = _fresh_counter_case("sync")

    with pytest.raises(AssertionError) as failure:
        check_crash_resume(case, when=["before"], max_examples=15)

    saves = re.search(r"crashed before save (\d+)", str(failure.value))
    assert saves is not None
    assert int(saves.group(1)) == 4


def test_state_kept_outside_the_graph_fails_time_travel() -> None:
    with pytest.raises(AssertionError, match=r"checkpoint time travel fails .* from checkpoint 1"):
        assert_time_travel(_fresh_counter_case("async"), 1)


def test_a_saver_that_rewrites_history_fails_fork_isolation() -> None:
    class Rewriting(FlowsCheckpointSaver):
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            if metadata.get("source") == "update":
                self.store.discard(self.store.checkpoints()[0])
            return super().put(config, checkpoint, metadata, new_versions)

    saver = Rewriting(store=FlowStore())
    case = GraphCase(loop_graph, GRAPHS["loop"][1], saver=saver)

    with pytest.raises(AssertionError, match=r"(?s)fork isolation fails .*was removed by the fork"):
        assert_fork_isolated(case, 2, {"notes": ["x"]}, as_node="a")


def test_fork_isolation_returns_the_forks_checkpoint_with_its_parent() -> None:
    case = case_of("loop", "async")

    fork_id = assert_fork_isolated(case, 2, {"notes": ["x"]}, as_node="a")

    record = case.store.checkpoint(fork_id)
    assert record.branch.endswith("~2")
    assert record.state is not None and record.state["notes"][-1] == "x"


# -- a LangGraph bug the time-travel property hits ---------------------------------------------
RAN: list[str] = []


class Review(TypedDict, total=False):
    ran: Annotated[list[str], operator.add]
    answer: str


def reviewed_subgraph() -> StateGraph[Any]:
    """The reproduction of langgraph#8458: a subgraph a -> b -> c -> review(interrupt)."""

    def step(name: str) -> Any:
        def run(state: Review) -> dict[str, Any]:
            RAN.append(name)
            return {"ran": [name]}

        return run

    def review(state: Review) -> dict[str, Any]:
        return {"answer": interrupt("approve?")}

    sub = StateGraph(Review)
    for name in "abc":
        sub.add_node(name, step(name))
    sub.add_node("review", review)
    sub.add_edge(START, "a")
    sub.add_edge("a", "b")
    sub.add_edge("b", "c")
    sub.add_edge("c", "review")
    sub.add_edge("review", END)
    parent = StateGraph(Review)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    parent.add_edge("sub", END)
    return parent


@pytest.mark.xfail(
    reason="langgraph#8458: time travel into a subgraph re-runs it from __start__", strict=True
)
@pytest.mark.parametrize("durability", ["sync", "async"])
def test_time_travel_into_a_subgraph(durability: str) -> None:
    case = GraphCase(
        reviewed_subgraph, {"ran": []}, store=FlowStore(), answers=["ok"], durability=durability
    )

    check_time_travel(case, subgraphs=True, max_examples=10)


def test_the_subgraph_time_travel_failure_names_the_upstream_issue() -> None:
    case = GraphCase(reviewed_subgraph, {"ran": []}, store=FlowStore(), answers=["ok"])
    history = case.history(case.baseline().thread_id, subgraphs=True)
    inside = next(
        i
        for i, s in enumerate(history)
        if s.config["configurable"]["checkpoint_ns"] and s.next == ("b",)
    )

    with pytest.raises(AssertionError) as failure:
        assert_time_travel(case, inside, subgraphs=True)

    text = str(failure.value)
    assert "in subgraph 'sub'" in text
    assert "This is LangGraph's bug langgraph#8458" in text
    assert "subgraphs=True" in text  # the reproducer


def test_bad_arguments_are_usage_errors_naming_the_fix() -> None:
    with pytest.raises(FlowsUsageError, match=r"durability='fast'.*'sync', 'async'"):
        case_of("loop", "fast")
    with pytest.raises(FlowsUsageError, match="pass a compiled graph, a StateGraph builder"):
        GraphCase(lambda: 42, {})
    with pytest.raises(FlowsUsageError, match=r"wrote \d+ checkpoint\(s\); pass 0\.\."):
        assert_time_travel(case_of("loop", "sync"), 99)
