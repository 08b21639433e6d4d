"""The framework-neutral trace: what a flow runtime did, one event a line.

Adapters translate their framework's events into :class:`TraceEvent` s; the
trace renders to canonical text (used in failure reports and snapshots) with
ids normalized and no wall-clock times.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from pytest_flows._internal.normal_form import elide

__all__ = [
    "TRACE_FORMAT",
    "Trace",
    "TraceEvent",
    "cycle_mark",
    "model_values",
    "render_value",
    "stable_repr",
    "without_addresses",
]

#: The version of the trace's text, which users' snapshot files hold: 1 is what
#: pytest-flows 0.1.0 wrote, 2 today's (sub-workflow lines, one normal form of ids,
#: store lines of every persisting run). Raise it with any change to a line's text,
#: with a CHANGELOG.md entry under "Trace snapshot format" that names "trace format N"
#: (tests/test_changelog_habit.py holds both to it).
TRACE_FORMAT = 2

#: Longest rendering of one value before it is shortened with an ellipsis.
MAX_VALUE_CHARS = 120

#: How deep plain objects nested in plain objects are spelled out (deeper: ``<Type>``).
MAX_OBJECT_DEPTH = 4

# "<Thing object at 0x7f3a...>": the address differs in every process. Only
# inside <...>, so text that merely mentions "at 0x10" keeps it.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+(?=>)")


def without_addresses(text: str) -> str:
    """``text`` with the memory addresses of reprs such as ``<Thing object at 0x...>`` removed."""
    return _ADDRESS.sub("", text)


def _public_fields(value: Any) -> list[tuple[str, Any]]:
    """An object's public attributes, in the order its class set them."""
    fields: dict[str, Any] = {}
    for cls in reversed(type(value).__mro__):
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if not name.startswith("_") and hasattr(value, name):
                fields[name] = getattr(value, name)
    instance = getattr(value, "__dict__", None)
    if isinstance(instance, dict):
        fields.update((k, v) for k, v in instance.items() if not k.startswith("_"))
    return list(fields.items())


def _object_text(value: Any, seen: frozenset[int]) -> str:
    """``Thing(name='x', size=2)`` for an object whose repr is only its address."""
    name = type(value).__name__
    fields = _public_fields(value)
    if not fields:
        return f"<{name}>"
    if id(value) in seen:
        return f"{name}(...)"  # it contains itself
    if len(seen) >= MAX_OBJECT_DEPTH:
        return f"<{name}>"
    seen = seen | {id(value)}
    return name + "(" + ", ".join(f"{k}={_inline(v, seen)}" for k, v in fields) + ")"


_OBJECT_REPR: Any = object.__repr__


def _has_address_repr(value: Any) -> bool:
    return type(value).__repr__ is _OBJECT_REPR and not isinstance(value, type)


def stable_repr(value: Any, seen: frozenset[int] = frozenset()) -> str:
    """``repr(value)`` without memory addresses.

    A plain object (one whose repr would be ``<Thing object at 0x...>``) renders
    as its type name and public fields, ``Thing(name='x')``; any other repr
    that embeds an address (functions, bound methods...) has it removed.
    """
    if _has_address_repr(value):
        return _object_text(value, seen)
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not break the trace
        return f"<{type(value).__name__}>"
    return _ADDRESS.sub("", text)


def cycle_mark(value: Any) -> str:
    """What a value that contains itself shows where it recurs: ``[...]``, ``{...}``, ``M(...)``."""
    if isinstance(value, list | tuple):
        return "[...]"
    if isinstance(value, dict | set | frozenset):
        return "{...}"
    return f"{type(value).__name__}(...)"


def model_values(model: BaseModel) -> dict[str, Any]:
    """A pydantic model's fields by name (its python-mode dump when it has no cycle)."""
    try:
        return model.model_dump(mode="python")
    except (ValueError, RecursionError):  # it contains itself: walk the fields instead
        fields = {name: getattr(model, name) for name in type(model).model_fields}
        fields.update(model.__pydantic_extra__ or {})
        return fields


def _inline(value: Any, seen: frozenset[int]) -> str:
    """One field of an object: containers as JSON, anything else as its stable repr."""
    if isinstance(value, BaseModel | dict | list | tuple | set | frozenset):
        if id(value) in seen:
            return cycle_mark(value)
        return _json_text(_canonical(value, seen))
    return stable_repr(value, seen)


