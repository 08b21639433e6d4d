"""The liveness guard never keeps a flow's objects alive (issue 40).

The watchdog samples the frame of the thread holding the baton to tell a block from
progress. It kept the sampled frame until its next look, and a frame holds its locals
(and its callers') after the function returned: LangGraph's own
``test_pregel_loop_refcount`` (gc disabled, counts live ``AsyncPregelLoop`` objects after
each run) failed under ``--flows-all`` whenever a look had landed in the loop's frames.
Bare, a local dies when its function returns; so it must under the harness.
"""

from __future__ import annotations

import gc
import time
import weakref

from pytest_flows._internal.runtime.loop import Scheduler, run


class _Box:
    pass


def _busy_with_a_box() -> weakref.ref[_Box]:
    box = _Box()
    # Real CPU time in this frame, long enough for the watchdog (a look every 50 ms at
    # most) to sample it a few times: that sampling is what is tested.
    end = time.clock_gettime(time.CLOCK_MONOTONIC) + 0.2
    while time.clock_gettime(time.CLOCK_MONOTONIC) < end:
        pass
    return weakref.ref(box)


async def _box_dies_on_return() -> bool:
    ref = _busy_with_a_box()
    return ref() is None


def test_a_frame_the_watchdog_sampled_does_not_outlive_its_function() -> None:
    # as LangGraph's test does: only reference counts free anything meanwhile
    gc.collect()
    gc.disable()
    try:
        assert run(_box_dies_on_return(), Scheduler(seed=0)) is True
    finally:
        gc.enable()
