"""Count one test's normalized trace against the graphs of the runs it started.

crewai lines used: ``flow started|finished|failed|paused``, ``method started
M trigger=...``, ``method finished M``, ``router chose R label=L``, ``human
feedback M outcome=O``. Agent Framework lines: ``workflow started``,
``executor invoked X edge=a->X``, ``executor failed X``. Graph lines (LangGraph):
``graph started|finished|failed|interrupted``, ``task started X`` (``X[i]``: a Send's
or a call's), ``router X path=f chose=L`` (``[L1, Send(Y)]``: several).
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
    "flow.finished",
    "flow.failed",
    "flow.paused",
    "workflow.finished",
    "workflow.failed",
    "workflow.idle_with_pending_requests",
    "graph.finished",
    "graph.failed",
    "graph.interrupted",
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


def count(trace: Iterable[TraceEvent], started: list[Started]) -> dict[str, Counted]:
    """Items covered per flow key. Runs whose graph is unknown are skipped."""
    result: dict[str, Counted] = {}
    pending = list(started)
    open_runs: list[tuple[str, _Run | None]] = []
    all_runs: list[_Run] = []

    def start(name: str) -> None:
        for i, note in enumerate(pending):
            if note.name == name:
                del pending[i]
                run = None
                if note.graph is not None:
                    counted = result.get(note.graph.key)
                    if counted is None:
                        counted = result[note.graph.key] = Counted(note.graph)
                    run = _Run(counted)
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
            start(event.name)
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
        elif kind == "task.started" and not event.depth:
            node = event.name.partition("[")[0]
            run = owner(node)
            if run is not None:
                run.counted.covered.add(f"node:{node}")
        elif kind == "router" and not event.depth:
            run = owner(event.name)
            if run is not None:
                for label in _chosen(event.get("chose") or ""):
                    _label(run, event.name, label)
        elif kind == "executor.invoked":
            run = owner(event.name)
            if run is not None:
                run.counted.covered.add(f"executor:{event.name}")
                item = run.graph.edges.get(_edge_key(event.get("edge") or ""))
                if item is not None:
                    run.counted.covered.add(item)
    for counted in result.values():
        counted.started_only = {
            m for m in counted.started_only if f"method:{m}" not in counted.covered
        }
    return result


def _chosen(chose: str) -> list[str]:
    """The labels of a ``router ... chose=`` field: ``L``, or ``[L1, Send(Y)]``."""
    inner = chose[1:-1] if chose.startswith("[") and chose.endswith("]") else chose
    labels = [part.strip() for part in inner.split(", ") if part.strip()]
    return [label[5:-1] if label.startswith("Send(") else label for label in labels]


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
