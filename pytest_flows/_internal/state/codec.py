"""Framework-neutral helpers for stored states: field paths, differences, diffs.

A store that pushes every save through a production codec needs to say *which*
field broke and *how*: :func:`find_unserializable` locates the value a codec
chokes on, :func:`differences` lists what a save -> load round trip changed
(``datetime`` became ``str``, a ``set`` became a ``list``, an ``int`` key became
a ``str`` key...), and :func:`diff_snapshots` renders two snapshots as a short,
readable, line-per-field diff.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from pytest_flows._internal.trace import render_value

__all__ = [
    "FieldChange",
    "Unserializable",
    "describe_type",
    "diff_snapshots",
    "differences",
    "find_unserializable",
    "format_path",
    "without_keys",
]

#: A step into a value: a mapping key, a sequence index or an attribute name.
PathPart = Any


def describe_type(value: Any) -> str:
    """``datetime.datetime``, ``str``, ``myapp.models.Money``: a type as a reader knows it."""
    cls = type(value)
    # Under the harness's frozen clock, datetime.now() makes freezegun's
    # FakeDatetime; say what the user wrote instead.
    while cls.__module__ == "freezegun.api" and cls.__bases__:
        cls = cls.__bases__[0]
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def format_path(parts: tuple[PathPart, ...], root: str = "") -> str:
    """``items[0].name``, ``pairs[(1, 2)]`` from the steps taken into a value."""
    text = root
    for part in parts:
        if isinstance(part, _Attr):
            text = f"{text}.{part.name}" if text else part.name
        elif isinstance(part, _Index):
            text = f"{text}[{int(part)}]"
        elif isinstance(part, str) and part.isidentifier():
            text = f"{text}.{part}" if text else part
        else:
            text = f"{text}[{part!r}]"
    return text or "<root>"


class _Index(int):
    """A sequence position (so it renders as ``[0]`` even at the root)."""


@dataclasses.dataclass(frozen=True)
class _Attr:
    name: str


@dataclasses.dataclass(frozen=True)
class Unserializable:
    """Where a codec failed: the field path, the offending value, and why."""

    path: str
    value: Any
    reason: str
    is_key: bool = False

    def describe(self) -> str:
        what = "key" if self.is_key else "value"
        shown = render_value(self.value, limit=60)
        return f"field {self.path!r} holds a {what} of type {describe_type(self.value)} ({shown})"


def _children(value: Any) -> Iterator[tuple[PathPart, Any]]:
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield _Attr(name), getattr(value, name, None)
        extra = value.__pydantic_extra__ or {}
        for name, item in extra.items():
            yield _Attr(name), item
    elif isinstance(value, Mapping):
        yield from value.items()
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield _Index(index), item
    elif isinstance(value, set | frozenset):
        for index, item in enumerate(sorted(value, key=repr)):
            yield _Index(index), item
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield _Attr(f.name), getattr(value, f.name, None)


def find_unserializable(
    value: Any, probe: Callable[[Any], object], *, root: str = ""
) -> Unserializable | None:
    """The deepest field of ``value`` that ``probe`` (a codec call) fails on, or None.

    ``probe(x)`` must raise for a value the codec cannot encode. Mapping keys
    are probed as ``{key: None}``. A reference cycle is reported where it
    closes.
    """
    try:
        probe(value)
    except Exception as exc:
        return _locate(value, probe, (), set(), root, exc)
    return None


def _locate(
    value: Any,
    probe: Callable[[Any], object],
    path: tuple[PathPart, ...],
    seen: set[int],
    root: str,
    error: BaseException,
) -> Unserializable:
    if id(value) in seen:
        return Unserializable(format_path(path, root), value, "reference cycle")
    seen = seen | {id(value)}
    if isinstance(value, Mapping):
        for key in list(value.keys()):
            try:
                probe({key: None})
            except Exception as exc:
                return Unserializable(format_path((*path, key), root), key, str(exc), is_key=True)
    for part, child in _children(value):
        if id(child) in seen:
            return Unserializable(format_path((*path, part), root), child, "reference cycle")
        try:
            probe(child)
        except Exception as exc:
            return _locate(child, probe, (*path, part), seen, root, exc)
    return Unserializable(format_path(path, root), value, str(error))


@dataclasses.dataclass(frozen=True)
class FieldChange:
    """One field a save -> load round trip did not give back unchanged."""

    path: str
    before: Any
    after: Any
    missing: bool = False  # the field is gone after the round trip
    added: bool = False  # the field only exists after the round trip

    def describe(self) -> str:
        if self.missing:
            return f"{self.path}: {describe_type(self.before)} was lost ({_short(self.before)})"
        if self.added:
            return f"{self.path}: appeared ({describe_type(self.after)} {_short(self.after)})"
        if type(self.before) is not type(self.after):
            return (
                f"{self.path}: {describe_type(self.before)} came back as "
                f"{describe_type(self.after)} ({_short(self.before)} -> {_short(self.after)})"
            )
        return f"{self.path}: {_short(self.before)} came back as {_short(self.after)}"


def _short(value: Any) -> str:
    return render_value(value, limit=60)


def _same_leaf(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def differences(before: Any, after: Any, *, root: str = "") -> list[FieldChange]:
    """Every field whose value or type differs between ``before`` and ``after``.

    Containers are compared structurally: a ``tuple`` that comes back as a
    ``list`` (or a ``set`` as a ``list``) is one change at its own path; an
    ``int`` key that comes back as ``str`` is reported on that key.
    """
    changes: list[FieldChange] = []
    _compare(before, after, (), root, changes)
    return changes


def _as_mapping(value: Any) -> Mapping[Any, Any] | None:
    if isinstance(value, BaseModel):
        return {name: getattr(value, name, None) for name in type(value).model_fields}
    if isinstance(value, Mapping):
        return value
    return None


def _compare(a: Any, b: Any, path: tuple[PathPart, ...], root: str, out: list[FieldChange]) -> None:
    both_models = isinstance(a, BaseModel) and type(a) is type(b)
    ma, mb = _as_mapping(a), _as_mapping(b)
    both_maps = isinstance(a, Mapping) and isinstance(b, Mapping)
    if ma is not None and mb is not None and (both_models or both_maps):
        for key in ma:
            if key in mb:
                _compare(ma[key], mb[key], (*path, key), root, out)
                continue
            twin = next((k for k in mb if k not in ma and str(k) == str(key)), None)
            if twin is not None:
                out.append(FieldChange(format_path((*path, key), root) + " (key)", key, twin))
                _compare(ma[key], mb[twin], (*path, key), root, out)
            else:
                out.append(
                    FieldChange(format_path((*path, key), root), ma[key], None, missing=True)
                )
        for key in mb:
            if key not in ma and not any(str(k) == str(key) for k in ma if k not in mb):
                out.append(FieldChange(format_path((*path, key), root), None, mb[key], added=True))
        return
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if type(a) is not type(b):
            out.append(FieldChange(format_path(path, root), a, b))
            return
        for index in range(max(len(a), len(b))):
            where = (*path, _Index(index))
            if index >= len(b):
                out.append(FieldChange(format_path(where, root), a[index], None, missing=True))
            elif index >= len(a):
                out.append(FieldChange(format_path(where, root), None, b[index], added=True))
            else:
                _compare(a[index], b[index], where, root, out)
        return
    if not _same_leaf(a, b):
        out.append(FieldChange(format_path(path, root), a, b))


def without_keys(snapshot: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """A copy of ``snapshot`` without ``keys`` (say ``"id"``) for comparisons."""
    return {k: v for k, v in snapshot.items() if k not in keys}


def _flatten(value: Any, path: tuple[PathPart, ...], out: dict[str, Any]) -> None:
    mapping = _as_mapping(value)
    if mapping is not None and mapping:
        for key, item in mapping.items():
            _flatten(item, (*path, key), out)
    elif isinstance(value, list | tuple) and value:
        for index, item in enumerate(value):
            _flatten(item, (*path, _Index(index)), out)
    else:
        out[format_path(path)] = value


def diff_snapshots(before: Any, after: Any, *, ignore: tuple[str, ...] = ()) -> str:
    """A readable, line-per-field diff from ``before`` to ``after`` ('' if equal).

    ``~ counter: 1 -> 2`` for a changed field, ``+ log[2]: 'c'`` for a new one,
    ``- scratch: 3`` for a removed one. Top-level keys in ``ignore`` (say
    ``("id",)``) are skipped.
    """
    flat_a: dict[str, Any] = {}
    flat_b: dict[str, Any] = {}
    if isinstance(before, Mapping):
        before = without_keys(before, *ignore)
    if isinstance(after, Mapping):
        after = without_keys(after, *ignore)
    _flatten(before, (), flat_a)
    _flatten(after, (), flat_b)
    lines: list[str] = []
    for key, old in flat_a.items():
        if key not in flat_b:
            lines.append(f"- {key}: {_short(old)}")
        elif not _same_leaf(old, flat_b[key]):
            lines.append(f"~ {key}: {_short(old)} -> {_short(flat_b[key])}")
    for key, new in flat_b.items():
        if key not in flat_a:
            lines.append(f"+ {key}: {_short(new)}")
    return "".join(line + "\n" for line in lines)
