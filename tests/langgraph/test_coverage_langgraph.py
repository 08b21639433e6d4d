"""--flows-cov on LangGraph graphs, end to end: nodes, router labels, Send targets,
Command destinations and a subgraph's nodes, in the terminal report, JSON and HTML."""

from __future__ import annotations

import json

import langchain_core.tracers.context
import langgraph.graph
import pytest

import pytest_flows.langgraph._adapter
import pytest_flows.langgraph._graph

# Imported here, not first inside the in-process runs (pytester unloads what a run imported).
assert langgraph.graph.StateGraph
assert langchain_core.tracers.context.register_configure_hook  # holds the adapter's hook
assert pytest_flows.langgraph._adapter.ADAPTER
assert pytest_flows.langgraph._graph.graph_of

GRAPHS = """
import operator
from typing import Annotated, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send


class State(TypedDict):
    n: int
    notes: Annotated[list[str], operator.add]


def route(state: State) -> Literal["again", "done"]:
    return "again" if state["n"] < 3 else "done"


def fan(state: State) -> list[Send]:
    return [Send("w", {"n": i, "notes": []}) for i in range(2)]


def hand_over(state: State) -> Command[Literal["sub", "inc"]]:
    return Command(goto="sub" if state["n"] >= 3 else "inc")


def build():
    inner = StateGraph(State)
    inner.add_node("x", lambda s: {"notes": ["x"]})
    inner.add_node("y", lambda s: {"notes": ["y"]})
    inner.add_edge(START, "x")
    inner.add_edge("x", "y")
    outer = StateGraph(State)
    outer.add_node("inc", lambda s: {"n": s["n"] + 1, "notes": ["inc"]})
    outer.add_node("cmd", hand_over)
    outer.add_node("sub", inner.compile())
    outer.add_node("w", lambda s: {"notes": [f"w{s['n']}"]})
    outer.add_node("join", lambda s: {})
    outer.add_edge(START, "inc")
    outer.add_conditional_edges("inc", route, {"again": "inc", "done": "cmd"})
    outer.add_conditional_edges("sub", fan, ["w"])
    outer.add_edge(["w", "sub"], "join")
    outer.add_edge("join", END)
    return outer.compile(name="loop_fan_sub")


GRAPH = build()
"""

ONE_TEST = """
from lg_cov_graphs import GRAPH


def test_from_three(flows):
    run = flows.run(GRAPH, {"n": 2, "notes": []})
    assert run.values["notes"][-2:] == ["w0", "w1"]
"""

LOOP_TEST = """

def test_from_zero(flows):
    run = flows.run(GRAPH, {"n": 0, "notes": []})
    assert run.values["n"] == 3
"""


def _project(pytester: pytest.Pytester, tests: str) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(lg_cov_graphs=GRAPHS, test_lg_cov_user=tests)


def test_the_untaken_loop_label_and_goto_are_missed(pytester: pytest.Pytester) -> None:
    _project(pytester, ONE_TEST)

    result = pytester.runpytest_inprocess(
        "-p", "no:randomly", "--flows-cov-json=cov.json", "--flows-cov-html=html"
    )

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- flows coverage: 13/15 items, 87% -*",
            "lg_cov_graphs.loop_fan_sub * 15 * 2 * 87%",
            "Missed:",
            "  lg_cov_graphs.loop_fan_sub",
            "    router labels: inc -> again",
            "    command gotos: cmd -> inc (Command)",
        ]
    )
    flow = json.loads((pytester.path / "cov.json").read_text())["flows"][0]
    assert (flow["key"], flow["framework"]) == ("lg_cov_graphs.loop_fan_sub", "langgraph")
    covered = {item["text"] for item in flow["items"] if item["covered"]}
    sends, subgraph = {"sub -> w", "sub + w -> join (join)"}, {"sub:x", "sub:y"}
    assert sends | subgraph | {"cmd -> sub (Command)"} <= covered
    page = (pytester.path / "html" / "lg_cov_graphs.loop_fan_sub.html").read_text()
    assert "data-node='sub:x'" in page
    assert "inc -&gt; again: not covered" in page


def test_a_second_test_covers_the_loop(pytester: pytest.Pytester) -> None:
    _project(pytester, ONE_TEST + LOOP_TEST)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")

    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*- flows coverage: 14/15 items, 93% -*", "    command gotos: cmd -> inc (Command)"]
    )
    flow = json.loads((pytester.path / "cov.json").read_text())["flows"][0]
    tests = {item["text"]: item["tests"] for item in flow["items"]}
    assert tests["inc -> again"] == ["test_lg_cov_user.py::test_from_zero"]
    assert tests["cmd -> inc (Command)"] == []  # hand_over sends n >= 3 on
