"""--flows-cov counts a LangGraph graph's nodes and conditional-edge labels."""

from __future__ import annotations

import json

import lg_graphs
import pytest

from pytest_flows.langgraph._graph import coverage_graph

pytest_plugins = ["pytester"]

ROUTED = """
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class Ticket(TypedDict, total=False):
    text: str
    team: str


def classify(ticket):
    return {"team": "billing" if "refund" in ticket["text"] else "tech"}


def pick(ticket):
    return ticket["team"]


builder = StateGraph(Ticket)
builder.add_node("classify", classify)
builder.add_node("billing", lambda t: {})
builder.add_node("tech", lambda t: {})
builder.add_edge(START, "classify")
builder.add_conditional_edges("classify", pick, {"billing": "billing", "tech": "tech"})
builder.add_edge("billing", END)
builder.add_edge("tech", END)
graph = builder.compile()


def test_refund(flows):
    assert flows.run(graph, {"text": "a refund"}).values["team"] == "billing"
"""


def test_the_coverage_graph_has_nodes_and_labels():
    graph = coverage_graph(lg_graphs.tour_builder())
    ids = sorted(i.id for i in graph.items)
    assert ids == [
        "edge:__start__->a",
        "edge:__start__->b",
        "edge:ask->__end__",
        "edge:done->__end__",
        "edge:sub->ask",
        "label:a:done",
        "label:a:sub",
        "node:a",
        "node:ask",
        "node:b",
        "node:done",
        "node:sub:inner",  # the subgraph's node, as get_graph(xray=True) draws it
        "node:worker",
    ]
    assert graph.key == "lg_graphs.StateGraph(Notes)"
    assert {n.id for n in graph.nodes if n.kind == "start"} == {"__start__"}


def test_flows_cov_counts_the_nodes_and_the_label_a_run_took(pytester: pytest.Pytester):
    pytester.makepyfile(test_routed=ROUTED)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")
    result.assert_outcomes(passed=1)
    [flow] = json.loads((pytester.path / "cov.json").read_text())["flows"]
    # classify, billing, classify -> billing, __start__ -> classify, billing -> __end__
    assert (flow["covered"], flow["total"]) == (5, 8)
    result.stdout.fnmatch_lines(["*- flows coverage: 5/8 items, 63% -*"])
