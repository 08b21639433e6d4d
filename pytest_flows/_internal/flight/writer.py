"""Writing flight records: scrubbed, capped, compressed, off the flow's thread.

A finished run is handed to :class:`Writer` (a bounded queue and one daemon thread),
so a slow or full disk never blocks a flow: when the queue is full the run is
dropped and logged. Secrets are removed with the cassettes' rules (by name, then by
value in any spelling, :mod:`pytest_flows._internal.recording.scrub`); a file that
would still hold a known secret in any encoding is refused, never written.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import logging
import os
import queue
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from pytest_flows._internal.flight.format import SUFFIX
from pytest_flows._internal.recording.scrub import Scrubber
from pytest_flows._internal.secrets import secret_encodings

__all__ = ["LOG", "RecordLeakError", "Writer", "encode_record"]

LOG = logging.getLogger("pytest_flows.recorder")
#: How many written paths a writer remembers (:attr:`Writer.written`).
KEEP_WRITTEN = 4096


class RecordLeakError(Exception):
    """A record still held a secret after scrubbing: it is not written."""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


class _BaseScrubbers:
    """The scrubber every record starts from: the recorder's secrets and the values of
    the secret-looking environment variables, built again only when ``os.environ`` or
    the secrets change (reading the environment and compiling each value's pattern
    cost more than scrubbing a small record)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._environ: object = None
        self._built: dict[tuple[str, ...], Scrubber] = {}

    def get(self, secrets: Sequence[str]) -> Scrubber:
        data = getattr(os.environ, "_data", None)  # CPython's raw mapping: compared in C
        with self._lock:
            if not isinstance(data, dict) or data != self._environ:
                self._environ = dict(data) if isinstance(data, dict) else None
                self._built.clear()
            key = tuple(secrets)
            base = self._built.get(key)
            if base is None:
                base = Scrubber(secrets)
                # Read after the snapshot: a change from here on is seen next time.
                base.add_environment()
                self._built[key] = base
            return base.copy()


_BASES = _BaseScrubbers()


@functools.lru_cache(maxsize=1024)
def _needles(value: str) -> tuple[str, ...]:
    """Each spelling of ``value`` as it reads in the record's text: as is, and
    JSON-escaped (a spelling inside a decoded string is escaped once more in the line).
    A string holds a spelling only if the line holds its escaped form, so searching
    the text alone finds everything a search of every decoded string would."""
    encoded = json.dumps(value, ensure_ascii=False)[1:-1]  # control characters too
    spellings = [*secret_encodings(value), encoded, encoded.replace("/", "\\/")]
    escaped = (json.dumps(spelling, ensure_ascii=False)[1:-1] for spelling in spellings)
    return tuple(dict.fromkeys((*spellings, *escaped)))


@functools.lru_cache(maxsize=1024)
def _bare_needles(value: str) -> tuple[str, ...]:
    """The spellings of ``value`` that JSON-escaping changes only by backslashes, as
    they read without any."""
    spellings = (value, quote(value, safe=""), quote(value), quote_plus(value))
    return tuple(dict.fromkeys(spelling.replace("\\", "") for spelling in spellings))


