"""The framework-neutral trace: what a flow runtime did, one event a line.

Adapters translate their framework's events into :class:`TraceEvent` s; the
trace renders to canonical text (used in failure reports and snapshots) with
ids normalized and no wall-clock times.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

__all__ = ["Trace", "TraceEvent", "render_value"]

#: Longest rendering of one value before it is shortened with an ellipsis.
MAX_VALUE_CHARS = 120


def _canonical(value: Any, seen: frozenset[int] = frozenset()) -> Any:
    """``value`` with every set turned into a sorted list, recursively.

    Sets iterate in hash order, which changes with PYTHONHASHSEED; a trace must not.
    A container that contains itself raises ValueError (the caller falls back to repr).
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="python")
    if isinstance(value, dict | list | tuple | set | frozenset):
        if id(value) in seen:
            raise ValueError("circular reference")
        seen = seen | {id(value)}
    if isinstance(value, dict):
        return {k: _canonical(v, seen) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v, seen) for v in value]
    if isinstance(value, set | frozenset):
        items = [_canonical(v, seen) for v in value]
        return sorted(items, key=lambda v: json.dumps(to_jsonable_python(v, fallback=repr)))
    return value


def render_value(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A short, stable text form of ``value`` for a trace line.

    Pydantic models and containers render as JSON with sorted keys and sorted
    sets, so the text depends neither on insertion nor on hash order; anything
    else uses ``repr``.
    """
    if isinstance(value, set | frozenset):
        text = "{" + ", ".join(sorted(repr(v) for v in value)) + "}"
    elif isinstance(value, BaseModel | dict | list | tuple):
        try:
            jsonable = to_jsonable_python(_canonical(value), fallback=repr)
            text = json.dumps(jsonable, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        text = repr(value)
    text = text.replace("\n", "\\n")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


class TraceEvent(BaseModel):
    """One thing the runtime did.

    ``kind`` is a short dotted verb (``flow.started``, ``method.finished``,
    ``race.won``, ...), ``name`` what it happened to, ``fields`` the details in
    the order the adapter gives them.
    """

    model_config = ConfigDict(frozen=True)

    kind: str
    name: str = ""
    fields: tuple[tuple[str, str], ...] = ()

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
        return " ".join(parts)

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
