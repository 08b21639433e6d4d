"""A run aborted while a thread it started waits for its first turn.

A thread a managed thread starts becomes a participant before it runs: its bootstrap
binds it to its OS thread id and parks it until the scheduler hands it the baton. When
the run is aborted at that moment (a schedule that does not fit, a deadlock found
elsewhere), the thread wakes, unwinds, and must forget that binding like any thread
that leaves. Before the fix it unwound past the ``leave`` (FlowsAborted escaped from
its first park, printed as "Exception in thread"), so its participant stayed
registered under its thread id. The OS reuses the id of a thread that ended for the
next thread it starts; during the same exploration (one scheduler, one generation)
that next thread's ``Thread.start`` bootstrap took the dead participant for its own at
its first managed lock (``Thread._started.set()``), parked on it for ever, and the
thread that started it waited in ``Thread.start`` for ever: the hang two shards of
the long random LangGraph check hit, no CPU, the driver in ``self._started.wait()``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.runtime import participants
from pytest_flows._internal.runtime.loop import Scheduler, activate, run
from pytest_flows._internal.runtime.schedule import Chooser

#: An option no choice point has: the schedule stops fitting there and the run aborts.
_MISFIT = 35


class _Started:
    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.ran: list[str] = []

    def scenario(self) -> Any:
        def child() -> None:
            self.ran.append(threading.current_thread().name)

        def starter() -> str:
            thread = threading.Thread(target=child, name=f"child-{len(self.threads)}")
            self.threads.append(thread)
            thread.start()
            thread.join()
            return "joined"

        async def main() -> str:
            return await asyncio.to_thread(starter)

        return main()


def _left_behind(sched: object) -> dict[int, list[Any]]:
    """Participants of ``sched`` registered under the id of a thread that has ended."""
    live = {thread.ident for thread in threading.enumerate()}
    return {
        ident: stack
        for ident, stack in participants._by_thread.items()
        if ident not in live and any(p.sched is sched for p in stack)
    }


def test_a_thread_started_just_before_its_run_aborts_leaves_nothing_under_its_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    escaped: list[str] = []
    monkeypatch.setattr(
        threading, "excepthook", lambda args: escaped.append(f"{args.thread}: {args.exc_type}")
    )
    scheduler = Scheduler(seed=1)
    # One activation for every run, as a FlowsSession (and so explore()) holds it: the
    # runs share one generation of the scheduler, so a participant left behind by one
    # run is still taken for a live one in the next.
    with activate(scheduler):
        whole = _Started()
        with scheduler.following(Chooser([])) as chooser:
            assert run(whole.scenario(), scheduler) == "joined"
        points = len(chooser.choices)
        assert points >= 2  # the pool thread's hand-off, the started thread's, ...

        parked_at_abort = 0
        for at in range(points):
            started = _Started()
            with (
                scheduler.following(Chooser([0] * at + [_MISFIT])),
                pytest.raises(FlowsUsageError, match="does not fit this run"),
            ):
                run(started.scenario(), scheduler)
            for thread in started.threads:
                thread.join(timeout=10)
                assert not thread.is_alive()
                # the abort hit the started thread before its first turn: the case at stake
                parked_at_abort += thread.name not in started.ran
            assert _left_behind(scheduler.threads) == {}, f"abort at choice point {at + 1}"
    assert parked_at_abort >= 1, "no abort hit a thread waiting for its first turn"
    assert escaped == []
