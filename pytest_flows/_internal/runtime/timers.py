"""Timers due at one moment, in the order they were set.

The virtual clock stands still within a step, so two ``asyncio.sleep(1)`` set one after
the other are due at exactly one moment (and the clock rounds deadlines within
``SAME_MOMENT`` of each other to one), where a real clock would have put the second a
little later. asyncio's heap breaks such ties by its own history (other timers pushed
and popped meanwhile), so which fires first would depend on timers that have nothing to
do with either. :class:`OrderedTimerHandle` fires them in the order they were set, as a
real clock does for two timers set one after the other; then the order of the tasks
they wake is the order of the steps that set them, which the search orders through
:data:`~pytest_flows._internal.runtime.participants.TIMER_MOMENT` (docs/exploration.md,
"Two sleeps that end at one moment").
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Iterable
from typing import Any

__all__ = ["OrderedTimerHandle", "moment_taken", "push_ordered"]


class OrderedTimerHandle(asyncio.TimerHandle):
    """A timer that fires after the timers set before it for the same moment."""

    __slots__ = ("_order",)

    def __init__(self, when: float, callback: Any, args: Any, loop: Any, context: Any, order: int):
        super().__init__(when, callback, args, loop, context)
        self._order = order

    def __lt__(self, other: object) -> bool:
        if isinstance(other, OrderedTimerHandle) and self.when() == other.when():
            return self._order < other._order
        return bool(super().__lt__(other))  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        if isinstance(other, OrderedTimerHandle) and self.when() == other.when():
            return self._order > other._order
        return bool(super().__gt__(other))  # type: ignore[operator]

    __hash__ = asyncio.TimerHandle.__hash__


def moment_taken(scheduled: Iterable[asyncio.TimerHandle], when: float) -> bool:
    """Whether a live timer of ``scheduled`` is due at ``when`` already."""
    return any(not handle.cancelled() and handle.when() == when for handle in scheduled)


def push_ordered(
    loop: Any, when: float, callback: Any, args: tuple[Any, ...], context: Any, order: int
) -> asyncio.TimerHandle:
    """``loop.call_at(when, callback, *args)`` with an :class:`OrderedTimerHandle`."""
    loop._check_closed()
    timer = OrderedTimerHandle(when, callback, args, loop, context, order)
    handle: Any = timer  # asyncio's private fields, set as its own call_at sets them
    if handle._source_traceback:
        del handle._source_traceback[-1]
    heapq.heappush(loop._scheduled, timer)
    handle._scheduled = True
    return timer
