"""The RLock a managed thread gets: threading's pure-Python one, its hot paths inlined.

While a scheduler is active ``threading.RLock()`` builds threading's pure-Python RLock
(its C one would block outside the scheduler), on a managed lock
(:class:`~pytest_flows._internal.runtime.stdlib_seams.SchedLock`). Conditions, Futures
and frameworks' own locks take it in ``with`` blocks dozens of times a run, and each
block went through five Python frames (the RLock's acquire, the lock's, the RLock's
exit and release, the lock's release); :class:`SchedRLock` takes the same steps in two.
"""

from __future__ import annotations

import threading
from typing import Any

from pytest_flows._internal.runtime.participants import _by_thread, _get_ident

__all__ = ["SchedRLock"]


class SchedRLock(threading._PyRLock):  # type: ignore[name-defined,misc]
    """What ``threading.RLock()`` builds while a scheduler is active: threading's own
    pure-Python RLock on a :class:`SchedLock` (so that blocking on it is a switch
    point), its re-entry and its lock's free take at seed 0 inlined. Conditions and
    Futures take their RLock in ``with`` blocks, dozens of times a run, and the
    pure-Python one went through five Python frames a block; this one goes through
    two. Everything else (``_is_owned``, ``_release_save``, the repr) is threading's."""

    _owner: int | None
    _count: int
    _block: Any

    def acquire(self, blocking: bool = True, timeout: float = -1) -> Any:
        me = _get_ident()
        if self._owner == me:
            self._count += 1
            return 1  # as threading's: 1 for a re-entry
        block = self._block
        if timeout == -1:
            # SchedLock.acquire's hot path (a thread the harness does not run, or seed 0)
            stack = _by_thread.get(me)
            if (not stack or stack[-1].sched.seed == 0) and block._real.acquire(False):
                self._owner = me
                self._count = 1
                return True
        taken = block.acquire(blocking, timeout)
        if taken:
            self._owner = me
            self._count = 1
        return taken

    __enter__ = acquire

    def release(self, *_exc: object) -> None:
        # (``*_exc``: it is ``__exit__`` too, one frame fewer than threading's)
        if self._owner != _get_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self._count = count = self._count - 1
        if not count:
            self._owner = None
            self._block.release()

    __exit__ = release


# Named as threading's: its repr (``<unlocked threading._RLock object owner=...>``), which
# a log or a trace may show, and its type's name stay what a managed thread saw before.
SchedRLock.__module__ = "threading"
SchedRLock.__name__ = SchedRLock.__qualname__ = "_RLock"
