"""The framework-neutral coverage core: counting trace lines, notes, data, report text."""

from __future__ import annotations

import json

import pytest

from pytest_flows._internal.coverage import notes
from pytest_flows._internal.coverage.counting import Counted, count
from pytest_flows._internal.coverage.data import CoverageData
from pytest_flows._internal.coverage.model import Branch, FlowGraph, Item, Node
from pytest_flows._internal.coverage.report import percent_text, report_lines
from pytest_flows._internal.trace import TraceEvent


def _graph(key: str = "m.Demo", name: str = "Demo") -> FlowGraph:
    """begin -> route (labels a/b); x listens a; y listens or(begin, x); z listens and(x, y)."""
    graph = FlowGraph(key=key, name=name, framework="test")
    for method in ("begin", "route", "x", "y", "z"):
        item = graph.add(Item(f"method:{method}", "method", method))
        graph.nodes.append(Node(method, "start" if method == "begin" else "listen", item))
    for label in ("a", "b"):
        graph.labels[f"route:{label}"] = graph.add(
            Item(f"label:route:{label}", "router label", f"route -> {label}")
        )

    def edge(condition: str, listener: str, text: str) -> str:
        return graph.add(Item(f"edge:{condition} -> {listener}", "edge", text))

    graph.branches.update(
        route=[Branch(edge("begin", "route", "begin -> route"), ("begin",))],
        x=[Branch(edge("a", "x", "route:a -> x"), ("a",))],
        y=[
            Branch(edge("begin", "y", "begin -> y"), ("begin",)),
            Branch(edge("x", "y", "x -> y"), ("x",)),
        ],
        z=[Branch(edge("and(x, y)", "z", "and(x, y) -> z"), ("x", "y"), True)],
    )
    return graph


def _ev(kind: str, name: str = "", **fields: str) -> TraceEvent:
    return TraceEvent(kind=kind, name=name, fields=tuple(fields.items()))


def _started(*graphs: FlowGraph) -> list[notes.Started]:
    return [notes.Started("crewai", g.name, g) for g in graphs]


def test_triggers_map_to_the_branch_that_fired() -> None:
    graph = _graph()
    trace = [
        _ev("flow.started", "Demo"),
        _ev("method.started", "begin", trigger="start"),
        _ev("method.finished", "begin"),
        _ev("method.started", "route", trigger="begin"),
        _ev("method.finished", "route"),
        _ev("router.chose", "route", label="a"),
        _ev("method.started", "x", trigger="route:a"),
        _ev("method.finished", "x"),
        _ev("method.started", "y", trigger="or(begin, x) via x"),
        _ev("method.finished", "y"),
        _ev("method.started", "z", trigger="and(x, y) via y"),
        _ev("flow.failed", "Demo", error="'boom'"),
    ]

    counted = count(trace, _started(graph))["m.Demo"]

    assert counted.covered == {
        "method:begin",
        "method:route",
        "method:x",
        "method:y",
        "label:route:a",
        "edge:begin -> route",
        "edge:a -> x",
        "edge:x -> y",  # the or_ branch that fired, not begin -> y
        "edge:and(x, y) -> z",  # the and_ completed, though z then failed
    }
    assert counted.started_only == {"z"}


def test_resumed_and_plain_starts_name_no_edge_and_unknown_labels_are_reported() -> None:
    graph = _graph()
    trace = [
        _ev("flow.started", "Demo"),
        _ev("method.started", "y", trigger="or(begin, x) (resumed)"),
        _ev("method.finished", "y"),
        _ev("router.chose", "route", label="c"),
    ]

    counted = count(trace, _started(graph))["m.Demo"]

    assert counted.covered == {"method:y"}
    assert counted.unexpected == {"route -> c"}


def test_a_listener_resumed_without_a_cause_is_credited_to_the_label_chosen_last() -> None:
    # crewai resumes pending feedback by re-running the router's listeners with no
    # causal event; the tracer writes trigger=start for them
    trace = [
        _ev("flow.started", "Demo"),
        _ev("method.finished", "route"),
        _ev("router.chose", "route", label="a"),
        _ev("method.started", "x", trigger="start"),
        _ev("method.started", "begin", trigger="start"),
    ]

    counted = count(trace, _started(_graph()))["m.Demo"]

    assert counted.covered == {"method:route", "label:route:a", "edge:a -> x"}


