"""Every stdlib patch the thread scheduler needs, in one place, with a check.

While a flows scheduler is active, primitives *created* by anyone become
scheduler-aware: ``threading.Lock`` (and with it Condition, Event, Semaphore,
Barrier, ``queue.Queue`` and ``concurrent.futures.Future``, all built on it),
``threading.RLock``, ``queue.SimpleQueue`` (thread pools' work queues), and the
calls ``time.sleep``, ``Thread.start`` and ``Thread.join``. A primitive used by a
thread the harness does not manage behaves exactly like the real one, so
objects that outlive the test stay correct.

Patching at this level (rather than each primitive) is what makes every
higher-level primitive a switch point: they all block in
``threading._allocate_lock()``/``threading.Lock()`` locks.
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pytest_flows.threads import (
    FlowsAborted,
    Participant,
    _real_lock,
    _real_sleep,
    _real_thread_start,
    _RealThread,
    current,
)

__all__ = ["SchedLock", "check_stdlib_seams", "patched"]

_real_join = threading.Thread.join


class SchedLock:
    """A ``threading.Lock`` whose blocking acquire is a switch point for managed threads."""

    __slots__ = ("__weakref__", "_real")

    def __init__(self) -> None:
        self._real = _real_lock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = current()
        if me is None:
            if me is None and timeout == -1:
                return self._real.acquire(blocking)
            return self._real.acquire(blocking, timeout)
        if not blocking:
            if timeout != -1:
                raise ValueError("can't specify a timeout for a non-blocking call")
            return self._real.acquire(False)
        if timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be a non-negative number")
        sched = me.sched
        if sched.seed != 0:
            sched.switch(me, why="lock")
        if self._real.acquire(False):
            return True
        deadline = None if timeout == -1 else sched.clock.monotonic() + timeout
        while True:
            ready = sched.block(me, self._free, deadline, "a lock (see its stack)")
            if self._real.acquire(False):
                return True
            if current() is None:  # the test ended meanwhile: an ordinary thread now
                return self._real.acquire(True, -1 if deadline is None else timeout)
            if not ready:
                return False

    def _free(self) -> bool:
        return not self._real.locked()

    def release(self) -> None:
        self._real.release()
        if current() is None:
            _poke_idle()

    def locked(self) -> bool:
        return self._real.locked()

    def _at_fork_reinit(self) -> None:
        self._real = _real_lock()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    acquire_lock = acquire
    release_lock = release
    locked_lock = locked

    def __repr__(self) -> str:
        state = "locked" if self._real.locked() else "unlocked"
        return f"<pytest-flows lock {state} at {id(self):#x}>"


_idle_schedulers: list[Any] = []


def _poke_idle() -> None:
    for sched in list(_idle_schedulers):
        if sched.idle:
            sched.poke()


def _sleep(seconds: float) -> None:
    me = current()
    if me is None:
        _real_sleep(seconds)
        return
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        _real_sleep(seconds)  # the real error for a non-number
        return
    if math.isnan(seconds) or seconds < 0:
        raise ValueError("sleep length must be non-negative")
    me.sched.sleep(me, float(seconds))


def _start(self: threading.Thread) -> None:
    me = current()
    if me is None or isinstance(self, _RealThread):
        _real_thread_start(self)
        return
    sched = me.sched
    child = sched.adopt(self.name)
    self._flows_participant = child  # type: ignore[attr-defined]
    body = self.run

    def run() -> None:
        sched.begin(child)
        try:
            body()
        except FlowsAborted:
            pass
        finally:
            sched.leave(child)

    self.run = run  # type: ignore[method-assign]
    sched.start(self, child)


def _join(self: threading.Thread, timeout: float | None = None) -> None:
    me = current()
    child: Participant | None = getattr(self, "_flows_participant", None)
    if me is None or child is None or child.sched is not me.sched:
        _real_join(self, timeout)
        return
    sched = me.sched
    deadline = None if timeout is None else sched.clock.monotonic() + max(timeout, 0)
    if sched.block(me, lambda: child.done, deadline, f"Thread.join({self.name!r})"):
        _real_join(self)  # the OS thread is past its last managed step
    elif current() is None:  # the test ended meanwhile
        _real_join(self, timeout)


_SEAMS: tuple[tuple[Any, str, Any], ...] = (
    (threading, "Lock", SchedLock),
    (threading, "_allocate_lock", SchedLock),
    (threading, "RLock", threading._PyRLock),  # type: ignore[attr-defined]
    (queue, "SimpleQueue", queue._PySimpleQueue),  # type: ignore[attr-defined]
    (time, "sleep", _sleep),
    (threading.Thread, "start", _start),
    (threading.Thread, "join", _join),
)


def check_stdlib_seams() -> None:
    """Fail loudly if a Python version moved what the scheduler patches."""
    missing = [f"{getattr(o, '__name__', o)}.{n}" for o, n, _ in _SEAMS if not hasattr(o, n)]
    for owner, name in ((threading, "_PyRLock"), (queue, "_PySimpleQueue")):
        if not hasattr(owner, name):
            missing.append(f"{owner.__name__}.{name}")
    if missing:
        raise RuntimeError(
            "pytest-flows' thread scheduler cannot patch " + ", ".join(missing) + " on this "
            "Python version; please report it with `python -VV`."
        )
    # Condition and Event must still build on the module-level lock factories.
    import inspect

    source = inspect.getsource(threading.Condition.wait)
    if "_allocate_lock()" not in source:
        raise RuntimeError(
            "threading.Condition.wait no longer waits on threading._allocate_lock(); "
            "pytest-flows' thread scheduler would not see it block."
        )


_depth = 0


@contextmanager
def patched(sched: Any) -> Iterator[None]:
    """Route the stdlib primitives through the scheduler for the block."""
    global _depth
    _idle_schedulers.append(sched)
    _depth += 1
    saved = []
    if _depth == 1:
        for owner, name, value in _SEAMS:
            saved.append((owner, name, owner.__dict__[name]))
            setattr(owner, name, value)
    try:
        yield
    finally:
        _depth -= 1
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)
        _idle_schedulers.remove(sched)
