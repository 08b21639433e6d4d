"""Every file a test writes is that test's alone (issue 26 #7, #8)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pytest

from pytest_flows._internal.coverage.counting import Counted
from pytest_flows._internal.coverage.data import CoverageData
from pytest_flows._internal.coverage.html import write_html
from pytest_flows._internal.coverage.model import FlowGraph, Item, Node
from pytest_flows._internal.file_names import escaped
from pytest_flows._internal.golden.files import golden_path

SOURCE = """
import pytest


def test_plain():
    pass


class TestA:
    def test_x(self):
        pass


class TestB:
    def test_x(self):
        pass


@pytest.mark.parametrize("v", ["a b", "a/b", "a_b", "a%20b", "x]" + ".TestA.test_x[", "."])
def test_p(v):
    pass
"""


def test_golden_files_of_two_tests_never_coincide(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_names=SOURCE)
    items, _ = pytester.inline_genitems("-p", "no:syrupy", "-p", "no:randomly")
    paths = [golden_path(item) for item in items]

    assert len(set(paths)) == len(items) == 9
    names = [p.name for p in paths]
    assert names[:3] == ["test_plain.json", "TestA.test_x.json", "TestB.test_x.json"]
    assert "test_p[a%20b].json" in names
    assert "test_p[a%2Fb].json" in names
    assert "test_p[a_b].json" in names
    assert "test_p[a%2520b].json" in names
    assert all(p.parent == paths[0].parent for p in paths)  # no id escapes the directory


def test_escaping_is_reversible_and_keeps_plain_names() -> None:
    for text in ("test_x", "a b", "a/b", "a_b", "a%20b", "ü", "..", ""):
        assert unquote(escaped(text)) == text or text in {"", ".."}
    assert escaped("test_x") == "test_x"
    assert len(escaped("x" * 1000)) <= 150
    assert escaped("x" * 1000) != escaped("x" * 999)


def _flow(key: str) -> tuple[str, Counted]:
    graph = FlowGraph(key=key, name=key, framework="agent_framework")
    graph.nodes.append(Node("start", "start", graph.add(Item("method:start", "method", "start"))))
    return key, Counted(graph, covered={"method:start"})


def test_coverage_pages_of_two_workflows_never_coincide(tmp_path: Path) -> None:
    data = CoverageData()
    data.add_test("t.py::test_a", dict([_flow("help desk"), _flow("help/desk"), _flow("index")]))

    index = write_html(data, tmp_path / "report")

    pages = sorted(p.name for p in (tmp_path / "report").iterdir())
    assert len(pages) == 4  # three flows and the index
    text = index.read_text(encoding="utf-8")
    for page in pages:
        if page != "index.html":
            assert (tmp_path / "report" / unquote(_href(text, page))).is_file()
            assert "help" in page or "ndex" in page


def _href(index: str, page: str) -> str:
    from urllib.parse import quote

    href = quote(page)
    assert f"href='{href}'" in index
    return href
