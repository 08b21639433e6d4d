"""What a framework's recorder hook calls while a production run is recorded.

:class:`FlightRecorder` holds the settings (directory, sample rate, size cap) and the
writer; :func:`begin` decides whether a run is recorded (sampling, one record per
outermost run) and returns its :class:`RunRecording`, which the hook fills with
:meth:`RunRecording.note` and closes with :meth:`RunRecording.finish`. Nothing here
raises into the flow: a failure is logged and the run goes on unrecorded.
"""

from __future__ import annotations

import atexit
import contextvars
import datetime as _dt
import itertools
import json
import os
import platform
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_flows._internal.flight.format import FORMAT, VERSION, jsonable
from pytest_flows._internal.flight.writer import LOG, RecordLeakError, Writer, encode_record

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENV_VAR",
    "FlightRecorder",
    "Patches",
    "RunRecording",
    "active",
    "begin",
    "current",
    "distribution_version",
    "error_fields",
    "install",
    "recording",
    "uninstall",
    "writes_after",
]

ENV_VAR = "PYTEST_FLOWS_RECORD"
#: The size cap of one run's record before compression; the rest is dropped, the end
#: line says ``truncated``.
DEFAULT_MAX_BYTES = 8 * 1024 * 1024


class FlightRecorder:
    """Production recording settings; one is active per process (:func:`install`)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        sample: float = 1.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        queue_size: int = 64,
        secrets: tuple[str, ...] = (),
        factories: dict[str, str] | None = None,
    ) -> None:
        self.directory = Path(directory)
        #: Agent Framework: workflow name -> ``module:function`` that builds it again.
        self.factories = dict(factories or {})
        self.sample = sample
        self.max_bytes = max_bytes
        self.secrets = secrets
        self.writer = Writer(queue_size)
        # Sampling draws from its own generator: the flow's random module is left alone.
        self._rng = random.Random(int.from_bytes(os.urandom(8), "big"))
        self._rng_lock = threading.Lock()
        #: Frameworks whose hooks are installed, and how to remove them.
        self.hooks: dict[str, Callable[[], None]] = {}

    def sampled(self) -> bool:
        if self.sample >= 1.0:
            return True
        with self._rng_lock:
            return self._rng.random() < self.sample

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every finished run is on disk (tests; process exit)."""
        return self.writer.flush(timeout)

    @property
    def written(self) -> list[Path]:
        return list(self.writer.written)

    def __enter__(self) -> FlightRecorder:
        """``with record_flows(...) as recorder:``: recording stops when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        # Stops recording (the runs finished inside the block are written first) if this
        # is still the recorder that is on; another one started since is left alone.
        if active() is self:
            uninstall()
        else:
            self.flush()

    def __repr__(self) -> str:
        return (
            f"<FlightRecorder {str(self.directory)!r} sample={self.sample} "
            f"frameworks={sorted(self.hooks)}>"
        )


_active: FlightRecorder | None = None
_current: contextvars.ContextVar[RunRecording | None] = contextvars.ContextVar(
    "pytest_flows_flight_run", default=None
)
_install_lock = threading.Lock()


def active() -> FlightRecorder | None:
    return _active


def install(recorder: FlightRecorder) -> FlightRecorder | None:
    """Make ``recorder`` the active one; returns the one it replaces."""
    global _active
    recorder.writer.start()
    with _install_lock:
        previous, _active = _active, recorder
    return previous


def uninstall() -> FlightRecorder | None:
    global _active
    with _install_lock:
        previous, _active = _active, None
    if previous is not None:
        for remove in list(previous.hooks.values()):
            try:
                remove()
            except Exception:
                LOG.exception("pytest-flows recorder: removing a framework hook failed")
        previous.hooks.clear()
        previous.flush()
        previous.writer.close()
    return previous


def _flush_at_exit() -> None:
    recorder = _active
    if recorder is not None:
        recorder.flush(timeout=10.0)


atexit.register(_flush_at_exit)


def current() -> RunRecording | None:
    """The run being recorded in this context, if any."""
    return _current.get()


def _versions(framework: str, version: str) -> dict[str, str]:
    from importlib import metadata

    try:
        ours = metadata.version("pytest-flows")
    except metadata.PackageNotFoundError:
        ours = "unknown"
    return {"python": platform.python_version(), framework: version, "pytest-flows": ours}


_VERSION_CACHE: dict[tuple[str, str], dict[str, str]] = {}


class RunRecording:
    """One run's entries, in emission order, until :meth:`finish` hands them to the writer."""

    def __init__(
        self,
        recorder: FlightRecorder,
        framework: str,
        framework_version: str,
        target: str,
        run_kwargs: dict[str, Any],
    ) -> None:
        self.recorder = recorder
        self.run_id = os.urandom(6).hex()
        self._t0 = time.perf_counter()
        started = _dt.datetime.now(_dt.UTC)
        versions = _VERSION_CACHE.get((framework, framework_version))
        if versions is None:
            versions = _VERSION_CACHE[(framework, framework_version)] = _versions(
                framework, framework_version
            )
        self.header: dict[str, Any] = {
            "kind": "header",
            "format": FORMAT,
            "version": VERSION,
            "run_id": self.run_id,
            "framework": framework,
            "target": target,
            "versions": versions,
            "started_at": started.isoformat(timespec="milliseconds"),
            "run_kwargs": jsonable(run_kwargs),
        }
        self._name = f"{started:%Y%m%dT%H%M%S}-{target.rpartition(':')[2] or 'run'}-{self.run_id}"
        self.entries: list[dict[str, Any]] = []
        self._size = 0
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._over_cap = False
        self._done = False

    def note(self, kind: str, **fields: Any) -> None:
        """Add one entry (values are copied as JSON data now: later mutation is not seen)."""
        try:
            entry: dict[str, Any] = {"kind": kind}
            size = len(kind) + 10
            # One pass: a plain value is kept and counted as is (the most common case:
            # method names, task names, short texts); anything else is copied as JSON.
            for key, value in fields.items():
                kind_of = type(value)
                if kind_of is str:
                    size += len(key) + len(value) + 6
                elif value is None or kind_of is bool or kind_of is int:
                    size += len(key) + 12
                else:
                    value = jsonable(value)
                    size += len(key) + 4 + _value_size(value)
                entry[key] = value
            thread = threading.current_thread().name
            entry["thread"] = thread
            size += len(thread) + 12
            with self._lock:
                if self._done:
                    return
                entry["seq"] = next(self._seq)
                # (rounded by the writer, off the flow's thread)
                entry["t"] = time.perf_counter() - self._t0
                if self._size + size > self.recorder.max_bytes:
                    self._over_cap = True
                    return
                self._size += size
                self.entries.append(entry)
        except Exception:
            LOG.exception("pytest-flows recorder: recording a %s entry failed", kind)

    def reopen(self) -> bool:
        """Take entries again after :meth:`finish` (a paused run continued); the next
        ``finish`` writes the whole record again, under the same name."""
        with self._lock:
            if self._over_cap:
                return False
            self._done = False
            return True

    def finish(self, outcome: str, **fields: Any) -> None:
        """Close the record (``finished``, ``failed`` or ``paused``) and queue it for writing."""
        try:
            with self._lock:
                if self._done:
                    return
                self._done = True
                entries = list(self.entries)
            end = {
                "kind": "end",
                "outcome": outcome,
                "duration": round(time.perf_counter() - self._t0, 6),
                "entries": len(entries),
                **{k: jsonable(v) for k, v in fields.items()},
            }
            if self._over_cap:
                end["truncated"] = True
            recorder, header, name = self.recorder, self.header, self._name

            def write() -> None:
                try:
                    data = encode_record(
                        header,
                        entries,
                        end,
                        max_bytes=recorder.max_bytes,
                        secrets=recorder.secrets,
                    )
                except RecordLeakError as exc:
                    LOG.error("pytest-flows recorder: run %s not written: %s", name, exc)
                    return
                recorder.writer.write(recorder.directory, name, data)

            held = _held.get()
            if held is None or not held.hold(recorder.writer, write):
                recorder.writer.submit(write)
        except Exception:
            LOG.exception("pytest-flows recorder: finishing a record failed")


