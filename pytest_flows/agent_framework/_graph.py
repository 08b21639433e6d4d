"""The coverage model of an Agent Framework workflow: its executors and edges.

Items: every executor, and every edge a message can be delivered along - one
per edge of single, fan-out and switch-case groups (a switch-case arm or a
conditional edge is its own item) and one per fan-in group (delivered once,
when all its sources have sent). The framework's internal edges (requests,
responses) are not counted.
"""

from __future__ import annotations

from typing import Any

from pytest_flows.adapters import FlowGraph, Item, Link, Node, note_graph
from pytest_flows.agent_framework._llm import current_workflow

__all__ = ["note_started", "workflow_graph"]


def note_started(name: str) -> None:
    """Tell coverage (if on) which workflow the ``workflow started`` event is about."""
    workflow = current_workflow.get()
    if workflow is not None:
        note_graph("agent_framework", name, lambda: workflow_graph(workflow))


def _conditions(group: Any) -> dict[str, str]:
    """target id -> the condition shown on its edge (switch-case arms)."""
    shown: dict[str, str] = {}
    for case in getattr(group, "cases", None) or ():
        target = str(case.target_id)
        name = getattr(case, "condition_name", None)
        shown[target] = str(name) if name else "default"
    return shown


def workflow_graph(workflow: Any) -> FlowGraph:
    name = str(workflow.name or "workflow")
    graph = FlowGraph(key=f"workflow:{name}", name=name, framework="agent_framework")
    start = str(workflow.start_executor_id)
    for executor_id in workflow.executors:
        item = graph.add(Item(f"executor:{executor_id}", "executor", str(executor_id)))
        graph.nodes.append(
            Node(str(executor_id), "start" if executor_id == start else "executor", item)
        )
    for group in workflow.edge_groups:
        kind = type(group).__name__
        edges = [e for e in group.edges if not str(e.source_id).startswith("internal:")]
        if kind == "InternalEdgeGroup" or not edges:
            continue
        if kind == "FanInEdgeGroup":
            target = str(edges[0].target_id)
            sources = sorted(str(e.source_id) for e in edges)
            key = "+".join(sources) + "->" + target
            graph.edges[key] = item = graph.add(Item(f"edge:{key}", "edge", key + " (fan-in)"))
            graph.links.extend(Link(s, target, "fan-in", item) for s in sources)
            continue
        arms = _conditions(group)
        for edge in edges:
            source, target = str(edge.source_id), str(edge.target_id)
            key = f"{source}->{target}"
            condition = arms.get(target) or getattr(edge, "condition_name", None) or ""
            text = f"{key} [{condition}]" if condition else key
            graph.edges[key] = item = graph.add(Item(f"edge:{key}", "edge", text))
            graph.links.append(Link(source, target, condition, item))
    return graph
