"""Deterministic ids and wall clock (the normalizer of what still differs between runs lives in
:mod:`pytest_flows._internal.normal_form`; it is re-exported here)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import math
import random
import types
import uuid
from collections.abc import Iterator
from typing import Any

from pytest_flows._internal.normal_form import Normalizer
from pytest_flows._internal.runtime import stdlib_seams as _stdlib_seams
from pytest_flows._internal.runtime.clock_scan import remembering_scan
from pytest_flows._internal.runtime.frozen_dates import fakes_valid_as_real
from pytest_flows._internal.runtime.loop import VirtualClock
from pytest_flows._internal.runtime.participants import internal_lock, real_monotonic
from pytest_flows._internal.runtime.virtual_clocks import virtual_clocks

__all__ = ["DEFAULT_EPOCH", "Normalizer", "frozen_wall_clock", "seeded_uuids"]

#: Where the wall clock of every flows test starts (virtual seconds are added to it).
DEFAULT_EPOCH = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC)


class _SeededOs(types.ModuleType):
    """Stands in for ``os`` inside the ``uuid`` module only.

    ``uuid.uuid4()`` reads ``os.urandom`` through the uuid module's globals, so
    this reaches every uuid4 call - including ``default_factory=uuid.uuid4``
    captured at import time - while the real ``os.urandom`` stays untouched.
    """

    def __init__(self, real_os: types.ModuleType, rng: random.Random) -> None:
        super().__init__("os")
        self._real_os = real_os
        self._rng = rng
        self._lock = internal_lock()

    def urandom(self, n: int) -> bytes:
        with self._lock:
            return self._rng.randbytes(n)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real_os, name)


@contextlib.contextmanager
def seeded_uuids(seed: str) -> Iterator[None]:
    """Make ``uuid.uuid4()`` return a reproducible sequence for ``seed`` until exit."""
    real_os = uuid.os  # type: ignore[attr-defined]
    if isinstance(real_os, _SeededOs):  # nested: keep the outer sequence
        yield
        return
    seeded = _SeededOs(real_os, random.Random(f"pytest-flows-ids:{seed}"))
    with _stdlib_seams.SEAMS["uuid:os"].replace(seeded):
        yield


class _VirtualNow:
    """A freezegun time factory reading ``epoch + clock``."""

    def __init__(self, clock: VirtualClock, epoch: _dt.datetime) -> None:
        self._clock = clock
        # freezegun works in naive UTC
        self._epoch = epoch.astimezone(_dt.UTC).replace(tzinfo=None)
        # Every crewai event stamps now(), and the clock rarely moves between two: the
        # last answer, with the clock reading it is for (one tuple: threads may race).
        self._last: tuple[float, _dt.datetime] = (math.nan, self._epoch)  # nan: equals none

    def __call__(self) -> _dt.datetime:
        now = self._clock.monotonic_ns()
        at, value = self._last
        if at != now:
            # Whole microseconds, cut as a real clock cuts them: from the integer count,
            # so a wait of d moves now() by d (a float of seconds would round either way).
            value = self._epoch + _dt.timedelta(microseconds=now // 1000)
            self._last = (now, value)
        return value

    def tick(self, delta: float | _dt.timedelta = 1) -> _dt.datetime:
        seconds = delta.total_seconds() if isinstance(delta, _dt.timedelta) else float(delta)
        self._clock.advance(seconds)
        return self()

    def move_to(self, target: Any) -> None:
        raise NotImplementedError(
            "pytest-flows drives the wall clock from its virtual clock; "
            "use flows.clock.advance(seconds) instead of freezegun's move_to()."
        )


# pytest's own timing stays real (durations, junit timestamps), and so does
# hypothesis's (its deadline would otherwise count a flow's virtual sleeps).
_REAL_TIME_MODULES = ["_pytest.timing"]
_REAL_TIME_CALLERS = (*_REAL_TIME_MODULES, "hypothesis.")


@contextlib.contextmanager
def frozen_wall_clock(clock: VirtualClock, epoch: _dt.datetime = DEFAULT_EPOCH) -> Iterator[None]:
    """Make ``datetime.now()``, ``time.time()`` and friends read ``epoch + clock``."""
    import freezegun
    import freezegun.api as fz_api

    freezer = freezegun.freeze_time(epoch, tick=False, ignore=_REAL_TIME_MODULES)
    scan = _stdlib_seams.FREEZEGUN["freezegun.api:_get_cached_module_attributes"]
    with scan.replace(remembering_scan(fz_api._get_cached_module_attributes)):
        freezer.start()
    # freezegun's default ignore list holds "threading" and "queue", and it looks five
    # frames up: any call made near a thread's bootstrap (a sync flow method's body on
    # a worker thread) or in a test body that hypothesis calls would read the real
    # clock. Only the direct caller counts, and only ours are listed.
    fz_api.ignore_lists[-1] = _REAL_TIME_CALLERS
    # freezegun reads the newest factory on every call; ours follows the clock.
    factories: list[Any] = fz_api.freeze_factories
    factories[-1] = _VirtualNow(clock, epoch)
    # Loops that are not ours (a library's background loop) keep real time, or
    # their timers would never fire. Deterministic loops override time().
    loop_time = _stdlib_seams.SEAMS["asyncio.base_events:BaseEventLoop.time"]
    direct_caller_only = _stdlib_seams.FREEZEGUN["freezegun.api:call_stack_inspection_limit"]
    try:
        with (
            loop_time.replace(_real_loop_time),
            direct_caller_only.replace(1),
            _pickled_as_real(fz_api),
            virtual_clocks(clock, epoch, fz_api),
            fakes_valid_as_real(fz_api),
        ):
            yield
    finally:
        freezer.stop()


@contextlib.contextmanager
def _pickled_as_real(fz_api: Any) -> Iterator[None]:
    """While frozen, freezegun's datetime classes carry the real classes' names.

    freezegun makes ``datetime.datetime`` *be* its ``FakeDatetime`` meanwhile, so
    ``type(x) is datetime.datetime`` holds; with the real names a pickle (and any
    codec that names the class, such as Agent Framework's restricted unpickler)
    writes ``datetime.datetime`` and loads a real datetime once the test is over.
    """
    renamed = [(fz_api.FakeDatetime, "datetime"), (fz_api.FakeDate, "date")]
    saved = [(cls, cls.__module__, cls.__qualname__, cls.__name__) for cls, _ in renamed]
    for cls, name in renamed:
        cls.__module__, cls.__qualname__, cls.__name__ = "datetime", name, name
    try:
        yield
    finally:
        for cls, module, qualname, name in saved:
            cls.__module__, cls.__qualname__, cls.__name__ = module, qualname, name


def _real_loop_time(self: asyncio.AbstractEventLoop) -> float:
    return real_monotonic()
