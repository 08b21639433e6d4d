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
    "DEFAULT_LIMITS",
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
    for call in getattr(message, "tool_calls", None) or ():  # a langchain-core AIMessage
        if isinstance(call, dict):
            shown = json.dumps(jsonable(call.get("args") or {}), sort_keys=True)
            parts.append(f"[call {call.get('name', '?')} {shown}]")
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


#: What a reader takes at most, by default: the decompressed bytes of one record (8
#: times the recorder's default ``max_bytes``), one line, and the entries. A file past
#: a cap is refused as soon as the cap is reached (a gzip bomb never fills memory).
#: Override per call (``read_record(path, max_bytes=...)``) or by environment variable.
DEFAULT_LIMITS = {
    "max_bytes": 64 * 1024 * 1024,
    "max_line": 16 * 1024 * 1024,
    "max_entries": 200_000,
}
LIMIT_ENV = {
    "max_bytes": "PYTEST_FLOWS_RECORD_MAX_BYTES",
    "max_line": "PYTEST_FLOWS_RECORD_MAX_LINE",
    "max_entries": "PYTEST_FLOWS_RECORD_MAX_ENTRIES",
}
#: The format versions this pytest-flows reads.
KNOWN_VERSIONS = frozenset({1})


def _limit(name: str, given: int | None) -> int:
    if given is None:
        raw = os.environ.get(LIMIT_ENV[name], "").strip()
        if not raw:
            return DEFAULT_LIMITS[name]
        try:
            given = int(raw)
        except ValueError:
            raise RecordError(
                f"{LIMIT_ENV[name]}={raw!r}: give a whole number "
                f"(the default is {DEFAULT_LIMITS[name]})"
            ) from None
        where = LIMIT_ENV[name]
    else:
        where = f"read_record({name}=...)"
    if isinstance(given, bool) or not isinstance(given, int) or given < 1:
        raise RecordError(f"{where}: {given!r} is not a positive whole number")
    return given


def _lines(
    where: Path, stream: Any, max_bytes: int, max_line: int, max_entries: int
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line as a JSON object, with its line number; refused (RecordError)
    at the first line over a cap or that is not one object (``max_entries`` counts
    every line, the header and blank lines included)."""
    total = 0
    count = 0
    number = 0
    while True:
        line = stream.readline(max_line + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > max_line:
            raise RecordError(
                f"{where}: line {number} is longer than {max_line} bytes; a flight record's "
                f"lines are not (raise the cap with {LIMIT_ENV['max_line']} or "
                "read_record(max_line=...) if you trust this file)"
            )
        if total > max_bytes:
            raise RecordError(
                f"{where}: more than {max_bytes} bytes once decompressed; refused (raise "
                f"the cap with {LIMIT_ENV['max_bytes']} or read_record(max_bytes=...) if "
                "you trust this file)"
            )
        # Blank lines count too: a file of newlines must not take max_bytes iterations.
        count += 1
        if count > max_entries:
            raise RecordError(
                f"{where}: more than {max_entries} entries; refused (raise the cap with "
                f"{LIMIT_ENV['max_entries']} or read_record(max_entries=...) if you trust "
                "this file)"
            )
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise RecordError(f"{where}: line {number} is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise RecordError(
                f"{where}: line {number} is {type(value).__name__} JSON, not an object; "
                "every line of a flight record is one JSON object"
            )
        yield number, value


def _check_header(where: Path, header: dict[str, Any]) -> None:
    if header.get("kind", "header") != "header" or header.get("format") != FORMAT:
        raise RecordError(
            f"{where} is not a flight record: its first line has no format {FORMAT!r}"
        )
    version = header.get("version")
    # ``True`` is an int to Python and ``1.0`` equals 1: neither is a version.
    if type(version) is not int or version < 1:
        raise RecordError(
            f"{where}: format version {version!r} is not a version (a whole number from 1)"
        )
    if version not in KNOWN_VERSIONS:
        raise RecordError(
            f"{where} is a flight record of format version {version}; this pytest-flows "
            f"reads versions {', '.join(map(str, sorted(KNOWN_VERSIONS)))}. Upgrade "
            "pytest-flows to replay it."
        )


def read_record(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None = None,
    max_line: int | None = None,
    max_entries: int | None = None,
    header_only: bool = False,
) -> Record:
    """Parse a flight record, streaming and within caps (:data:`DEFAULT_LIMITS`); a file
    that is not one, or is past a cap, raises :class:`RecordError`. ``header_only``
    reads the first line alone (the record's entries stay empty)."""
    where = Path(path)
    caps = (
        _limit("max_bytes", max_bytes),
        _limit("max_line", max_line),
        _limit("max_entries", max_entries),
    )
    header: dict[str, Any] | None = None
    body: list[dict[str, Any]] = []
    try:
        with gzip.open(where, "rb") as stream:
            for _, value in _lines(where, stream, *caps):
                if header is None:
                    _check_header(where, value)
                    header = value
                    if header_only:
                        break
                    continue
                body.append(value)
    except RecordError:
        raise
    except FileNotFoundError:
        raise RecordError(f"{where}: no such flight record") from None
    except (OSError, EOFError, ValueError) as exc:
        raise RecordError(
            f"{where} is not a flight record (a gzip-compressed JSON-lines file written by "
            f"pytest_flows.recorder): {exc}"
        ) from None
    if header is None:
        raise RecordError(f"{where} is not a flight record: it is empty")
    end = body[-1] if body and body[-1].get("kind") == "end" else {}
    entries = body[:-1] if end else body
    return Record(path=where, header=header, entries=entries, end=end)


def record_paths(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Every flight record under ``directory``, in name order."""
    yield from sorted(Path(directory).rglob(f"*{SUFFIX}"))