class _Held:
    """Write jobs of runs that finished inside :func:`writes_after`'s block."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: list[tuple[Writer, Callable[[], None]]] = []
        self._open = True

    def hold(self, writer: Writer, job: Callable[[], None]) -> bool:
        """Keep ``job`` until the block ends; False once it has (queue it now)."""
        with self._lock:
            if self._open:
                self._jobs.append((writer, job))
            return self._open

    def release(self) -> None:
        with self._lock:
            self._open, jobs, self._jobs = False, self._jobs, []
        for writer, job in jobs:
            writer.submit(job)


_held: contextvars.ContextVar[_Held | None] = contextvars.ContextVar(
    "pytest_flows_flight_held", default=None
)


@contextmanager
def writes_after() -> Iterator[None]:
    """Runs that finish inside the block are queued for writing when it ends.

    A framework's synchronous entry point (crewAI's ``kickoff``) wraps its call in it:
    the framework's own teardown after the run (closing its event loop, waiting for
    its event handlers) then does not share the interpreter with the writer thread;
    the writer's work starts when the caller has its result. A run finishing later, in
    a context copied from the block (a stream consumed after the call returned), is
    queued at once.
    """
    held = _Held()
    token = _held.set(held)
    try:
        yield
    finally:
        _held.reset(token)
        held.release()


def _value_size(value: Any) -> int:
    """About the length of a JSON value, cheaply: the in-memory cap's measure (the
    writer cuts the record at the exact size). Short strings and numbers are counted,
    not encoded; only structured values are."""
    kind = type(value)
    if kind is str:
        return len(value) + 2
    if value is None or kind is bool or kind is int or kind is float:
        return 8
    return len(json.dumps(value, ensure_ascii=False, default=repr))


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution`` (the record's header), or ``unknown``."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except Exception:
        return "unknown"


def error_fields(error: Any) -> dict[str, str]:
    """An error as the record keeps it: ``type`` and ``message`` (a string is a message)."""
    if isinstance(error, BaseException):
        return {"type": type(error).__name__, "message": str(error)}
    return {"type": "Error", "message": str(error)}


def exception_fields(error: BaseException) -> dict[str, Any]:
    """A provider call's exception as a replay rebuilds it: its type, module and text,
    and what its constructor needs (an HTTP status error's status and body, a JSON
    decode error's position)."""
    fields: dict[str, Any] = {
        "type": type(error).__name__,
        "module": type(error).__module__,
        "message": str(error),
    }
    for name in ("status_code", "body", "msg", "doc", "pos"):
        value = getattr(error, name, None)
        if value is not None:
            fields[name] = value
    return fields


class Patches:
    """The framework attributes a recorder part replaces while it is on, and their undo.

    Each framework part patches a few methods once (``install``) and restores them
    when recording stops; a part already installed is not wrapped twice.
    """

    MARK = "__flows_recorder__"

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    @classmethod
    def installed(cls, owner: Any, name: str) -> bool:
        current = owner.__dict__.get(name)
        return bool(getattr(getattr(current, "__func__", current), cls.MARK, False))

    def replace(self, owner: Any, name: str, new: Any) -> None:
        """Set ``owner.name`` to ``new`` (marked as the recorder's) until :meth:`undo`."""
        original = owner.__dict__[name]
        target = new.__func__ if isinstance(new, classmethod | staticmethod) else new
        setattr(target, self.MARK, True)
        setattr(owner, name, new)
        self._undo.append((owner, name, original))

    def undo(self) -> None:
        while self._undo:
            owner, name, original = self._undo.pop()
            setattr(owner, name, original)


def begin(
    framework: str, framework_version: str, target: str, run_kwargs: dict[str, Any]
) -> RunRecording | None:
    """A new recording for a run starting in this context, or None (recorder off, not
    sampled, or already inside a recorded run: nested runs go into the outer record)."""
    recorder = _active
    if recorder is None or _current.get() is not None:
        return None
    try:
        if not recorder.sampled():
            return None
        return RunRecording(recorder, framework, framework_version, target, run_kwargs)
    except Exception:
        LOG.exception("pytest-flows recorder: starting a record failed")
        return None


@contextmanager
def recording(run: RunRecording | None) -> Iterator[RunRecording | None]:
    """``run`` is the current recording inside the block."""
    if run is None:
        yield None
        return
    token = _current.set(run)
    try:
        yield run
    finally:
        _current.reset(token)
