"""The coverage model of a LangGraph graph, read from ``graph.get_graph(xray=True)``.

Items (what ``--flows-cov`` counts), with ids that name nodes by their path
(``sub:x`` is node ``x`` of the subgraph that node ``sub`` runs, as LangGraph's
xray drawing names it):

* ``node:<id>`` - every node (a subgraph's nodes in its place: xray draws them),
  covered when a task of it starts;
* ``label:<source>:<label>`` - every destination of a conditional edge: its label
  when the path map names one (``add_conditional_edges("check", route, {"fraud":
  "block"})`` gives ``check -> fraud``), else the node it leads to; the router
  covers it by returning the label or node name, or by a ``Send`` to that node;
* ``goto:<source>-><target>`` - every destination a node declares for the
  ``Command(goto=...)`` it returns (a ``Command[Literal[...]]`` return type, or
  ``add_node(..., destinations=...)``);
* ``edge:<source>-><target>`` - every static edge, and ``edge:<a>+<b>-><c>`` for
  a join (``add_edge(["a", "b"], "c")``: covered once, when ``c`` runs on it).

Drawn edges enter and leave a subgraph at its first and last nodes; they are
counted at the subgraph's node (``cmd -> sub``), which is what the trace shows.
A ``@entrypoint`` is one node. What LangGraph cannot see is not counted: a graph
a node invokes inside its own code, destinations a ``Command`` takes without
declaring them (the report lists such choices as undeclared).
"""

from __future__ import annotations

from typing import Any

from pytest_flows.adapters import FlowGraph, Item, Link, Node

__all__ = ["coverage_graph", "graph_key", "graph_of", "logical"]

START, END = "__start__", "__end__"
#: what LangGraph names a graph compiled without ``name=``
DEFAULT_NAME = "LangGraph"


def _compiled(flow: Any) -> Any:
    from langgraph.graph import StateGraph

    if isinstance(flow, StateGraph):
        return flow.compile()
    return flow


def graph_key(graph: Any) -> str:
    """``module.name`` of a compiled graph: its ``compile(name=...)``, else its state
    schema's class (``StateGraph(State)``), in the module that defines the state (or the
    ``@entrypoint`` function)."""
    builder = getattr(graph, "builder", None)
    schema = getattr(builder, "state_schema", None)
    name = str(getattr(graph, "name", "") or DEFAULT_NAME)
    if schema is not None:
        module = getattr(schema, "__module__", "") or ""
        if name == DEFAULT_NAME:
            name = f"StateGraph({getattr(schema, '__qualname__', schema)})"
    else:
        module, function = _entrypoint(graph)
        if name == DEFAULT_NAME and function:
            name = function
    return f"{module}.{name}" if module else name


def _entrypoint(graph: Any) -> tuple[str, str]:
    """The module and name of an ``@entrypoint``'s function (empty if not found)."""
    for name, node in (getattr(graph, "nodes", None) or {}).items():
        bound = getattr(node, "bound", None)
        func = getattr(bound, "func", None) or getattr(bound, "afunc", None)
        module = getattr(func, "__module__", None)
        if module and name != START:
            return str(module), str(name)
    return "", ""


def logical(source: str, target: str) -> tuple[str, str]:
    """A drawn edge's ends at the level where the trace sees it.

    xray draws an edge into a subgraph at its first node (``cmd -> sub:x``) and out of
    it from its last (``sub:y -> w``); the trace runs ``sub`` as a task of the parent:
    both ends are cut to the first level they do not share.
    """
    left, right = source.split(":"), target.split(":")
    shared = 0
    while shared < min(len(left), len(right)) - 1 and left[shared] == right[shared]:
        shared += 1
    return ":".join(left[: shared + 1]), ":".join(right[: shared + 1])


class _Level:
    """What one graph (the root, or a subgraph at ``prefix``) declares by name."""

    def __init__(self, prefix: str, builder: Any) -> None:
        self.prefix = prefix
        self.routes: dict[str, set[str] | None] = {}  # source -> targets (None: any)
        self.waits: list[tuple[tuple[str, ...], str]] = []
        self.commands: dict[str, set[str]] = {}
        self.edges: set[tuple[str, str]] = set()
        if builder is None:
            return
        for source, branches in (getattr(builder, "branches", None) or {}).items():
            for branch in branches.values():
                ends = getattr(branch, "ends", None)
                known = self.routes.get(self._id(source), set())
                self.routes[self._id(source)] = (
                    None
                    if ends is None or known is None
                    else known | {self._id(str(end)) for end in ends.values()}
                )
        for source, target in getattr(builder, "edges", None) or ():
            self.edges.add((self._id(source), self._id(target)))
        for sources, target in getattr(builder, "waiting_edges", None) or ():
            self.waits.append((tuple(self._id(s) for s in sources), self._id(target)))
        for name, spec in (getattr(builder, "nodes", None) or {}).items():
            ends = getattr(spec, "ends", None) or ()
            if isinstance(ends, dict):
                ends = tuple(ends)
            if ends:
                self.commands[self._id(name)] = {self._id(str(e)) for e in ends}

    def _id(self, name: str) -> str:
        return name if name in (START, END) else self.prefix + str(name)


