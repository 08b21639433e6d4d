"""Real time, faked, for tests of the rules that follow it (real_work.py).

The rules ("outside a run, virtual time follows the test's own real sleeps"; "real work
outside the scheduler holds the clock") are about what the harness does with real time,
not about how much passes. With :func:`pytest_flows._internal.runtime.real_work.faked`
and this fake, a real sleep returns at once and the real clock the rules read moves by
it: the tests exercise the rules and wait for nothing.
"""

from __future__ import annotations

import _thread
import threading


class FakeRealTime:
    """A sleep returns at once and moves :meth:`monotonic` on by its length.

    ``side_by_side``: the first that many sleeps return only once all of them have
    begun, as sleeps that overlap in real time do (two pool threads sleeping at once);
    the harness then sees each begin before the other ends, whatever the OS does.
    ``until_released``: each sleep returns only once the test calls :meth:`release`, as
    a sleep outlasts what the test does meanwhile (reading a chunk a node streamed
    before it slept).
    """

    def __init__(self, *, side_by_side: int = 0, until_released: bool = False) -> None:
        self.now = 0.0
        self.slept: list[float] = []
        # Real primitives: they must not be the scheduler's, whoever sleeps.
        self._lock = _thread.allocate_lock()
        self._together = side_by_side
        self._gate = threading.Barrier(side_by_side) if side_by_side > 1 else None
        self._released = threading.Event()
        if not until_released:
            self._released.set()

    def release(self) -> None:
        """The sleeps waiting for it (and every later one) return."""
        self._released.set()

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
            waits = self._gate is not None and len(self.slept) <= self._together
        if waits and self._gate is not None:
            # a wait for the partners, never for time: it ends as the last one begins
            self._gate.wait(timeout=30)
        assert self._released.wait(timeout=30), "the test never released the sleep"
        with self._lock:
            self.now += seconds

    def monotonic(self) -> float:
        return self.now
