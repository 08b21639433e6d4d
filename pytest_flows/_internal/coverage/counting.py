"""Count one test's normalized trace against the graphs of the runs it started.

crewai lines used: ``flow started|finished|failed|paused``, ``method started
M trigger=...``, ``method finished M``, ``router chose R label=L``, ``human
feedback M outcome=O``. Agent Framework lines: ``workflow started``,
``executor invoked X edge=a->X``, ``executor failed X``. LangGraph lines
(:func:`_superstep_line`): ``graph started|finished|failed|interrupted``,
``superstep N``, ``task started|finished T``, ``router T chose=L``, a subgraph's
lines one level deeper than the task that runs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pytest_flows._internal.coverage.model import FlowGraph
from pytest_flows._internal.coverage.notes import Started

if TYPE_CHECKING:
    from pytest_flows._internal.trace import TraceEvent

__all__ = ["Counted", "count"]

#: the trace's start events; each pairs with the adapter's note of the same name, in order
_STARTS = {"flow.started", "workflow.started", "graph.started"}
_ENDS = {
    "graph.finished",
    "graph.failed",
    "graph.interrupted",
    "flow.finished",
    "flow.failed",
    "flow.paused",
    "workflow.finished",
    "workflow.failed",
    "workflow.idle_with_pending_requests",
}


@dataclasses.dataclass
class Counted:
    """What one test covered of one flow."""

    graph: FlowGraph
    covered: set[str] = dataclasses.field(default_factory=set)
    started_only: set[str] = dataclasses.field(default_factory=set)  # methods that never finished
    unexpected: set[str] = dataclasses.field(default_factory=set)  # labels no router declares


class _Run:
    def __init__(self, counted: Counted) -> None:
        self.counted = counted
        self.graph = counted.graph
        self.nodes = {n.id for n in counted.graph.nodes}
        self.starts = {n.id for n in counted.graph.nodes if n.kind == "start"}
        #: labels chosen and methods finished in this run, latest last
        self.fired: list[str] = []
        #: a superstep graph's place: the task running at each depth, the superstep
        #: at each depth, and which nodes finished in each (prefix, superstep)
        self.supersteps = False  # a run traced superstep by superstep (LangGraph's)
        self.depth = 0
        self.tasks: dict[int, str] = {}
        self.steps: dict[int, int] = {}
        self.finished: dict[tuple[str, int], set[str]] = {}


def count(trace: Iterable[TraceEvent], started: list[Started]) -> dict[str, Counted]:
    """Items covered per flow key. Runs whose graph is unknown are skipped."""
    result: dict[str, Counted] = {}
    pending = list(started)
    open_runs: list[tuple[str, _Run | None]] = []
    all_runs: list[_Run] = []

    def start(name: str, depth: int, supersteps: bool) -> None:
        for i, note in enumerate(pending):
            if note.name == name:
                del pending[i]
                run = None
                if note.graph is not None:
                    counted = result.get(note.graph.key)
                    if counted is None:
                        counted = result[note.graph.key] = Counted(note.graph)
                    run = _Run(counted)
                    run.depth = depth
                    run.supersteps = supersteps
                    all_runs.append(run)
                open_runs.append((name, run))
                return
        open_runs.append((name, None))

    def owner(node: str) -> _Run | None:
        # Concurrent or nested runs interleave their lines: the latest open run
        # that has the node, else (a resume without a new start) the latest at all.
        for _, run in reversed(open_runs):
            if run is not None and node in run.nodes:
                return run
        return next((r for r in reversed(all_runs) if node in r.nodes), None)

    for event in trace:
        kind = event.kind
        if kind in _STARTS:
            start(event.name, event.depth, kind == "graph.started")
        elif kind in _ENDS:
            for i in range(len(open_runs) - 1, -1, -1):
                if open_runs[i][0] == event.name:
                    del open_runs[i]
                    break
        elif kind == "method.started":
            run = owner(event.name)
            if run is not None:
                _listener_fired(run, event.name, event.get("trigger") or "")
                run.counted.started_only.add(event.name)
        elif kind == "method.finished":
            run = owner(event.name)
            if run is not None:
                run.counted.covered.add(f"method:{event.name}")
                run.fired.append(event.name)
        elif kind in ("router.chose", "human.feedback"):
            label = event.get("label") if kind == "router.chose" else event.get("outcome")
            run = owner(event.name)
            if run is not None and label:
                _label(run, event.name, label)
        elif kind == "executor.invoked":
            run = owner(event.name)
            if run is not None:
                run.counted.covered.add(f"executor:{event.name}")
                item = run.graph.edges.get(_edge_key(event.get("edge") or ""))
                if item is not None:
                    run.counted.covered.add(item)
        elif kind in _SUPERSTEP_KINDS and open_runs:
            run = open_runs[-1][1]
            if run is not None and run.supersteps:
                _superstep_line(run, event)
    for counted in result.values():
        counted.started_only = {
            m for m in counted.started_only if f"method:{m}" not in counted.covered
        }
    return result


def _edge_key(edge: str) -> str:
    sources, _, target = edge.partition("->")
    return "+".join(sorted(sources.split("+"))) + "->" + target


def _label(run: _Run, router: str, label: str) -> None:
    run.fired.append(label)
    item = run.graph.labels.get(f"{router}:{label}") or run.graph.labels.get(f"*:{label}")
    if item is None:
        run.counted.unexpected.add(f"{router} -> {label}")
    else:
        run.counted.covered.add(item)


def _listener_fired(run: _Run, listener: str, trigger: str) -> None:
    """Which branch of ``listener``'s condition the trace's ``trigger=`` says fired it.

    The tracer writes ``method``, ``router:label``, ``<condition> via <method or
    router:label>``, ``start`` or ``<condition> (resumed)``; the last two name no edge.
    """
    branches = run.graph.branches.get(listener, ())
    if trigger == "start" and listener not in run.starts:
        # A run resumed from pending feedback triggers the listeners of the
        # outcome with no causal event, which the tracer writes as "start":
        # credit the single trigger this run fired last.
        for fired in reversed(run.fired):
            for branch in branches:
                if branch.leaves == (fired,):
                    run.counted.covered.add(branch.item)
                    return
        return
    if trigger == "start" or trigger.endswith(" (resumed)"):
        return
    fired = trigger.rpartition(" via ")[2]
    leaf = fired.partition(":")[2] or fired
    for branch in branches:
        if leaf in branch.leaves and (branch.all_of or branch.leaves == (leaf,)):
            run.counted.covered.add(branch.item)
            return


_SUPERSTEP_KINDS = {"superstep.started", "task.started", "task.finished", "router"}


def _node_of(task: str) -> str:
    """A task's node: ``w[1]`` (the second Send to ``w``) is node ``w``."""
    return task.partition("[")[0]


