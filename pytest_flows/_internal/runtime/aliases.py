"""Containers of the state a thread holds on to: their mutations are accesses when they happen.

A thread that reads a list field of the state may keep the list (``order =
self.state.order``), sleep, and append to it later: the append is the write that races,
not the read. The adapter tells the schedule about each such container with a way to
snapshot its contents (:meth:`Aliases.track`); whenever the thread that holds it gives
up the baton the snapshot is compared, and a change is recorded as a write of the
field in the step that made it (:meth:`~pytest_flows._internal.runtime.schedule.Chooser.pick`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

__all__ = ["Aliases"]


@dataclasses.dataclass
class _Held:
    key: str
    value: Any
    seen: Any
    where: str
    snapshot: Callable[[Any], Any]
    #: thread -> (asyncio task, on a loop) it holds the container in
    holders: dict[int, tuple[Any, bool]] = dataclasses.field(default_factory=dict)


class Aliases:
    """The containers each thread read from the state this run, with their last contents."""

    def __init__(self) -> None:
        self._held: dict[int, _Held] = {}  # id(container) -> what is known of it

    def track(
        self,
        thread: int,
        key: str,
        value: Any,
        snapshot: Callable[[Any], Any],
        *,
        where: str,
        task: Any,
        loop: bool,
    ) -> None:
        held = self._held.get(id(value))
        if held is None or held.value is not value:
            held = self._held[id(value)] = _Held(key, value, snapshot(value), where, snapshot)
        held.holders[thread] = (task, loop)
        held.where = where

    def changed(self, thread: int) -> list[tuple[str, str, Any, bool]]:
        """The fields whose containers changed since last seen, held by ``thread`` (which
        held the baton meanwhile): (key, where, task, loop) for each; now seen."""
        found: list[tuple[str, str, Any, bool]] = []
        # Every container, not only ``thread``'s: one another thread changed while it held
        # the baton (the loop, whose change is recorded as its own access) is seen now, or
        # the next holder to give up the baton would be blamed for it.
        for held in self._held.values():
            now = held.snapshot(held.value)
            if now != held.seen:
                held.seen = now
                if thread in held.holders:
                    task, loop = held.holders[thread]
                    found.append((held.key, held.where, task, loop))
        return found
