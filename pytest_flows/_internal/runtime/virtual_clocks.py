"""The clocks a flow reads while its test freezes the wall clock, all from one virtual
count of nanoseconds.

freezegun derives ``monotonic``/``perf_counter`` and ``time`` from the frozen
``datetime`` (microseconds, in a float of the epoch's magnitude), so a
``time.sleep(0.05)`` measured with them could show ``0.04999995``. Here each reads
:class:`~pytest_flows._internal.runtime.loop.VirtualClock` directly: ``monotonic`` and
``perf_counter`` are its seconds (from 0, where a float keeps nanoseconds),
``time`` the epoch plus them, and the ``_ns`` forms exact integers. Callers freezegun
leaves on real time (pytest's timing, hypothesis) still read real time.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.runtime import stdlib_seams as _stdlib_seams
from pytest_flows._internal.runtime.participants import clock_read_by, current
from pytest_flows._internal.runtime.real_work import note_read

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.loop import VirtualClock

__all__ = ["epoch_ns", "virtual_clocks"]


def epoch_ns(epoch: _dt.datetime) -> int:
    """``epoch`` as whole nanoseconds since 1970 (UTC)."""
    delta = epoch.astimezone(_dt.UTC) - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


@contextlib.contextmanager
def virtual_clocks(clock: VirtualClock, epoch: _dt.datetime, fz_api: Any) -> Iterator[None]:
    """While freezegun is started: every clock reads ``clock`` (the wall ones from ``epoch``)."""
    wall = epoch_ns(epoch)
    real_by_caller = fz_api._should_use_real_time
    real_time, real_time_ns = fz_api.real_time, fz_api.real_time_ns

    def noted() -> None:
        # One read seen by both: the schedule being explored, and the spin count
        # that preempts a thread polling the clock (real_work.py); one lookup of the
        # running thread for the two (a clock read is hot).
        me = current()
        if me is not None:
            clock_read_by(me)
            note_read(me)

    def monotonic() -> float:
        noted()
        return clock.monotonic()

    def monotonic_ns() -> int:
        noted()
        return clock.monotonic_ns()

    # time.time and time.time_ns are freezegun's functions meanwhile: ours take their
    # place, and ask freezegun whose call it is (its frame depth is the same).
    def time() -> float:
        if real_by_caller():
            return float(real_time())
        noted()
        return (wall + clock.monotonic_ns()) / 1e9

    def time_ns() -> int:
        if real_by_caller():
            return int(real_time_ns())
        noted()
        return wall + clock.monotonic_ns()

    time.__name__, time.__qualname__, time.__module__ = "time", "time", "time"
    time_ns.__name__, time_ns.__qualname__, time_ns.__module__ = "time_ns", "time_ns", "time"
    seams = _stdlib_seams.FREEZEGUN
    stdlib = _stdlib_seams.SEAMS
    previous_epoch = clock.wall_epoch_ns
    clock.wall_epoch_ns = wall
    try:
        with (
            seams["freezegun.api:_get_fake_monotonic"].replace(monotonic),
            seams["freezegun.api:_get_fake_monotonic_ns"].replace(monotonic_ns),
            stdlib["time:time"].replace(time),
            stdlib["time:time_ns"].replace(time_ns),
        ):
            yield
    finally:
        clock.wall_epoch_ns = previous_epoch
