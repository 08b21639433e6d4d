"""The framework-neutral trace model and its canonical text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from pytest_flows._internal.normal_form import elide
from pytest_flows._internal.trace import (
    MAX_VALUE_CHARS,
    Trace,
    TraceEvent,
    _canonical,
    _json_text,
    render_value,
)


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


def test_a_value_that_contains_itself_shows_where_it_recurs() -> None:
    loop: list[object] = []
    loop.append(loop)
    assert render_value({"loop": loop}) == '{"loop": ["[...]"]}'
    table: dict[str, object] = {}
    table["table"] = table
    assert render_value(table) == '{"table": "{...}"}'


class Graph(BaseModel):
    nodes: list[object] = []


def test_a_model_that_contains_itself_renders_without_recursing() -> None:
    graph = Graph()
    graph.nodes.append(graph)
    text = render_value(graph)
    assert "Graph(...)" in text and text.startswith('{"nodes": [')


class Thing:
    def __init__(self, name: str) -> None:
        self.name = name
        self.size = 2
        self._secret_cache = "hidden"


class Slotted:
    __slots__ = ("_private", "kind")

    def __init__(self) -> None:
        self.kind = "slot"
        self._private = 1


class Empty:
    pass


def test_plain_objects_render_by_type_and_public_fields_never_an_address() -> None:
    assert render_value(Thing("box")) == "Thing(name='box', size=2)"
    assert render_value([Thing("a")]) == "[\"Thing(name='a', size=2)\"]"
    assert render_value({"t": Thing("a")}) == '{"t": "Thing(name=\'a\', size=2)"}'
    assert render_value(Slotted()) == "Slotted(kind='slot')"
    assert render_value(Empty()) == "<Empty>"
    assert render_value(object()) == "<object>"
    for value in (Thing("x"), Empty(), [Empty()], lambda: 1, Thing("x").__init__):
        assert " at 0x" not in render_value(value), value


def test_an_address_inside_text_is_dropped_only_where_a_repr_put_it() -> None:
    message = render_value(f"ValueError: cannot ship {Empty()!r}")
    assert "Empty object>" in message and "0x" not in message
    assert render_value("loaded at 0x10 bytes") == "'loaded at 0x10 bytes'"


def test_an_object_that_contains_itself_shows_where_it_recurs() -> None:
    thing = Thing("loop")
    thing.me = thing  # type: ignore[attr-defined]
    assert render_value(thing) == "Thing(name='loop', size=2, me=Thing(...))"


def test_an_object_whose_repr_raises_renders_as_its_type() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert render_value(Broken()) == "<Broken>"


def test_bytes_render_losslessly() -> None:
    assert render_value(b"\xff") != render_value(b"\xfe")
    assert render_value(b"\xff") == "b'\\xff'"
    assert render_value({"raw": b"\xff"}) != render_value({"raw": b"\xfe"})
    assert render_value({"raw": b"ok"}) != render_value({"raw": "ok"})


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(_JSON)
def test_plain_data_renders_as_the_general_path_renders_it(value: object) -> None:
    # render_value takes a shortcut for data that is JSON already (a LangGraph node's
    # return value, a graph's state): the text must be the general path's, byte for byte.
    general = elide(_json_text(_canonical(value)).replace("\n", "\\n"), MAX_VALUE_CHARS)
    if isinstance(value, dict | list | tuple):
        assert render_value(value) == general
    deep: list[object] = [value]
    for _ in range(20):  # nesting past the shortcut's depth: the general path
        deep = [deep]
    assert render_value(deep) == elide(
        _json_text(_canonical(deep)).replace("\n", "\\n"), MAX_VALUE_CHARS
    )


def test_look_alike_values_take_the_general_path() -> None:
    import enum

    class Color(enum.StrEnum):
        RED = "red"

    class Tagged(dict):  # type: ignore[type-arg]
        pass

    assert render_value({"c": Color.RED}) == '{"c": "red"}'
    assert render_value(Tagged(b=1, a=2)) == '{"a": 2, "b": 1}'
    assert render_value({1: "x", "y": 2}) == render_value({"y": 2, 1: "x"})
    loop: list[object] = []
    loop.append(loop)
    assert render_value(loop) == '["[...]"]'
