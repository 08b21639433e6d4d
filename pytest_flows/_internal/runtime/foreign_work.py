"""Work a flows test started on a loop the harness does not drive, settled before
virtual time jumps.

A framework's background loop (crewai's event bus runs async handlers on one, in
its own thread) keeps real time: the harness does not own it. When the test's
loop is idle and virtual time would jump to the next deadline, a handler that the
real runtime would finish during that wait (``emit`` then ``await
asyncio.sleep(0.1)``, a handler that sleeps 0.01) would still be running. So an
adapter names the futures of such work (:func:`foreign_work`) and the idle loop
lets them finish first (:func:`settle`), in real time, for at most
:data:`SETTLE_SECONDS` each: the order of events is one the runtime produces
whenever the foreign work is the quicker, and a handler that never ends only
delays the test once.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any

from pytest_flows._internal.runtime.participants import _real_sleep, real_monotonic

__all__ = ["SETTLE_SECONDS", "foreign_work", "settle"]

#: The longest real wait for one piece of foreign work (then it is left to run on).
SETTLE_SECONDS = 5.0

_probes: list[Callable[[], Iterable[Future[Any]]]] = []
_given_up: weakref.WeakSet[Future[Any]] = weakref.WeakSet()


@contextlib.contextmanager
def foreign_work(probe: Callable[[], Iterable[Future[Any]]]) -> Iterator[None]:
    """While the block runs, ``probe()`` names foreign work in flight."""
    _probes.append(probe)
    try:
        yield
    finally:
        _probes.remove(probe)


def _pending() -> list[Future[Any]]:
    return [f for probe in list(_probes) for f in probe() if not f.done() and f not in _given_up]


def settle() -> None:
    """Let the foreign work in flight finish (real time, bounded) before time jumps."""
    if not _probes:
        return
    pending = _pending()
    deadline = real_monotonic() + SETTLE_SECONDS
    while pending:
        if real_monotonic() >= deadline:
            _given_up.update(pending)
            return
        # Polled rather than waited on: a blocking wait would be a switch point of
        # the thread scheduler, and nothing the harness runs may go meanwhile.
        _real_sleep(0.0005)
        pending = [f for f in pending if not f.done()]
