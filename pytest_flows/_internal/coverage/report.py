"""The terminal report: one line per flow, then what each flow missed."""

from __future__ import annotations

import math

from pytest_flows._internal.coverage.data import CoverageData, FlowCoverage
from pytest_flows._internal.coverage.model import KINDS

__all__ = ["percent_text", "report_lines"]


def percent_text(value: float) -> str:
    """Whole percent, never rounded up to 100 nor down to 0 (as coverage.py does)."""
    if 0 < value < 1:
        return "1%"
    if 99 < value < 100:
        return "99%"
    return f"{math.floor(value + 0.5) if value < 99 else math.floor(value)}%"


def report_lines(data: CoverageData, *, missed: bool = True) -> list[str]:
    flows = data.sorted_flows()
    if not flows:
        return [
            "no flow or workflow ran in a flows test: nothing to cover "
            "(flows run through the flows fixture, kickoff() in a flows test, the "
            "conversation fixture or --flows-all are counted)"
        ]
    names = [f.graph.key for f in flows]
    width = max(len("TOTAL"), len("Flow"), *map(len, names))
    lines = [f"{'Flow':<{width}}  {'Items':>5}  {'Miss':>5}  {'Cover':>5}"]
    lines.append("-" * len(lines[0]))
    for flow in flows:
        lines.append(
            f"{flow.graph.key:<{width}}  {flow.total:>5}  {flow.total - flow.covered:>5}  "
            f"{percent_text(flow.percent()):>5}"
        )
    covered, total = data.totals()
    lines.append("-" * len(lines[0]))
    lines.append(
        f"{'TOTAL':<{width}}  {total:>5}  {total - covered:>5}  {percent_text(data.percent()):>5}"
    )
    if missed:
        detail = [line for flow in flows for line in _missed_block(flow.graph.key, flow)]
        if detail:
            lines.append("")
            lines.append("Missed:")
            lines.extend(detail)
    for problem in sorted(data.problems):
        lines.append(f"note: {problem}")
    return lines


def _missed_block(key: str, flow: FlowCoverage) -> list[str]:
    missed = flow.missed()
    if not missed and not flow.unexpected:
        return []
    lines = [f"  {key}"]
    for kind in KINDS:
        texts = [item.text for item in missed if item.kind == kind]
        if kind == "method":
            texts = [
                f"{t} (started, never finished)" if t in flow.started_only else t for t in texts
            ]
        if texts:
            lines.append(f"    {_plural(kind)}: {', '.join(texts)}")
    if flow.unexpected:
        lines.append(
            "    labels returned that no router declares: " + ", ".join(sorted(flow.unexpected))
        )
    return lines


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("ch") else "s")
