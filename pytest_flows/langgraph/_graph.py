"""The coverage model of a LangGraph graph: its nodes and its conditional edges' labels.

Items: every node of the graph (``node:<name>``, counted when a task of it starts) and
every label a conditional edge can choose (``label:<source>:<label>``, counted when the
trace's ``router`` line chose it; a ``Send`` counts for its target node's label).
Labels come from the path map (``add_conditional_edges(src, path, {"label": node})``),
else from the destinations ``get_graph()`` draws. A subgraph counts as its node here
(its inner nodes are the subgraph's own graph, counted when it runs as a graph).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

from pytest_flows.adapters import FlowGraph, Item, Link, Node

__all__ = ["coverage_graph", "graph_key"]

_ENDS = ("__start__", "__end__")


def graph_key(graph: Any) -> str:
    """Graphs are mostly all named "LangGraph": the key adds the node names."""
    nodes = ",".join(sorted(n for n in graph.nodes if n not in _ENDS))
    return f"langgraph:{graph.name}[{nodes}]"


def coverage_graph(flow: Any) -> FlowGraph:
    graph = flow.compile() if isinstance(flow, StateGraph) else flow
    drawn = graph.get_graph()
    result = FlowGraph(key=graph_key(graph), name=str(graph.name), framework="langgraph")
    first = {e.target for e in drawn.edges if e.source == "__start__"}
    for node in sorted(n for n in drawn.nodes if n not in _ENDS):
        item = result.add(Item(f"node:{node}", "executor", node))
        result.nodes.append(Node(node, "start" if node in first else "executor", item))
    branches = getattr(getattr(graph, "builder", None), "branches", None) or {}
    for edge in drawn.edges:
        if edge.source in _ENDS or (edge.target in _ENDS and not edge.conditional):
            continue
        if not edge.conditional:
            result.links.append(Link(edge.source, edge.target))
            continue
        labels = _labels_to(branches.get(edge.source) or {}, edge.target)
        for label in labels or [edge.target]:
            text = f"{edge.source} -> {label}"
            item = result.add(Item(f"label:{edge.source}:{label}", "router label", text))
            result.labels[f"{edge.source}:{label}"] = item
            result.links.append(Link(edge.source, edge.target, label, item))
    return result


def _labels_to(branches: dict[str, Any], target: str) -> list[str]:
    """The labels of ``branches`` (one node's conditional edges) that lead to ``target``."""
    found: list[str] = []
    for branch in branches.values():
        ends = getattr(branch, "ends", None) or {}
        found.extend(str(label) for label, dest in ends.items() if dest == target)
    return found
