"""Fewer cyclic garbage collections while a test's harness is open.

A harnessed run allocates more than the bare runtime (the scheduler's participants and
locks, the trace, seeded ids), and CPython's cyclic collector examines the young
generation after every 700 net allocations, each time every object that survived since
the last one; every tenth of those the middle generation, and every tenth of *those*,
once enough has piled up, everything the process holds. Measured (load 5, 2 cores):
about one young collection a run of a 12-node LangGraph graph (0.2 ms each, 0.4 ms a run
with the middle ones), and in a search about 0.8 ms a schedule, most of it the full
collections (250 to 300 ms each, every few hundred schedules, over a process holding
the search's own records).

While a session is open (the outermost one: nested sessions change nothing) the young
generation's threshold is :data:`THRESHOLD`: most of a run's objects die by reference
counting before a collection would have looked at them, and the older generations,
counted in young collections, are examined ten times less often too.

That changes *when* a garbage cycle is found, which CPython leaves to allocation counts
(code that needs it now calls ``gc.collect()``, which still collects everything), and
nothing a program does with its objects. Left alone: a collector that is off
(``gc.disable()``) or tuned to a threshold at least as high, and a threshold the test's
own code changes meanwhile (its change stays when the session closes).
"""

from __future__ import annotations

import _thread
import gc

__all__ = ["THRESHOLD", "close_session", "open_session"]

#: The young generation's threshold while a session is open (CPython's default is 700).
THRESHOLD = 7000

_lock = _thread.allocate_lock()  # real: this module may first load during a run
_open = 0
_restore: tuple[int, ...] | None = None


def open_session() -> None:
    """A session opens: the first one raises the young threshold (see the docstring)."""
    global _open, _restore
    with _lock:
        _open += 1
        if _open > 1:
            return
        old = gc.get_threshold()
        if gc.isenabled() and 0 < old[0] < THRESHOLD:
            gc.set_threshold(THRESHOLD, *old[1:])
            _restore = old


def close_session() -> None:
    """A session closes: the last one puts the threshold back, unless it was changed."""
    global _open, _restore
    with _lock:
        _open = max(_open - 1, 0)
        if _open or _restore is None:
            return
        if gc.get_threshold()[0] == THRESHOLD:
            gc.set_threshold(*_restore)
        _restore = None
