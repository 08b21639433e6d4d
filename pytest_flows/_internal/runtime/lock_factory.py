"""``threading.Lock`` as a factory the harness can switch, for code that captured it early.

A lock built while a flows test runs is managed (a blocking acquire is a switch
point), but only if it is built through a name the harness patches at that moment.
Code that bound the factory at import builds through the object it captured:
``PrivateAttr(default_factory=threading.Lock)`` (crewai's own locks are declared
so), ``field(default_factory=threading.Lock)``, ``from threading import Lock``. So
from the plugin's start, ``threading.Lock`` is :data:`lock`: a function of the same
kind, with the same name, building a real lock until a scheduler is active and a
managed one meanwhile. Captured at import, it still follows the test.

Only this switch is session-wide; everything else the scheduler patches is patched
around each flows test (:mod:`pytest_flows._internal.runtime.stdlib_seams`). Outside a flows
test a lock built through it is the real ``_thread`` lock, as without the plugin.
"""

from __future__ import annotations

import _thread
import itertools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["build_with", "install", "lock", "numbers", "starting"]

#: Numbers the managed locks in the order they are built: a lock's name in a schedule's
#: record (``sync:<n>``, counted from the run's start) is the same in every run of an
#: exploration, where its id is not (sleep sets compare steps of different runs).
numbers = itertools.count()
#: The threads inside the harness's own wait for a thread it starts (``Thread.start()``
#: waits for the new thread's bootstrap): a lock built there is no lock of the run's.
#: ``Thread.start()`` builds one (its ``Event.wait`` a waiter) only when the new thread
#: has not signalled yet, which the OS decides: numbered, it shifted the names of every
#: lock built after it, so a search's count depended on the machine's load.
starting: set[int] = set()

_REAL: Callable[[], Any] = _thread.allocate_lock
#: What a call builds now: the real lock, or the scheduler's while a scheduler is active.
_builder: list[Callable[[], Any]] = [_REAL]
#: Types a lock built meanwhile may have (for ``isinstance`` where Lock is a class).
_kinds: list[type] = []


def _make(original: Any) -> Any:
    if isinstance(original, type):
        # Python 3.13+: threading.Lock is the lock type itself, so its stand-in is a
        # class too, one that builds through the switch and recognizes both kinds.
        real_type = original

        class _LockMeta(type):
            def __call__(cls, *args: Any, **kwargs: Any) -> Any:
                return _builder[0](*args, **kwargs)

            def __instancecheck__(cls, obj: Any) -> bool:
                return isinstance(obj, (real_type, *_kinds))

            def __subclasscheck__(cls, sub: Any) -> bool:
                return issubclass(sub, (real_type, *_kinds))

        stand_in: Any = _LockMeta(original.__name__, (), {"__doc__": original.__doc__})
        stand_in.__module__, stand_in.__qualname__ = original.__module__, original.__qualname__
        return stand_in

    def build() -> Any:
        return _builder[0]()

    # Read by whoever inspects the factory (pydantic resolves a default_factory's
    # hints in its module, here ``threading``): none, as on the builtin.
    build.__annotations__ = {}

    build.__name__ = getattr(original, "__name__", "Lock")
    build.__qualname__ = getattr(original, "__qualname__", "Lock")
    build.__module__ = "threading"
    build.__doc__ = getattr(original, "__doc__", None)
    return build


_ORIGINAL = threading.Lock
#: ``threading.Lock`` while the plugin runs (and ``threading._allocate_lock`` in a test).
lock: Any = _make(_ORIGINAL)


def build_with(builder: Callable[[], Any] | None, kind: type | None = None) -> None:
    """From now on :data:`lock` builds with ``builder`` (None: the real lock again)."""
    _builder[0] = _REAL if builder is None else builder
    _kinds[:] = [] if kind is None else [kind]


def install() -> Callable[[], None]:
    """Make ``threading.Lock`` the switchable factory for the session; returns the undo."""
    if threading.Lock is lock:
        return lambda: None
    previous = threading.Lock
    threading.Lock = lock

    def undo() -> None:
        if threading.Lock is lock:
            threading.Lock = previous

    return undo
