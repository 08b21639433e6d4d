"""``queue.SimpleQueue`` as a class the harness can switch, for code that bound it early.

``queue.SimpleQueue`` is the C queue: a thread blocked in its ``get`` waits in C, where
the scheduler cannot see it. While a flows test runs, a queue built through
``queue.SimpleQueue`` is the pure-Python one, built on ``threading``'s lock, so a
blocked ``get`` is a switch point. Code that bound the class at import (aiosqlite:
``from queue import SimpleQueue``, its connection thread waits for queries in one)
builds through the object it captured, so, as :mod:`.lock_factory` does for
``threading.Lock``, from the plugin's start ``queue.SimpleQueue`` is :data:`SimpleQueue`:
a class named like the C one that builds the C queue until a scheduler is active and
the pure-Python one meanwhile. Captured at import, it still follows the test.

It stays a class (annotations, ``SimpleQueue[int]``, ``isinstance`` and subclasses
behave as bare): ``isinstance`` accepts both kinds of queue, and a subclass of it is a
subclass of the C queue, built as the C queue always (its author chose the class).
"""

from __future__ import annotations

import _queue
import queue
from typing import Any

__all__ = ["SimpleQueue", "build_managed", "install"]

_C: Any = _queue.SimpleQueue
_PY: Any = queue._PySimpleQueue  # type: ignore[attr-defined]
#: Whether a call builds the pure-Python queue now (a scheduler is active).
_managed = [False]


class _Switch(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is SimpleQueue:
            return isinstance(obj, (_C, _PY))
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: Any) -> bool:
        if cls is SimpleQueue:
            return issubclass(sub, (_C, _PY))
        return type.__subclasscheck__(cls, sub)


class SimpleQueue(_C, metaclass=_Switch):  # type: ignore[misc]
    __slots__ = ()
    __doc__ = _C.__doc__

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is SimpleQueue:
            # Not an instance of ``cls``: no __init__ runs on it (neither queue takes
            # arguments), and the object is exactly what the bare call builds.
            return _PY(*args, **kwargs) if _managed[0] else _C(*args, **kwargs)
        return super().__new__(cls, *args, **kwargs)


SimpleQueue.__module__ = _C.__module__
SimpleQueue.__qualname__ = _C.__qualname__


def build_managed(managed: bool) -> None:
    """From now on :data:`SimpleQueue` builds the pure-Python queue (True) or the C one."""
    _managed[0] = managed


def install() -> Any:
    """Make ``queue.SimpleQueue`` the switchable class for the session; returns the undo."""
    if queue.SimpleQueue is SimpleQueue:
        return lambda: None
    previous = queue.SimpleQueue
    queue.SimpleQueue = SimpleQueue  # type: ignore[misc]

    def undo() -> None:
        if queue.SimpleQueue is SimpleQueue:
            queue.SimpleQueue = previous  # type: ignore[misc]

    return undo
