"""The framework-neutral trace model and its canonical text."""

from __future__ import annotations

from pydantic import BaseModel

from pytest_flows.trace import Trace, TraceEvent, render_value


class Point(BaseModel):
    y: int
    x: int


def test_render_is_one_event_a_line() -> None:
    trace = Trace.of(
        [
            TraceEvent(kind="flow.started", name="Demo"),
            TraceEvent(kind="method.started", name="a", fields=(("trigger", "start"),)),
            TraceEvent(kind="method.finished", name="a", fields=(("output", "1"),)),
        ]
    )
    assert trace.render() == (
        "flow started Demo\nmethod started a trigger=start\nmethod finished a output=1\n"
    )
    assert trace.names("method.started") == ["a"]
    assert trace.of_kind("flow.started")[0].name == "Demo"
    assert trace.events[1].get("trigger") == "start"


def test_values_render_stably() -> None:
    assert render_value({"b": 1, "a": [2, 3]}) == '{"a": [2, 3], "b": 1}'
    assert render_value(Point(y=1, x=2)) == '{"x": 2, "y": 1}'
    assert render_value(frozenset({"b", "a"})) == "{'a', 'b'}"
    assert "\n" not in render_value("two\nlines")
    long = render_value("x" * 500)
    assert len(long) == 120 and long.endswith("…")


def test_diff_shows_what_changed() -> None:
    before = Trace.of([TraceEvent(kind="method.started", name="a")])
    after = Trace.of([TraceEvent(kind="method.started", name="b")])
    diff = before.diff(after)
    assert "-method started a" in diff and "+method started b" in diff
    assert before.diff(before) == ""


class Tagged(BaseModel):
    tags: set[str]


def test_sets_inside_values_render_sorted() -> None:
    assert render_value({"tags": {"b", "c", "a"}}) == '{"tags": ["a", "b", "c"]}'
    assert render_value(Tagged(tags={"z", "y"})) == '{"tags": ["y", "z"]}'
    assert render_value([{3, 1, 2}]) == "[[1, 2, 3]]"


def test_a_value_that_contains_itself_falls_back_to_repr() -> None:
    loop: list[object] = []
    loop.append(loop)
    assert render_value({"loop": loop}) == "{'loop': [[...]]}"