def _canonical(value: Any, seen: frozenset[int] = frozenset()) -> Any:
    """``value`` as JSON-able data: sets sorted, bytes and plain objects as stable text.

    Sets iterate in hash order, which changes with PYTHONHASHSEED; a trace must
    not. Where a value contains itself, the repeat is its :func:`cycle_mark`.
    """
    if isinstance(value, BaseModel | dict | list | tuple | set | frozenset):
        if id(value) in seen:
            return cycle_mark(value)
        seen = seen | {id(value)}
    if isinstance(value, BaseModel):
        value = model_values(value)
    if isinstance(value, bytes | bytearray):
        return repr(value)  # lossless, and never mistaken for text
    if isinstance(value, dict):
        return {k: _canonical(v, seen) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v, seen) for v in value]
    if isinstance(value, set | frozenset):
        items = [_canonical(v, seen) for v in value]
        return sorted(items, key=_json_text)
    if _has_address_repr(value):
        return _object_text(value, seen)
    return value


#: ``json.dumps(..., sort_keys=True, ensure_ascii=False)`` without building an encoder
#: each call (most of what a small value's rendering cost).
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def _json_text(value: Any) -> str:
    jsonable = to_jsonable_python(value, fallback=stable_repr)
    return _ENCODER.encode(jsonable)


#: Types that ``_canonical`` and ``to_jsonable_python`` hand to ``json.dumps`` as they are
#: (exact types: a subclass may render otherwise, e.g. an enum or a str with a __repr__).
_SCALARS = frozenset({str, int, float, bool, type(None)})
#: Nesting a plain value may have for the shortcut (deeper, or a cycle: the general path).
_PLAIN_DEPTH = 16


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is JSON data already (scalars, lists, tuples, dicts with str keys):
    then its canonical form is itself, and ``json.dumps`` renders it as the general path
    does, at a fraction of the cost (a node's return value, a graph's state)."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if depth >= _PLAIN_DEPTH:
        return False
    if kind is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    if kind is list or kind is tuple:
        return all(_plain(v, depth + 1) for v in value)
    return False


def render_value(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A short, stable text form of ``value`` for a trace line.

    Pydantic models and containers render as JSON with sorted keys and sorted
    sets, so the text depends neither on insertion nor on hash order; bytes as
    their repr (``b'\\xff'``); plain objects as ``Thing(field=...)``; anything
    else uses ``repr``, without memory addresses. Where a value contains
    itself, the repeat shows as ``[...]`` / ``{...}``.
    """
    if isinstance(value, set | frozenset):
        text = "{" + ", ".join(sorted(_inline(v, frozenset()) for v in value)) + "}"
    elif type(value) in (dict, list, tuple) and _plain(value):
        text = _ENCODER.encode(value)
    elif isinstance(value, BaseModel | dict | list | tuple):
        text = _json_text(_canonical(value))
    else:
        text = stable_repr(value)
    return elide(text.replace("\n", "\\n"), limit)


class TraceEvent(BaseModel):
    """One thing the runtime did.

    ``kind`` is a short dotted verb (``flow.started``, ``method.finished``,
    ``race.won``, ...), ``name`` what it happened to, ``fields`` the details in
    the order the adapter gives them, ``depth`` how many runs it is nested in.
    """

    model_config = ConfigDict(frozen=True)

    kind: str
    name: str = ""
    fields: tuple[tuple[str, str], ...] = ()
    #: How deep inside another run it happened (a sub-workflow's lines: 1), shown as
    #: two spaces of indent each.
    depth: int = 0

    def get(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.fields:
            if k == key:
                return v
        return default

    def render(self) -> str:
        parts = [self.kind.replace(".", " ", 1)]
        if self.name:
            parts.append(self.name)
        parts.extend(f"{k}={v}" for k, v in self.fields)
        return "  " * self.depth + " ".join(parts)

    def __str__(self) -> str:
        return self.render()


class Trace(BaseModel):
    """An ordered list of :class:`TraceEvent` s with a canonical text form."""

    events: list[TraceEvent] = Field(default_factory=list)

    def __iter__(self) -> Iterator[TraceEvent]:  # type: ignore[override]
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)

    def render(self) -> str:
        """Canonical text: one event a line, ending in a newline."""
        return "".join(event.render() + "\n" for event in self.events)

    def __str__(self) -> str:
        return self.render()

    def lines(self) -> list[str]:
        return [event.render() for event in self.events]

    def of_kind(self, *kinds: str) -> list[TraceEvent]:
        return [event for event in self.events if event.kind in kinds]

    def names(self, kind: str) -> list[str]:
        """Names of the events of one kind, in order: ``trace.names("method.started")``."""
        return [event.name for event in self.events if event.kind == kind]

    def diff(self, other: Trace | str, *, context: int = 3) -> str:
        """A unified diff from ``self`` to ``other`` ('' when they render the same)."""
        theirs = other if isinstance(other, str) else other.render()
        return "".join(
            difflib.unified_diff(
                self.render().splitlines(keepends=True),
                theirs.splitlines(keepends=True),
                fromfile="expected",
                tofile="actual",
                n=context,
            )
        )

    @classmethod
    def of(cls, events: Iterable[TraceEvent]) -> Trace:
        return cls(events=list(events))
