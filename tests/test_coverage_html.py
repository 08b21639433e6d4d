"""The HTML coverage report, rendered by a real headless Chromium and checked on screen.

Skipped where no Chromium is installed (CI does not install one); Pillow reads
the screenshot.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_flows._internal.coverage.counting import Counted
from pytest_flows._internal.coverage.data import CoverageData
from pytest_flows._internal.coverage.html import NODE_H, NODE_W, write_html
from pytest_flows._internal.coverage.model import Branch, FlowGraph, Item, Link, Node

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Fills of covered and missed nodes (see html.py).
GREEN, RED = (0xC8, 0xE6, 0xC9), (0xFF, 0xCD, 0xD2)


def _data() -> CoverageData:
    """start -> route; route:yes -> accept (covered); route:no -> reject (missed)."""
    graph = FlowGraph(key="shop.Orders", name="Orders", framework="crewai")
    kinds = {"start": "start", "route": "router", "accept": "listen", "reject": "listen"}
    for name, kind in kinds.items():
        graph.nodes.append(Node(name, kind, graph.add(Item(f"method:{name}", "method", name))))
    for label in ("yes", "no"):
        graph.add(Item(f"label:route:{label}", "router label", f"route -> {label}"))
    for source, target, label in (
        ("start", "route", ""),
        ("route", "accept", "yes"),
        ("route", "reject", "no"),
    ):
        item = graph.add(
            Item(f"edge:{label or source} -> {target}", "edge", f"{source} -> {target}")
        )
        graph.links.append(Link(source, target, label, item))
        graph.branches[target] = [Branch(item, (label or source,))]
    covered = {
        "method:start",
        "method:route",
        "method:accept",
        "label:route:yes",
        "edge:start -> route",
        "edge:yes -> accept",
    }
    data = CoverageData()
    data.add_test("test_orders.py::test_accepted", {graph.key: Counted(graph, covered=covered)})
    return data


def test_the_page_holds_the_coloured_graph_and_the_tests(tmp_path: Path) -> None:
    index = write_html(_data(), tmp_path / "report")

    page = (tmp_path / "report" / "shop.Orders.html").read_text()
    assert "shop.Orders: 6/9 (67%)" in page
    assert "data-nodes='4' data-links='3'" in page
    assert page.count("<g class='node covered'") == 3
    assert page.count("<g class='node missed'") == 1
    assert page.count("<g class='edge covered'") == 2
    assert "route -&gt; reject: not covered" in page
    assert "accept: covered by\ntest_orders.py::test_accepted" in page
    assert "http" not in page.replace("http://www.w3.org/2000/svg", "")  # offline: nothing fetched
    assert "<a href='shop.Orders.html'>shop.Orders</a>" in index.read_text()


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (apt-get install chromium) to render the HTML report")


def _screenshot(page: Path, png: Path, profile: Path) -> None:
    browser = _browser()
    command = [
        browser,
        "--headless",
        "--no-sandbox",  # as root in containers
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        # a local page only: anything else would go to a closed loopback port
        "--proxy-server=127.0.0.1:9",
        f"--user-data-dir={profile}",
        "--window-size=900,700",
        f"--screenshot={png}",
        page.as_uri(),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=120)


def test_chromium_renders_the_graph(tmp_path: Path) -> None:
    image_module = pytest.importorskip("PIL.Image")
    write_html(_data(), tmp_path / "report")
    png = tmp_path / "orders.png"

    _screenshot(tmp_path / "report" / "shop.Orders.html", png, tmp_path / "profile")

    with image_module.open(png) as image:
        colours = {colour: n for n, colour in image.convert("RGB").getcolors(1 << 24)}
    node = NODE_W * NODE_H
    green, red = colours.get(GREEN, 0), colours.get(RED, 0)
    # three covered boxes and one missed box, drawn (the legend alone is a few hundred pixels)
    assert green > 2.5 * node, green
    assert 0.7 * node < red < 1.5 * node, red
