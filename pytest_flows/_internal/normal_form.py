"""One normal form of the values that differ between two runs of the same flow.

Two runs that do the same thing still differ in a few values: the uuids
drawn (a state's ``str(uuid4())``, a checkpoint id, a flow id in a paused
run's repr), the call ids the fake model numbers (``call-<n>-<k>`` and the
``occ-call-<n>-<k>`` occurrence ids Agent Framework turns into tool-approval
request ids) and wall-clock timestamps. Everything that compares two runs -
the trace's text, snapshots, state and outcome comparisons, restore
equivalence, seed exploration, golden replay - compares them through one
:class:`Normalizer`: uuids become ``<uuid:N>`` and call ids ``<call:N>``,
numbered by first appearance, and timestamps ``<ts>``. The raw values stay
where they were (``run.output``, ``run.state``, request ids);
:attr:`Normalizer.originals` maps each placeholder back.

:func:`elide` shortens a long text without cutting such a value in half (a
half uuid would escape the normalizer and change with the seed): the cut is
measured on the normalized text.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import re
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

__all__ = [
    "ELLIPSIS",
    "Normalizer",
    "Timestamp",
    "comparable",
    "elide",
    "normal_lines",
    "normal_text",
]

ELLIPSIS = "…"

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_UUID_HEX = r"[0-9a-f]{32}"
_ISO_TS = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
# The fake model's tool-call ids (call-<model call>-<k>) and the occurrence ids
# built from them (occ-call-<n>-<k>): numbered in call order, which concurrent
# agents change with the seed.
_CALL_ID = r"(?:occ-)?call-\d+-\d+"

#: Every run-specific value, one alternative each (named groups say which).
_RUN_SPECIFIC = re.compile(
    rf"\b(?:(?P<uuid>{_UUID})|(?P<hex>{_UUID_HEX})|(?P<ts>{_ISO_TS})|(?P<call>{_CALL_ID}))\b"
)
#: The fewest characters any alternative matches (``call-1-1``).
_SHORTEST_MATCH = len("call-1-1")
#: How wide a placeholder counts when :func:`elide` measures (``<uuid:N>``): the cut
#: must not depend on how many ids came before.
_PLACEHOLDER_WIDTH = {"uuid": 8, "hex": 8, "ts": 4, "call": 8}


@dataclasses.dataclass(frozen=True)
class Timestamp:
    """A date or time in a normalized value: its kind kept, its value not (clocks move)."""

    kind: str

    def __repr__(self) -> str:
        return "<ts>" if self.kind == "datetime" else f"<{self.kind}>"


class Normalizer:
    """Replaces run-specific values with stable placeholders, in first-seen order.

    Uuids (with or without dashes) become ``<uuid:1>``, ``<uuid:2>``, ...; the
    fake model's call ids ``<call:1>``, ... (``occ-call-3-1`` becomes
    ``occ-<call:1>``); ISO timestamps ``<ts>``. One normalizer per compared
    whole (a trace, a run's outcome) keeps the numbering consistent inside it.
    """

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}
        self._calls: dict[str, str] = {}
        self._names: dict[str, str] = {}
        #: placeholder -> the first raw value it stands for
        self.originals: dict[str, str] = {}

    def copy(self) -> Normalizer:
        """A normalizer that numbers on from this one's placeholders, independently."""
        twin = Normalizer()
        twin._ids, twin._calls, twin._names = dict(self._ids), dict(self._calls), dict(self._names)
        twin.originals = dict(self.originals)
        return twin

    # -- text ---------------------------------------------------------------------
    def _replace(self, match: re.Match[str]) -> str:
        raw = match.group(0)
        if match.group("ts") is not None:
            return "<ts>"
        if match.group("call") is not None:
            prefix, key = ("occ-", raw[4:]) if raw.startswith("occ-") else ("", raw)
            if key not in self._calls:
                self._calls[key] = f"<call:{len(self._calls) + 1}>"
                self.originals[self._calls[key]] = key
            return prefix + self._calls[key]
        key = raw.lower().replace("-", "")
        if key not in self._ids:
            self._ids[key] = f"<uuid:{len(self._ids) + 1}>"
            self.originals[self._ids[key]] = raw
        return self._ids[key]

    def text(self, value: str) -> str:
        """``value`` with every run-specific value replaced."""
        if len(value) < _SHORTEST_MATCH:
            # Most trace text (method names, small outputs) is shorter than any id.
            return value
        return _RUN_SPECIFIC.sub(self._replace, value)

    def lines(self, lines: Iterable[str]) -> list[str]:
        return [self.text(line) for line in lines]

    # -- values -------------------------------------------------------------------
    def value(self, value: Any) -> Any:
        """``value`` with its types kept and its run-specific parts normalized.

        Strings go through :meth:`text`; ``uuid.UUID`` s become their
        placeholder; dates and times a :class:`Timestamp` of their kind.
        Containers keep their type (an int key stays an int key, a tuple a
        tuple); dataclasses, pydantic models and mappings become
        ``{"__type__": name, field: ...}``; so do objects without an ``__eq__``
        of their own (Agent Framework's ``AgentResponse``, ``Message``), whose
        string ``id`` / ``*_id`` fields (counters of whoever answered) are
        renumbered as ``<id:N>`` too - so two equal responses compare equal.
        """
        return _normal(value, self, frozenset())

    def identifier(self, value: str) -> str:
        """An id whatever its form (a provider's ``resp-3``): ``<id:N>`` by first appearance;
        one that holds a uuid or a call id is normalized as text instead."""
        normal = self.text(value)
        if normal != value:
            return normal
        if value not in self._names:
            self._names[value] = f"<id:{len(self._names) + 1}>"
            self.originals[self._names[value]] = value
        return self._names[value]


def normal_text(value: str) -> str:
    """``value`` normalized on its own (placeholders numbered within it)."""
    return Normalizer().text(value)


def normal_lines(lines: Iterable[str]) -> list[str]:
    """``lines`` normalized as one whole (placeholders numbered across them)."""
    return Normalizer().lines(lines)


_PLACEHOLDER = re.compile(r"<(uuid|call|id):\d+>")


def comparable(text: str) -> str:
    """``text`` normalized, with every placeholder renumbered from 1 by first appearance.

    For comparing a value recorded in one place with today's: a golden's output
    stored raw (recorded before outputs were normalized) or numbered as its
    run's trace numbered it compares equal to the same output of another run.
    """
    normal = normal_text(text)
    seen: dict[str, str] = {}
    counts: dict[str, int] = {}

    def renumber(match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in seen:
            kind = match.group(1)
            counts[kind] = counts.get(kind, 0) + 1
            seen[token] = f"<{kind}:{counts[kind]}>"
        return seen[token]

    return _PLACEHOLDER.sub(renumber, normal)


def elide(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters with an ellipsis, run-specific values whole.

    The length is measured as if each uuid, call id and timestamp were its
    placeholder, and a value the cut would split is kept whole: two runs whose
    texts differ only in those values are cut at the same place, and the
    normalizer sees every id entire.
    """
    if len(text) <= limit:
        return text
    budget = limit - 1  # room for the ellipsis
    width = 0
    position = 0
    for match in _RUN_SPECIFIC.finditer(text):
        plain = match.start() - position
        if width + plain >= budget:
            return text[: position + budget - width] + ELLIPSIS
        width += plain
        kind = match.lastgroup or "uuid"
        width += _PLACEHOLDER_WIDTH[kind]
        position = match.end()
        if width >= budget:
            return text[:position] + (ELLIPSIS if position < len(text) else "")
    if width + len(text) - position <= limit:
        return text  # short enough once its ids are placeholders
    return text[: position + budget - width] + ELLIPSIS


# -- typed normal form -------------------------------------------------------------------

#: Fields of a plain object that only its producer's bookkeeping fills: the
#: provider's raw payload, duplicated in the object's own fields.
_BOOKKEEPING = frozenset({"raw_representation"})
_MAX_DEPTH = 20


def _normal(value: Any, normalizer: Normalizer, seen: frozenset[int]) -> Any:
    if isinstance(value, str):
        return normalizer.text(value)
    if value is None or isinstance(value, bool | int | float | bytes | enum.Enum):
        return value
    if isinstance(value, uuid.UUID):
        return normalizer.text(str(value))
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return Timestamp(type(value).__name__)
    if id(value) in seen or len(seen) > _MAX_DEPTH:
        return f"<{type(value).__qualname__}>"
    inner = seen | {id(value)}
    if type(value) is dict:
        return {
            _normal(k, normalizer, inner): _normal(v, normalizer, inner) for k, v in value.items()
        }
    if type(value) in (list, tuple):
        return type(value)(_normal(v, normalizer, inner) for v in value)
    if type(value) in (set, frozenset):
        # Hash order: normalize in a stable order so ids number the same every run.
        items = sorted(value, key=repr)
        return type(value)(_normal(v, normalizer, inner) for v in items)
    if isinstance(value, BaseModel):
        fields = {name: getattr(value, name, None) for name in type(value).model_fields}
        return _fields_of(value, fields, normalizer, inner)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
        return _fields_of(value, fields, normalizer, inner)
    if isinstance(value, Mapping):
        return _fields_of(value, dict(value), normalizer, inner)
    if not _defines_eq(type(value)) and hasattr(value, "__dict__"):
        public: dict[str, Any] = {}
        for name, field in vars(value).items():
            if name.startswith("_") or name in _BOOKKEEPING:
                continue
            is_id = isinstance(field, str) and (name == "id" or name.endswith("_id"))
            public[name] = normalizer.identifier(field) if is_id else field
        return _fields_of(value, public, normalizer, inner)
    return value


def _defines_eq(cls: type) -> bool:
    return any("__eq__" in vars(klass) for klass in cls.__mro__ if klass is not object)


def _fields_of(
    value: Any, fields: Mapping[Any, Any], normalizer: Normalizer, seen: frozenset[int]
) -> Any:
    return {
        "__type__": type(value).__qualname__,
        **{k: _normal(v, normalizer, seen) for k, v in fields.items()},
    }
