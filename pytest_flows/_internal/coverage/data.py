"""Coverage of a whole run: the graphs seen and which tests covered which items.

Combines per test, per xdist worker and per run the same way (a union), so a
run split over workers reports exactly what a serial run does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_flows._internal.coverage.counting import Counted
from pytest_flows._internal.coverage.model import KINDS, FlowGraph, Item

__all__ = ["CoverageData", "FlowCoverage"]

#: Version of the JSON layout (``--flows-cov-json``, xdist worker output).
FORMAT = 1


@dataclasses.dataclass
class FlowCoverage:
    graph: FlowGraph
    #: item id -> node ids of the tests that covered it
    hits: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    started_only: set[str] = dataclasses.field(default_factory=set)
    unexpected: set[str] = dataclasses.field(default_factory=set)

    @property
    def total(self) -> int:
        return len(self.graph.items)

    @property
    def covered(self) -> int:
        return sum(1 for item in self.graph.items if self.hits.get(item.id))

    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 100.0

    def missed(self) -> list[Item]:
        """Missed items grouped by kind (methods first), each group in graph order."""
        items = [item for item in self.graph.items if not self.hits.get(item.id)]
        return sorted(items, key=lambda item: KINDS.index(item.kind))

    def merge(self, other: FlowCoverage) -> None:
        self.graph.merge(other.graph)
        for item, tests in other.hits.items():
            self.hits.setdefault(item, set()).update(tests)
        self.started_only |= other.started_only
        self.unexpected |= other.unexpected
        # a method finished anywhere is not "started, never finished"
        self.started_only = {m for m in self.started_only if not self.hits.get(f"method:{m}")}


@dataclasses.dataclass
class CoverageData:
    flows: dict[str, FlowCoverage] = dataclasses.field(default_factory=dict)
    problems: set[str] = dataclasses.field(default_factory=set)

    def add_test(self, test_id: str, counted: dict[str, Counted]) -> None:
        for key, part in counted.items():
            flow = FlowCoverage(
                graph=part.graph,
                hits={item: {test_id} for item in part.covered},
                started_only=set(part.started_only),
                unexpected=set(part.unexpected),
            )
            self._merge_flow(key, flow)

    def _merge_flow(self, key: str, flow: FlowCoverage) -> None:
        mine = self.flows.get(key)
        if mine is None:
            # own copy: graphs are cached per class by the adapters
            self.flows[key] = FlowCoverage(
                FlowGraph.from_json(flow.graph.to_json()),
                {k: set(v) for k, v in flow.hits.items()},
                set(flow.started_only),
                set(flow.unexpected),
            )
        else:
            mine.merge(flow)

    def merge(self, other: CoverageData) -> None:
        for key, flow in other.flows.items():
            self._merge_flow(key, flow)
        self.problems |= other.problems

    def sorted_flows(self) -> list[FlowCoverage]:
        return [self.flows[key] for key in sorted(self.flows)]

    def totals(self) -> tuple[int, int]:
        flows = self.flows.values()
        return sum(f.covered for f in flows), sum(f.total for f in flows)

    def percent(self) -> float:
        covered, total = self.totals()
        return 100.0 * covered / total if total else 100.0

    # -- JSON ------------------------------------------------------------------------
    def to_json(self, *, with_graphs: bool = True) -> dict[str, Any]:
        covered, total = self.totals()
        flows = []
        for flow in self.sorted_flows():
            entry: dict[str, Any] = {
                "key": flow.graph.key,
                "name": flow.graph.name,
                "framework": flow.graph.framework,
                "covered": flow.covered,
                "total": flow.total,
                "percent": round(flow.percent(), 2),
                "items": [
                    {
                        "id": item.id,
                        "kind": item.kind,
                        "text": item.text,
                        "covered": bool(flow.hits.get(item.id)),
                        "tests": sorted(flow.hits.get(item.id, ())),
                    }
                    for item in flow.graph.items
                ],
                "started_not_finished": sorted(flow.started_only),
                "unexpected_labels": sorted(flow.unexpected),
            }
            if with_graphs:
                entry["graph"] = flow.graph.to_json()
            flows.append(entry)
        return {
            "format": FORMAT,
            "covered": covered,
            "total": total,
            "percent": round(self.percent(), 2),
            "flows": flows,
            "problems": sorted(self.problems),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CoverageData:
        if data.get("format") != FORMAT:
            raise ValueError(
                f"flows coverage data format {data.get('format')!r}, expected {FORMAT}"
            )
        result = cls(problems=set(data.get("problems", ())))
        for entry in data["flows"]:
            graph = FlowGraph.from_json(entry["graph"])
            result.flows[graph.key] = FlowCoverage(
                graph=graph,
                hits={i["id"]: set(i["tests"]) for i in entry["items"] if i["tests"]},
                started_only=set(entry["started_not_finished"]),
                unexpected=set(entry["unexpected_labels"]),
            )
        return result
