"""``--flows-cov-html=DIR``: an index page and one page per flow with its graph.

The graph is inline SVG laid out here (layers by distance from the start
methods), so the pages work offline: crewai's own ``plot()`` page loads its
scripts and fonts from CDNs. Its structure (crewai's ``FlowDefinition``) is
what the graph is built from.
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

from pytest_flows._internal.coverage.data import CoverageData, FlowCoverage
from pytest_flows._internal.coverage.model import FlowGraph, Link
from pytest_flows._internal.coverage.report import percent_text
from pytest_flows._internal.file_names import escaped

__all__ = ["write_html"]

NODE_W, NODE_H, GAP_X, GAP_Y = 170, 44, 40, 80
#: room at the sides for the arrows that go round the nodes; above and below
MARGIN, MARGIN_Y = 130, 30
COVERED, MISSED, NEUTRAL = ("#2e7d32", "#c8e6c9"), ("#c62828", "#ffcdd2"), ("#616161", "#eeeeee")

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #212121; }
table { border-collapse: collapse; margin-top: 1em; }
td, th { border: 1px solid #ccc; padding: 4px 10px; text-align: left; vertical-align: top; }
.covered { color: #2e7d32; } .missed { color: #c62828; font-weight: 600; }
svg text { font-size: 13px; font-family: system-ui, sans-serif; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 8px; border: 2px solid; }
"""


