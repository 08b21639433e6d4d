"""What a flow or workflow *can* do, as plain data: the items coverage counts.

An adapter builds a :class:`FlowGraph` from its framework's own structure (a
crewai flow definition, an Agent Framework workflow's edge groups). The graph
is plain data so that xdist workers can send it to the controller as JSON.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Branch", "FlowGraph", "Item", "Link", "Node"]

#: Item kinds, in the order reports list them.
KINDS = (
    "method",
    "executor",
    "node",
    "router label",
    "feedback outcome",
    "route",
    "command goto",
    "edge",
)


@dataclasses.dataclass(frozen=True)
class Item:
    """One thing a test can cover: a method, a router label, an edge..."""

    id: str  # unique within its flow: "method:begin", "label:route:high", "edge:high -> hi"
    kind: str  # one of KINDS
    text: str  # how reports name it


@dataclasses.dataclass(frozen=True)
class Node:
    """A box in the drawn graph; ``item`` is the item its colour shows."""

    id: str
    kind: str  # start / listen / router / executor / label
    item: str = ""


@dataclasses.dataclass(frozen=True)
class Link:
    """An arrow in the drawn graph; ``item`` is the item its colour shows."""

    source: str
    target: str
    label: str = ""
    item: str = ""


@dataclasses.dataclass(frozen=True)
class Branch:
    """One way a listener can be triggered: a single trigger (a method or a label),
    or an ``and_`` group completed by its last member."""

    item: str
    leaves: tuple[str, ...]
    all_of: bool = False


@dataclasses.dataclass
class FlowGraph:
    """The static coverage model of one flow class or workflow.

    ``branches`` maps a listener to the ways it can fire (crewai); ``labels``
    maps ``"router:label"`` (or ``"*:label"`` when crewai cannot tell which
    router returns it) to its item; ``edges`` maps a trace edge text
    (``"a->b"``, fan-in sources sorted) to its item (Agent Framework).
    """

    key: str
    name: str
    framework: str
    items: list[Item] = dataclasses.field(default_factory=list)
    nodes: list[Node] = dataclasses.field(default_factory=list)
    links: list[Link] = dataclasses.field(default_factory=list)
    branches: dict[str, list[Branch]] = dataclasses.field(default_factory=dict)
    labels: dict[str, str] = dataclasses.field(default_factory=dict)
    edges: dict[str, str] = dataclasses.field(default_factory=dict)

    def add(self, item: Item) -> str:
        if all(existing.id != item.id for existing in self.items):
            self.items.append(item)
        return item.id

    def item_ids(self) -> set[str]:
        return {item.id for item in self.items}

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FlowGraph:
        return cls(
            key=data["key"],
            name=data["name"],
            framework=data["framework"],
            items=[Item(**i) for i in data["items"]],
            nodes=[Node(**n) for n in data["nodes"]],
            links=[Link(**link) for link in data["links"]],
            branches={
                k: [Branch(b["item"], tuple(b["leaves"]), b["all_of"]) for b in v]
                for k, v in data["branches"].items()
            },
            labels=dict(data["labels"]),
            edges=dict(data["edges"]),
        )

    def merge(self, other: FlowGraph) -> None:
        """Union with another build of the same flow (workflows built differently
        under one name contribute all their items)."""
        for item in other.items:
            self.add(item)
        known_nodes = {n.id for n in self.nodes}
        self.nodes.extend(n for n in other.nodes if n.id not in known_nodes)
        self.links.extend(link for link in other.links if link not in self.links)
        for listener, branches in other.branches.items():
            mine = self.branches.setdefault(listener, [])
            mine.extend(b for b in branches if b not in mine)
        for table, theirs in ((self.labels, other.labels), (self.edges, other.edges)):
            for k, v in theirs.items():
                table.setdefault(k, v)
