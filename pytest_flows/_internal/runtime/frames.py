"""Every thread's current frame, without the hang ``sys._current_frames()`` can cause.

``sys._current_frames()`` holds the interpreter's lock on its list of threads while it
makes a frame object for each thread. Making one can start a garbage collection, the
collection can run Python code (a weak reference's callback) that lets go of the GIL,
and a thread that starts or ends meanwhile takes the GIL and waits for that lock: the
process hangs with every thread in a futex wait (CPython gh-106883, fixed in 3.11.12 by
turning the collector off for the call). The harness looks at other threads' frames
from its liveness watchdog several times a second while LangGraph's pools start and end
threads: the long random-graph check hung on 3.11.7 in about one check of a thousand
(the watchdog in a weakref callback under ``sys._current_frames()``, a pool worker in
``Thread.start``). So the collector is off for the call here too, on every version.
"""

from __future__ import annotations

import gc
import sys
from types import FrameType

__all__ = ["current_frames"]


def current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()`` with the cyclic collector off for the call (turned on
    again only if it was on: a test that turned it off keeps it off)."""
    was_on = gc.isenabled()
    if was_on:
        gc.disable()
    try:
        return sys._current_frames()
    finally:
        if was_on:
            gc.enable()
