"""Whether a recorded order of methods can happen at all under today's flow.

A schedule search that does not find the recorded order cannot tell, by itself,
whether it ran out of budget or there was nothing to find. Some orders are
impossible by the flow's structure alone: a listener started before any way it
can be triggered had happened (an ``and_`` listener before one of its methods
finished, a listener of a method that had not finished yet). Today's graph (the
:class:`~pytest_flows._internal.coverage.model.FlowGraph` the adapter builds for
coverage) says which; the check is conservative: it only calls impossible what no
run of today's code can do (a label counts as emitted once any router that could
return it finished; only a method's first start is checked; a nested condition only
needs one of its triggers).
"""

from __future__ import annotations

from typing import Any

from pytest_flows._internal.coverage.model import Branch, FlowGraph

__all__ = ["impossible_start"]


def impossible_start(entries: list[dict[str, Any]], graph: FlowGraph | None) -> str | None:
    """Why the recorded order cannot happen under ``graph`` (today's flow), or None."""
    if graph is None or not graph.branches:
        return None
    routers = {node.id for node in graph.nodes if node.kind == "router"}
    finished: set[str] = set()
    #: Labels the routers that finished returned; None: one returned a non-label.
    labels: set[str] | None = set()
    started: set[str] = set()
    for entry in entries:
        kind, method = entry.get("kind"), str(entry.get("method"))
        if kind == "method.finished":
            finished.add(method)
            if method in routers:
                output = entry.get("output")
                if labels is not None and isinstance(output, str):
                    labels.add(output)
                else:
                    labels = None
        elif kind == "method.started" and method not in started:
            started.add(method)
            branches = graph.branches.get(method)
            if not branches:
                continue  # a start method, or one today's graph does not know
            if not any(_possible(b, finished, labels) for b in branches):
                return _why(method, branches, finished)
    return None


def _fired(leaf: str, finished: set[str], labels: set[str] | None) -> bool:
    # A leaf is a method's name (it fires when the method finishes) or a router's
    # label (or both: crewAI matches either).
    return leaf in finished or labels is None or leaf in labels


def _flat_and(branch: Branch) -> bool:
    """An ``and_`` of plain triggers (each one needed), not a nested condition."""
    rendered = branch.item.removeprefix("edge:").rpartition(" -> ")[0]
    return branch.all_of and rendered == f"and({', '.join(branch.leaves)})"


def _possible(branch: Branch, finished: set[str], labels: set[str] | None) -> bool:
    fired = [_fired(leaf, finished, labels) for leaf in branch.leaves]
    if _flat_and(branch):
        return all(fired)
    return any(fired)


def _why(method: str, branches: list[Branch], finished: set[str]) -> str:
    ways = " or ".join(
        b.item.removeprefix("edge:").rpartition(" -> ")[0] or ", ".join(b.leaves) for b in branches
    )
    waits = sorted({leaf for b in branches for leaf in b.leaves})
    done = [leaf for leaf in waits if leaf in finished]
    missing = [leaf for leaf in waits if leaf not in finished]
    return (
        f"{method} started before it could be triggered: today's {method} listens to "
        f"{ways}; {', '.join(missing)} had not finished"
        + (f" ({', '.join(done)} had)" if done else "")
    )
