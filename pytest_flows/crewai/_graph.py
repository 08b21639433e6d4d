"""The coverage model of a CrewAI flow class, read from crewai's own ``FlowDefinition``.

Items: every method; every label each router can return (declared with a
``Literal`` return type or ``emit=``, ``@human_feedback(emit=...)`` outcomes,
a conversational flow's routes); every way each listener can fire (each
trigger of a plain or ``or_`` condition, each ``and_`` group as a whole).

A flow built from a declaration (``Flow.from_declaration``, YAML or a
``FlowDefinition``) is a plain ``Flow`` whose methods live in its own
definition: its graph is read from that definition, under the declaration's
name, with the same items the equivalent class would have.

A router whose labels crewai cannot infer statically owns the labels that
listeners wait on and no static router declares; with several such routers
those labels are counted once each, for whichever router returns them.
"""

from __future__ import annotations

import weakref
from typing import Any

from pytest_flows.adapters import Branch, FlowGraph, Item, Link, Node, note_graph
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._patches import condition_leaves, render_condition

__all__ = ["flow_graph", "note_started"]

_cache: weakref.WeakKeyDictionary[type, FlowGraph] = weakref.WeakKeyDictionary()


def note_started(flow: Any, name: str) -> None:
    """Tell coverage (if on) which flow class the ``flow started`` event is about."""
    note_graph("crewai", name, lambda: _graph_of(flow))


def flow_graph(cls: type) -> FlowGraph:
    graph = _cache.get(cls)
    if graph is None:
        definition = cls.flow_definition()  # type: ignore[attr-defined]
        key = f"{cls.__module__}.{cls.__qualname__}"
        graph = _cache[cls] = _build(definition, key, cls.__name__)
    return graph


def _graph_of(flow: Any) -> FlowGraph:
    cls = type(flow)
    if not cls.flow_definition().methods:  # a declared flow: its methods are its own
        definition = compat.flow_definition(flow)
        if definition.methods:
            name = str(getattr(definition, "name", "") or cls.__name__)
            return _build(definition, name, name)
    return flow_graph(cls)


def _branches(condition: Any) -> list[Any]:
    """The alternatives of a condition: each trigger of an ``or``, an ``and`` as one."""
    if isinstance(condition, dict) and "or" in condition:
        return [b for sub in condition["or"] for b in _branches(sub)]
    return [condition]


def _trigger(method: Any) -> Any:
    if method.listen is not None:
        return method.listen
    if isinstance(method.start, str | dict):
        return method.start
    return None


def _declared_labels(method: Any) -> list[str]:
    feedback = method.human_feedback
    if feedback is not None and feedback.emit:
        return [str(label) for label in feedback.emit]
    return [str(label) for label in method.emit or ()]


def _build(definition: Any, key: str, name: str) -> FlowGraph:
    methods: dict[str, Any] = dict(definition.methods)
    conversational = definition.conversational
    internal: set[str] = set()
    if conversational is not None and getattr(conversational, "enabled", False):
        # crewai's deprecated answer-from-history route: never taken unless configured
        internal = {str(r) for r in getattr(conversational, "internal_routes", None) or ()}
        methods = {
            name: m
            for name, m in methods.items()
            if not (_trigger(m) is not None and set(condition_leaves(_trigger(m))) <= internal)
        }
    graph = FlowGraph(key=key, name=name, framework="crewai")

    routers = [name for name, m in methods.items() if m.router]
    declared = {name: _declared_labels(methods[name]) for name in routers}
    awaited = [leaf for m in methods.values() for leaf in condition_leaves(_trigger(m))]
    claimed = {label for labels in declared.values() for label in labels}
    orphans = list(
        dict.fromkeys(a for a in awaited if a not in methods and a not in claimed | internal)
    )
    dynamic = [name for name in routers if not declared[name]]
    if len(dynamic) == 1:
        declared[dynamic[0]] = orphans
    emitters: dict[str, list[str]] = {}
    for router, labels in declared.items():
        for label in labels:
            emitters.setdefault(label, []).append(router)

    for name, method in methods.items():
        kind = "router" if method.router else "start" if method.start else "listen"
        item = graph.add(Item(f"method:{name}", "method", name))
        graph.nodes.append(Node(name, kind, item))

    for router, labels in declared.items():
        method = methods[router]
        kind = (
            "feedback outcome"
            if method.human_feedback is not None
            else "route"
            if conversational is not None and method.start
            else "router label"
        )
        for label in labels:
            graph.labels[f"{router}:{label}"] = graph.add(
                Item(f"label:{router}:{label}", kind, f"{router} -> {label}")
            )
    if len(dynamic) > 1:
        for label in orphans:
            graph.labels[f"*:{label}"] = graph.add(
                Item(f"label:*:{label}", "router label", f"{'|'.join(dynamic)} -> {label}")
            )
            emitters[label] = dynamic

    listened: set[str] = set()
    for name, method in methods.items():
        condition = _trigger(method)
        if condition is None:
            continue
        for branch in _branches(condition):
            leaves = tuple(condition_leaves(branch))
            all_of = isinstance(branch, dict)
            shown = render_condition(branch)
            if not all_of and shown not in methods and len(emitters.get(shown, ())) == 1:
                shown = f"{emitters[shown][0]}:{shown}"
            item = graph.add(
                Item(f"edge:{render_condition(branch)} -> {name}", "edge", f"{shown} -> {name}")
            )
            graph.branches.setdefault(name, []).append(Branch(item, leaves, all_of))
            for leaf in leaves:
                listened.add(leaf)
                _link(graph, leaf, name, item, emitters, all_of, methods)

    for router, labels in declared.items():
        for label in labels:
            if label not in listened:  # a label nothing listens to: a dead end worth seeing
                graph.nodes.append(Node(f"label:{label}", "label"))
                graph.links.append(Link(router, f"label:{label}", label, f"label:{router}:{label}"))
    return graph


def _link(
    graph: FlowGraph,
    leaf: str,
    target: str,
    item: str,
    emitters: dict[str, list[str]],
    all_of: bool,
    methods: dict[str, Any],
) -> None:
    tag = "and" if all_of else ""
    if leaf in methods:
        graph.links.append(Link(leaf, target, tag, item))
        return
    sources = emitters.get(leaf)
    if not sources:
        node = f"label:{leaf}"
        if all(n.id != node for n in graph.nodes):
            graph.nodes.append(Node(node, "label"))
        sources = [node]
    for source in sources:
        graph.links.append(Link(source, target, leaf if not tag else f"{leaf} ({tag})", item))