def encode_record(
    header: dict[str, Any],
    entries: Sequence[dict[str, Any]],
    end: dict[str, Any],
    *,
    max_bytes: int,
    secrets: Sequence[str] = (),
) -> bytes:
    """The record's JSON lines, scrubbed and cut to ``max_bytes`` (uncompressed).

    Raises :class:`RecordLeakError` if a known secret survives scrubbing.
    """
    scrubber = _BASES.get(secrets)
    rounded = [
        {**entry, "t": round(entry["t"], 6)} if isinstance(entry.get("t"), float) else entry
        for entry in entries
    ]
    # By name first (a field named like a secret is masked and its value remembered),
    # then by value over the whole text, so a remembered value is gone everywhere.
    masked_header = _masked(scrubber, header)
    masked = [_masked(scrubber, entry) for entry in rounded]
    masked_end = _masked(scrubber, end)
    # By value in each decoded string (a JSON-escaped key inside a message is one
    # level deeper than in a cassette's body), then again over the encoded text. Only
    # the lines that may hold a value are walked string by string.
    lines = [_scrubbed(scrubber, *masked_header)]
    size = len(lines[0]) + 1
    kept = 0
    for entry, line in masked:
        line = _scrubbed(scrubber, entry, line)
        if size + len(line) + 1 > max_bytes:
            break
        lines.append(line)
        size += len(line) + 1
        kept += 1
    if kept < len(masked):
        cut = {**masked_end[0], "truncated": True, "dropped_entries": len(masked) - kept}
        masked_end = (cut, _dumps(cut))
    lines.append(_scrubbed(scrubber, *masked_end))
    text = scrubber.text("\n".join(lines) + "\n")
    # JSON escapes add backslashes before a value's quotes and slashes at each level it
    # is nested: without any backslash, a value nested however deep reads as itself.
    bare = text.replace("\\", "")
    leaked = [
        value
        for value in scrubber.values
        if any(needle in text for needle in _needles(value))
        or any(needle in bare for needle in _bare_needles(value))
    ]
    if leaked:
        raise RecordLeakError(
            f"a secret ({len(leaked[0])} characters) is still in the record after scrubbing"
        )
    return text.encode("utf-8")


def _masked(scrubber: Scrubber, data: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """``data`` masked by name, and its JSON line (most entries hold no name to mask:
    a search of their line says so, and the line is kept)."""
    line = _dumps(data)
    if not scrubber.may_mask(line):
        return data, line
    masked: dict[str, Any] = scrubber.mask_data(data)
    return masked, _dumps(masked)


def _scrubbed(scrubber: Scrubber, data: dict[str, Any], line: str) -> str:
    """``line`` (the JSON of ``data``) with every value scrubbed in each decoded string."""
    if scrubber.may_hold(line):
        return _dumps(scrubber.value(data))
    return line


class Writer:
    """A bounded queue of finished runs and the one thread that writes them."""

    def __init__(self, queue_size: int = 64) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue(queue_size)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self.dropped = 0
        #: The files written, oldest first (the last ``KEEP_WRITTEN``: a long-running
        #: process does not keep every path it ever wrote).
        self._written: dict[Path, None] = {}
        self._made: set[Path] = set()

    def start(self) -> None:
        """Start the writing thread now (recording turned on), not in a flow's first
        finished run."""
        with self._lock:
            self._ensure_thread()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._work, name="pytest-flows-recorder", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Let the thread end once the queue is empty (a later run starts it again)."""
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(None)

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; False (and a log line) if the queue is full."""
        with self._lock:
            self._ensure_thread()
            self._pending += 1
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            with self._lock:
                self._pending -= 1
                self.dropped += 1
            LOG.warning("pytest-flows recorder: the write queue is full; a run was not recorded")
            return False
        return True

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                with self._lock:
                    if self._pending == 0:  # nothing submitted since close()
                        self._thread = None
                        return
                continue
            try:
                job()
            except Exception:
                LOG.exception("pytest-flows recorder: writing a flight record failed")
            finally:
                with self._lock:
                    self._pending -= 1
                    self._idle.notify_all()

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every queued run is written; False if ``timeout`` ran out first."""
        with self._lock:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    @property
    def written(self) -> list[Path]:
        with self._lock:
            return list(self._written)

    def write(self, directory: Path, name: str, data: bytes) -> Path:
        if directory not in self._made:
            directory.mkdir(parents=True, exist_ok=True)
            self._made.add(directory)
        final = directory / f"{name}{SUFFIX}"
        partial = directory / f".{name}{SUFFIX}.partial"
        # mtime=0: the same run compresses to the same bytes.
        try:
            raw = open(partial, "wb")  # noqa: SIM115 (closed below)
        except FileNotFoundError:  # the directory went away since: make it again
            directory.mkdir(parents=True, exist_ok=True)
            raw = open(partial, "wb")  # noqa: SIM115
        with raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            out.write(data)
        os.replace(partial, final)
        with self._lock:
            # (a paused run written again when continued keeps its place)
            self._written[final] = None
            if len(self._written) > KEEP_WRITTEN:
                del self._written[next(iter(self._written))]
        return final
