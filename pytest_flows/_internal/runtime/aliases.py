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
        self._by_thread: dict[int, list[_Held]] = {}

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
        if thread not in held.holders:
            self._by_thread.setdefault(thread, []).append(held)
        held.holders[thread] = (task, loop)
        held.where = where

    def changed(self, thread: int) -> list[tuple[str, str, Any, bool]]:
        """The fields whose containers changed since last seen, held by ``thread`` (which
        held the baton meanwhile): (key, where, task, loop) for each; now seen."""
        found: list[tuple[str, str, Any, bool]] = []
        for held in self._by_thread.get(thread, ()):
            now = held.snapshot(held.value)
            if now != held.seen:
                held.seen = now
                task, loop = held.holders[thread]
                found.append((held.key, held.where, task, loop))
        return found