def test_runs_are_told_apart_by_their_notes_not_their_names() -> None:
    one, other = _graph("a.Demo"), _graph("b.Demo")
    trace = [
        _ev("flow.started", "Demo"),
        _ev("method.finished", "begin"),
        _ev("flow.finished", "Demo"),
        _ev("flow.started", "Demo"),
        _ev("method.finished", "x"),
        _ev("flow.finished", "Demo"),
    ]

    counted = count(trace, _started(one, other))

    assert counted["a.Demo"].covered == {"method:begin"}
    assert counted["b.Demo"].covered == {"method:x"}


def test_interleaved_runs_of_two_flows_each_get_their_own_lines() -> None:
    first = _graph("m.First", "First")
    second = FlowGraph(key="m.Second", name="Second", framework="test")
    second.nodes.append(Node("solo", "start", second.add(Item("method:solo", "method", "solo"))))
    trace = [
        _ev("flow.started", "First"),
        _ev("flow.started", "Second"),
        _ev("method.finished", "begin"),
        _ev("method.finished", "solo"),
        _ev("flow.finished", "Second"),
        _ev("method.finished", "route"),
    ]

    counted = count(trace, _started(first, second))

    assert counted["m.First"].covered == {"method:begin", "method:route"}
    assert counted["m.Second"].covered == {"method:solo"}


def test_a_run_without_a_note_is_not_counted() -> None:
    trace = [_ev("flow.started", "Demo"), _ev("method.finished", "begin")]
    assert count(trace, []) == {}


def test_noting_costs_nothing_when_off_and_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes, "_active", None)  # off, even if this suite runs with --flows-cov
    calls: list[str] = []

    def build() -> FlowGraph:
        calls.append("built")
        return _graph()

    def broken() -> FlowGraph:
        raise RuntimeError("no definition")

    notes.note("crewai", "Demo", build)
    assert calls == []
    with notes.collecting() as started:
        notes.note("crewai", "Demo", build)
        notes.note("crewai", "Bad", broken)
    notes.note("crewai", "Demo", build)
    assert calls == ["built"]
    assert [(s.name, s.graph is not None, s.problem) for s in started] == [
        ("Demo", True, ""),
        ("Bad", False, "RuntimeError: no definition"),
    ]


def _data(tests: dict[str, set[str]]) -> CoverageData:
    data = CoverageData()
    for test_id, covered in tests.items():
        data.add_test(test_id, {"m.Demo": Counted(_graph(), covered=covered)})
    return data


def test_combining_in_any_order_gives_the_same_data() -> None:
    a = _data({"t::a": {"method:begin", "edge:begin -> route"}})
    b = _data({"t::b": {"method:begin", "label:route:b"}})
    ab, ba = CoverageData(), CoverageData()
    ab.merge(a)
    ab.merge(b)
    ba.merge(b)
    ba.merge(a)

    assert json.dumps(ab.to_json()) == json.dumps(ba.to_json())
    flow = ab.to_json()["flows"][0]
    assert (flow["covered"], flow["total"]) == (3, 12)
    assert next(i for i in flow["items"] if i["id"] == "method:begin")["tests"] == ["t::a", "t::b"]
    again = CoverageData.from_json(json.loads(json.dumps(ab.to_json())))
    assert again.to_json() == ab.to_json()


def test_data_of_another_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format 99"):
        CoverageData.from_json({"format": 99, "flows": []})


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.0, "0%"), (0.4, "1%"), (49.5, "50%"), (99.6, "99%"), (100.0, "100%")],
)
def test_percentages_never_round_to_full_or_empty(value: float, text: str) -> None:
    assert percent_text(value) == text


def test_the_report_lists_missed_items_by_kind() -> None:
    data = _data({"t::a": {"method:begin", "method:route", "label:route:a"}})

    assert report_lines(data) == [
        "Flow    Items   Miss  Cover",
        "---------------------------",
        "m.Demo     12      9    25%",
        "---------------------------",
        "TOTAL      12      9    25%",
        "",
        "Missed:",
        "  m.Demo",
        "    methods: x, y, z",
        "    router labels: route -> b",
        "    edges: begin -> route, route:a -> x, begin -> y, x -> y, and(x, y) -> z",
    ]