def _levels(graph: Any) -> list[_Level]:
    levels = [_Level("", getattr(graph, "builder", None))]
    try:
        subgraphs = list(graph.get_subgraphs(recurse=True))
    except Exception:  # a graph whose subgraphs cannot be listed: their edges are drawn only
        subgraphs = []
    for namespace, subgraph in subgraphs:
        prefix = str(namespace).replace("|", ":") + ":"
        levels.append(_Level(prefix, getattr(subgraph, "builder", None)))
    return levels


def _route_label(data: Any, target: str) -> str:
    return target.rpartition(":")[2] if data is None else str(data)


def graph_of(flow: Any) -> FlowGraph:
    """The coverage graph of ``flow``: a compiled graph, a ``StateGraph`` builder or an
    ``@entrypoint``."""
    graph = _compiled(flow)
    drawn = graph.get_graph(xray=True)
    key = graph_key(graph)
    result = FlowGraph(key=key, name=str(graph.name), framework="langgraph")
    for node_id in drawn.nodes:
        if node_id in (START, END):
            result.nodes.append(Node(node_id, "start" if node_id == START else "end"))
            continue
        item = result.add(Item(f"node:{node_id}", "node", node_id))
        result.nodes.append(Node(node_id, "node", item))
    levels = _levels(graph)
    routes: dict[str, set[str] | None] = {}
    commands: dict[str, set[str]] = {}
    waits: dict[str, list[tuple[str, ...]]] = {}
    static: set[tuple[str, str]] = set()
    for level in levels:
        static |= level.edges
        routes.update(level.routes)
        commands.update(level.commands)
        for sources, target in level.waits:
            waits.setdefault(target, []).append(sources)
    for edge in drawn.edges:
        source, target = logical(str(edge.source), str(edge.target))
        if not edge.conditional:
            _static(result, edge, source, target, waits, static, routes)
        else:
            _conditional(result, edge, source, target, routes, commands)
    return result


def _static(
    result: FlowGraph,
    edge: Any,
    source: str,
    target: str,
    waits: dict[str, list[tuple[str, ...]]],
    static: set[tuple[str, str]],
    routes: dict[str, set[str] | None],
) -> None:
    joins = [sources for sources in waits.get(target, ()) if source in sources]
    for sources in joins:
        key = "+".join(sorted(sources)) + "->" + target
        text = " + ".join(sorted(sources)) + f" -> {target} (join)"
        result.edges[key] = item = result.add(Item(f"edge:{key}", "edge", text))
        result.links.append(Link(str(edge.source), str(edge.target), "join", item))
    if joins and (source, target) not in static:
        return
    if (source, target) not in static and source in routes and routes[source] is None:
        return  # LangGraph's stand-in for a router that declares no destinations
    key = f"{source}->{target}"
    result.edges[key] = item = result.add(Item(f"edge:{key}", "edge", f"{source} -> {target}"))
    result.links.append(Link(str(edge.source), str(edge.target), "", item))


def _conditional(
    result: FlowGraph,
    edge: Any,
    source: str,
    target: str,
    routes: dict[str, set[str] | None],
    commands: dict[str, set[str]],
) -> None:
    key = f"{source}->{target}"
    declared = routes.get(source, set())
    routed = source in routes and (declared is None or target in declared)
    if not routed and source not in commands:
        return  # declared by nobody LangGraph lets us read (an @entrypoint's end)
    if routed:
        label = _route_label(edge.data, target)
        item = result.add(Item(f"label:{source}:{label}", "router label", f"{source} -> {label}"))
        result.labels[f"{source}:{label}"] = item
        result.edges.setdefault(key, item)
        result.links.append(Link(str(edge.source), str(edge.target), label, item))
        return
    item = result.add(Item(f"goto:{key}", "command goto", f"{source} -> {target} (Command)"))
    result.edges.setdefault(key, item)
    result.links.append(Link(str(edge.source), str(edge.target), "goto", item))


#: The name the adapter's ``graph()`` hook calls.
coverage_graph = graph_of