def write_html(data: CoverageData, directory: Path) -> Path:
    """Write the report into ``directory`` (created); returns the index page."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for flow in data.sorted_flows():
        page = _page_name(flow.graph.key)
        (directory / page).write_text(_flow_page(flow), encoding="utf-8")
        rows.append(
            f"<tr><td><a href='{html.escape(quote(page))}'>{html.escape(flow.graph.key)}</a></td>"
            f"<td>{html.escape(flow.graph.framework)}</td><td>{flow.covered}/{flow.total}</td>"
            f"<td>{percent_text(flow.percent())}</td></tr>"
        )
    covered, total = data.totals()
    body = (
        f"<h1>Flow-graph coverage: {covered}/{total} ({percent_text(data.percent())})</h1>"
        "<table><tr><th>Flow</th><th>Framework</th><th>Covered</th><th>Cover</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    index = directory / "index.html"
    index.write_text(_document("Flow-graph coverage", body), encoding="utf-8")
    return index


def _page_name(key: str) -> str:
    # escaped, not squashed: flows "help desk" and "help/desk" get a page each (and a
    # workflow named "index" does not overwrite the index page)
    name = escaped(key)
    return ("%69ndex" if name == "index" else name) + ".html"


def _document(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>{body}</body></html>\n"
    )


def _flow_page(flow: FlowCoverage) -> str:
    graph = flow.graph
    rows = []
    for item in graph.items:
        tests = sorted(flow.hits.get(item.id, ()))
        state = "covered" if tests else "missed"
        if not tests and item.kind == "method" and item.text in flow.started_only:
            state = "missed (started, never finished)"
        rows.append(
            f"<tr><td>{html.escape(item.kind)}</td><td>{html.escape(item.text)}</td>"
            f"<td class='{state.split()[0]}'>{state}</td>"
            f"<td>{'<br>'.join(html.escape(t) for t in tests)}</td></tr>"
        )
    body = (
        "<p><a href='index.html'>&larr; all flows</a></p>"
        f"<h1>{html.escape(graph.key)}: {flow.covered}/{flow.total} "
        f"({percent_text(flow.percent())})</h1>"
        "<p class='legend'><span style='border-color:#2e7d32;background:#c8e6c9'>covered</span>"
        "<span style='border-color:#c62828;background:#ffcdd2'>missed</span>"
        "hover a node or an edge to see the tests that covered it</p>"
        + _svg(flow)
        + "<table><tr><th>Kind</th><th>Item</th><th>Status</th><th>Covered by</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    return _document(f"{graph.key} - flow coverage", body)


def _layers(graph: FlowGraph) -> dict[str, int]:
    """Depth of each node: longest path from a start, ignoring edges that close a cycle."""
    order = [n.id for n in graph.nodes]
    out: dict[str, list[str]] = {n: [] for n in order}
    for link in graph.links:
        if link.source in out and link.target in out and link.target not in out[link.source]:
            out[link.source].append(link.target)
    starts = [n.id for n in graph.nodes if n.kind == "start"] or order[:1]
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}

    def visit(node: str) -> None:  # iterative DFS would be longer; graphs are small
        state[node] = 1
        for nxt in out[node]:
            if state.get(nxt) == 1:
                back.add((node, nxt))
            elif nxt not in state:
                visit(nxt)
        state[node] = 2

    for node in [*starts, *order]:
        if node not in state:
            visit(node)
    depth = dict.fromkeys(order, 0)
    for _ in order:  # longest path on the DAG left after removing back edges
        changed = False
        for src in order:
            for dst in out[src]:
                if (src, dst) not in back and depth[dst] < depth[src] + 1:
                    depth[dst] = depth[src] + 1
                    changed = True
        if not changed:
            break
    return depth


def _svg(flow: FlowCoverage) -> str:
    graph = flow.graph
    depth = _layers(graph)
    by_layer: dict[int, list[str]] = {}
    for node in graph.nodes:
        by_layer.setdefault(depth[node.id], []).append(node.id)
    widest = max((len(v) for v in by_layer.values()), default=1)
    width = MARGIN * 2 + widest * NODE_W + (widest - 1) * GAP_X
    height = MARGIN_Y * 2 + (max(by_layer, default=0) + 1) * (NODE_H + GAP_Y) - GAP_Y
    pos: dict[str, tuple[float, float]] = {}
    for layer, ids in by_layer.items():
        row = len(ids) * NODE_W + (len(ids) - 1) * GAP_X
        x0 = (width - row) / 2
        for i, node_id in enumerate(ids):
            pos[node_id] = (x0 + i * (NODE_W + GAP_X), MARGIN_Y + layer * (NODE_H + GAP_Y))

    parts = [
        f"<svg id='flow-graph' xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' data-nodes='{len(graph.nodes)}' "
        f"data-links='{len(graph.links)}'>",
        "<defs>",
        *(
            f"<marker id='arrow-{name}' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' "
            f"markerHeight='7' orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' "
            f"fill='{colour}'/></marker>"
            for name, colour in (("covered", COVERED[0]), ("missed", MISSED[0]))
        ),
        "</defs>",
    ]
    for index, link in enumerate(graph.links):
        if link.source in pos and link.target in pos:
            parts.append(_edge(flow, link, pos, index))
    for node in graph.nodes:
        x, y = pos[node.id]
        tests = sorted(flow.hits.get(node.item, ())) if node.item else []
        stroke, fill = (COVERED if tests else MISSED) if node.item else NEUTRAL
        state = "covered" if tests else "missed" if node.item else "label"
        title = (
            _title(node.id, tests)
            if node.item
            else f"router label {node.id[6:]}"
            if node.kind == "label"
            else node.id  # a graph's own start or end (LangGraph's __start__, __end__)
        )
        text = node.id[6:] if node.kind == "label" else node.id
        shape = (
            f"<ellipse cx='{x + NODE_W / 2}' cy='{y + NODE_H / 2}' rx='{NODE_W / 2 - 20}' "
            f"ry='{NODE_H / 2 - 4}' fill='{fill}' stroke='{stroke}' stroke-width='2'/>"
            if node.kind == "label"
            else f"<rect x='{x}' y='{y}' width='{NODE_W}' height='{NODE_H}' rx='8' "
            f"fill='{fill}' stroke='{stroke}' stroke-width='{3 if node.kind == 'router' else 2}'/>"
        )
        parts.append(
            f"<g class='node {state}' data-node='{html.escape(node.id)}'>"
            f"<title>{html.escape(title)}</title>{shape}"
            f"<text x='{x + NODE_W / 2}' y='{y + NODE_H / 2 + 4}' text-anchor='middle'>"
            f"{html.escape(_short(text))}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _edge(flow: FlowCoverage, link: Link, pos: dict[str, tuple[float, float]], index: int) -> str:
    tests = sorted(flow.hits.get(link.item, ()))
    state = "covered" if tests else "missed"
    colour = COVERED[0] if tests else MISSED[0]
    sx, sy = pos[link.source]
    tx, ty = pos[link.target]
    x1, y1 = sx + NODE_W / 2, sy + NODE_H
    x2, y2 = tx + NODE_W / 2, ty
    if ty <= sy:  # a cycle back up (or a same-layer edge): go round the right side
        x1, y1 = sx + NODE_W, sy + NODE_H / 2
        x2, y2 = tx + NODE_W, ty + NODE_H / 2
        bend = max(x1, x2) + 60 + 12 * (index % 4)
        path = f"M{x1},{y1} C{bend},{y1} {bend},{y2} {x2},{y2}"
        lx, ly, anchor = x1 + 8, y1 - 6, "start"
    elif ty - sy > NODE_H + GAP_Y:  # skips a layer: go round the left side, clear of nodes
        x1, y1 = sx, sy + NODE_H / 2
        x2, y2 = tx, ty + NODE_H / 2
        bend = min(x1, x2) - 60 - 12 * (index % 4)
        path = f"M{x1},{y1} C{bend},{y1} {bend},{y2} {x2},{y2}"
        lx, ly, anchor = x1 - 8, y1 - 6, "end"
    else:
        mid = (y1 + y2) / 2
        path = f"M{x1},{y1} C{x1},{mid} {x2},{mid} {x2},{y2}"
        lx, ly, anchor = (x1 + x2) / 2, mid, "middle"
    dash = "" if tests else " stroke-dasharray='5 4'"
    label = (
        f"<text x='{lx}' y='{ly}' text-anchor='{anchor}' fill='{colour}'>"
        f"{html.escape(link.label)}</text>"
        if link.label
        else ""
    )
    text = next((i.text for i in flow.graph.items if i.id == link.item), link.item)
    return (
        f"<g class='edge {state}'><title>{html.escape(_title(text, tests))}</title>"
        f"<path d='{path}' fill='none' stroke='{colour}' stroke-width='2'{dash} "
        f"marker-end='url(#arrow-{state})'/>{label}</g>"
    )


def _title(what: str, tests: list[str]) -> str:
    if not tests:
        return f"{what}: not covered"
    return f"{what}: covered by\n" + "\n".join(tests)


def _short(text: str, limit: int = 22) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
