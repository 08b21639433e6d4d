"""The flight record: one gzip-compressed JSON-lines file per recorded run.

Line 1 is the header (``kind: "header"``, ``format``, ``version``), every other line
one entry with ``seq`` (emission order), ``t`` (seconds since the run started, wall
clock) and ``kind``; the last line is ``kind: "end"``. docs/recorder.md documents
every kind and field. Reading a record is inert: it parses JSON and nothing else
(no class is imported or built from what a file names).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import enum
import gzip
import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "SUFFIX",
    "VERSION",
    "Record",
    "RecordError",
    "jsonable",
    "message_text",
    "read_record",
    "record_paths",
]

FORMAT = "pytest-flows-record"
VERSION = 1
SUFFIX = ".flight.jsonl.gz"
#: Nesting deeper than this is cut (a self-referencing state would never end).
_MAX_DEPTH = 24


class RecordError(ValueError):
    """A file that is not a flight record this version of pytest-flows can read."""


def jsonable(value: Any, _depth: int = 0) -> Any:
    """``value`` as plain JSON data: pydantic models dumped, dataclasses as dicts,
    objects with ``to_dict()`` as its dict, sets sorted, anything else its ``repr``
    (never fails, never imports)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if _depth > _MAX_DEPTH:
        return "<too deep>"
    if isinstance(value, enum.Enum):
        return jsonable(value.value, _depth + 1)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, _depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        items = [jsonable(v, _depth + 1) for v in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, default=str))
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return jsonable(dump(mode="json"), _depth + 1)
        except Exception:
            return repr(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: jsonable(getattr(value, f.name, None), _depth + 1)
            for f in dataclasses.fields(value)
        }
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, type):
        # Agent Framework's messages and responses (its serialization mixin).
        try:
            return jsonable(to_dict(), _depth + 1)
        except Exception:
            return repr(value)
    return repr(value)


def message_text(message: Any) -> str:
    """An Agent Framework message's text as a record and a replay compare it: its text,
    or, for a message with none (a model's tool calls, a tool's results), what its
    contents say (``[call name {arguments}]``, ``[result ...]``)."""
    text = getattr(message, "text", None)
    if text:
        return str(text)
    parts = []
    for content in getattr(message, "contents", None) or ():
        kind = getattr(content, "type", None)
        if kind == "text":
            parts.append(str(getattr(content, "text", "")))
        elif kind == "function_call":
            arguments = getattr(content, "arguments", None)
            if isinstance(arguments, str):
                with contextlib.suppress(ValueError):
                    arguments = json.loads(arguments or "{}")
            shown = json.dumps(jsonable(arguments), sort_keys=True)
            parts.append(f"[call {getattr(content, 'name', '?')} {shown}]")
        elif kind == "function_result":
            result = getattr(content, "result", None)
            if isinstance(result, list):
                result = "".join(str(getattr(item, "text", item)) for item in result)
            error = getattr(content, "exception", None)
            parts.append(f"[result {result if error is None else f'error: {error}'}]")
    return " ".join(parts) if parts else ("" if text is None else str(text))


@dataclass
class Record:
    """A flight record as read back: its header, its entries in order, its end line."""

    path: Path
    header: dict[str, Any]
    entries: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return str(self.header.get("run_id", self.path.name))

    @property
    def framework(self) -> str:
        return str(self.header.get("framework", ""))

    @property
    def target(self) -> str:
        """The recorded flow or workflow's import path, ``module:QualName``."""
        return str(self.header.get("target", ""))

    @property
    def run_kwargs(self) -> dict[str, Any]:
        """What the run was started with (crewai: ``inputs``; Agent Framework: ``message``)."""
        value = self.header.get("run_kwargs") or {}
        return dict(value) if isinstance(value, dict) else {}

    @property
    def outcome(self) -> str:
        """``finished``, ``failed``, ``paused`` or ``unknown`` (the run never ended)."""
        return str(self.end.get("outcome", "unknown"))

    @property
    def truncated(self) -> bool:
        return bool(self.end.get("truncated"))

    def of_kind(self, *kinds: str) -> list[dict[str, Any]]:
        return [entry for entry in self.entries if entry.get("kind") in kinds]


def read_record(path: str | os.PathLike[str]) -> Record:
    """Parse a flight record; a file that is not one raises :class:`RecordError`."""
    where = Path(path)
    try:
        with gzip.open(where, "rt", encoding="utf-8") as stream:
            lines = [json.loads(line) for line in stream if line.strip()]
    except FileNotFoundError:
        raise RecordError(f"{where}: no such flight record") from None
    except (OSError, EOFError, ValueError) as exc:
        raise RecordError(
            f"{where} is not a flight record (a gzip-compressed JSON-lines file written by "
            f"pytest_flows.recorder): {exc}"
        ) from None
    if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != FORMAT:
        raise RecordError(
            f"{where} is not a flight record: its first line has no format {FORMAT!r}"
        )
    header = lines[0]
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise RecordError(
            f"{where} is a flight record of format version {version!r}; this pytest-flows "
            f"reads versions up to {VERSION}. Upgrade pytest-flows to replay it."
        )
    body = [line for line in lines[1:] if isinstance(line, dict)]
    end = body[-1] if body and body[-1].get("kind") == "end" else {}
    entries = body[:-1] if end else body
    return Record(path=where, header=header, entries=entries, end=end)


def record_paths(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Every flight record under ``directory``, in name order."""
    yield from sorted(Path(directory).rglob(f"*{SUFFIX}"))