def _items_of(listed: str) -> list[str]:
    """``[a, Send(b)]`` (or a lone ``a``) -> the node or label each entry names."""
    inner = listed[1:-1] if listed.startswith("[") and listed.endswith("]") else listed
    names = [part.strip() for part in inner.split(",") if part.strip()]
    return [n[5:-1] if n.startswith("Send(") and n.endswith(")") else n for n in names]


def _superstep_line(run: _Run, event: TraceEvent) -> None:
    """Count a line of a superstep graph (LangGraph): nodes, the router labels and
    Send targets chosen, the Command destinations taken, static and join edges.

    Node ids are paths (``sub:x``: node ``x`` of the subgraph node ``sub`` runs, its
    lines one level deeper than ``sub``'s task).
    """
    depth = event.depth - run.depth
    counted, graph = run.counted, run.graph
    prefix = run.tasks[depth - 1] + ":" if depth > 0 and depth - 1 in run.tasks else ""
    if event.kind == "superstep.started":
        if event.name.lstrip("-").isdigit():
            run.steps[depth] = int(event.name)
        for deeper in [d for d in run.tasks if d >= depth]:
            del run.tasks[deeper]
        return
    node = prefix + _node_of(event.name)
    step = run.steps.get(depth, 0)
    if event.kind == "task.started":
        run.tasks[depth] = node
        if f"node:{node}" in graph.item_ids():  # reached (an interrupted node is too)
            counted.covered.add(f"node:{node}")
        # the input runs as the __start__ task of superstep 0: nodes of superstep 1 follow it
        before = run.finished.get((prefix, step - 1), set()) | (
            {"__start__"} if step <= 1 else set()
        )
        for source in before:
            item = graph.edges.get(f"{source}->{node}")
            if item is not None and item.startswith("edge:"):
                counted.covered.add(item)
        for trigger in _items_of(event.get("triggers") or ""):
            if trigger.startswith("join:"):
                # join:a+b:c -> the join of a and b into c (names at this level)
                sources = trigger[5:].rpartition(":")[0].split("+")
                key = "+".join(sorted(prefix + s for s in sources)) + "->" + node
                item = graph.edges.get(key)
                if item is not None:
                    counted.covered.add(item)
    elif event.kind == "task.finished":
        run.finished.setdefault((prefix, step), set()).add(node)
        end = graph.edges.get(f"{node}->__end__")
        if end is not None and end.startswith("edge:"):
            counted.covered.add(end)
        goto = event.get("goto")
        if goto:
            level = prefix
            if event.get("graph") == "__parent__":  # Command.PARENT: the parent's nodes
                level = prefix.rstrip(":").rpartition(":")[0]
                level = level + ":" if level else ""
            source = node if level == prefix else prefix.rstrip(":")
            for target in _items_of(goto):
                item = graph.edges.get(f"{source}->{level}{target}")
                if item is None:
                    counted.unexpected.add(f"{source} -> {target} (Command)")
                else:
                    counted.covered.add(item)
    elif event.kind == "router":
        chose = event.get("chose") or ""
        sent = "Send(" in chose
        for label in _items_of(chose):
            item = graph.labels.get(f"{node}:{label}")
            if item is None and sent:  # a Send names the node, not the path map's label
                item = graph.edges.get(f"{node}->{prefix}{label}")
            if item is None:
                counted.unexpected.add(f"{node} -> {label}")
            else:
                counted.covered.add(item)
