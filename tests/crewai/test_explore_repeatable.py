"""An exploration is repeatable: the same flow explores to the same schedules and
outcomes whenever it runs, whatever the virtual clock read when it began (the clock goes
on across the runs of a test) and whether its class ran before.

The clock rounds each wait up by a fraction of a microsecond that depends on the reading
the wait starts at; a 0.1 s sleep then fell on either side of the scheduler's "held back
for at most 0.1 s" rule, and a schedule derived from one run met other choice points in
the next (threads.SAME_MOMENT).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from crewai.flow.flow import Flow, start
from hash_seed_runs import QUIET_CREWAI
from pydantic import BaseModel, Field
from scheduler_flows import GuardedUpdate, LostUpdate

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.runtime import threads


class _State(BaseModel):
    x: int = 0
    y: int = 0
    log: list[str] = Field(default_factory=list)


def _fresh_class() -> type[Flow[_State]]:
    """A new class each call (crewAI builds its method registry per class)."""

    class Repro(Flow[_State]):
        @start()
        async def s0(self) -> str:
            await asyncio.sleep(0)
            self.state.log.append(f"s0 saw {self.state.x}")
            return "s0"

        @start()
        def s1(self) -> str:
            time.sleep(0.1)
            if self.state.x == 0:
                self.state.x = 6
            return "s1"

    return Repro


def _search(flows: FlowsSession, target: Any) -> tuple[list[str], list[str]]:
    found = explore(flows, target, max_schedules=200)
    assert found.complete
    return [c.schedule for c in found.choosers], found.texts


def test_a_flow_explores_alike_every_time(flows: FlowsSession) -> None:
    first_class = _fresh_class()
    first = _search(flows, first_class)  # the class's first runs, the clock at 0
    flows.clock.advance(0.0173)  # a reading whose rounding differs
    assert _search(flows, first_class) == first  # the same class again
    flows.clock.advance(1000.0)  # a reading in another binade
    assert _search(flows, _fresh_class()) == first  # a class that never ran


_FRESH_PROCESS = """
import sys
sys.path.insert(0, {here!r})
from scheduler_flows import GuardedUpdate
from pytest_flows import FlowsSession, explore
with FlowsSession(test_id="tests::repeatable") as session:
    found = explore(session, GuardedUpdate, max_schedules=1000)
print(found.schedules_run, found.complete)
"""


def test_a_locked_flow_explores_alike_after_other_runs_and_late_thread_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The locked twin took 128 schedules in a fresh process and 41 to 104 in one under
    # load: Thread.start() waits for the new thread's bootstrap, and when the thread had
    # not signalled yet the wait built a lock, numbered like the run's own, so every lock
    # built after it had another name than in the run the schedule came from. Here every
    # other start is late (it builds that lock), after other runs in this process.
    script = tmp_path / "fresh.py"
    script.write_text(_FRESH_PROCESS.format(here=str(Path(__file__).parent)))
    env = {**os.environ, **QUIET_CREWAI}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-2000:]
    fresh = done.stdout.split()
    assert fresh[1] == "True", fresh

    for seed in range(3):
        with FlowsSession(seed=seed, test_id="tests::repeatable") as other:
            other.run(LostUpdate, raise_on_error=False)
    real_start = threads._real_thread_start
    starts = itertools.count()

    def late(thread: threading.Thread) -> None:
        if next(starts) % 2:
            threading.Lock()  # what Event.wait builds for a thread that has not signalled
        real_start(thread)

    monkeypatch.setattr(threads, "_real_thread_start", late)
    with FlowsSession(test_id="tests::repeatable") as session:
        explore(session, LostUpdate, max_schedules=5)
        found = explore(session, GuardedUpdate, max_schedules=1000)
    assert next(starts) > 10  # the runs did start threads
    assert [str(found.schedules_run), str(found.complete)] == fresh


def _lock_names(found: Any) -> list[list[str]]:
    return [
        sorted(k for k in (*step.reads, *step.writes) if k.startswith("sync:"))
        for step in found.choosers[0].steps
    ]


def test_a_runs_lock_names_do_not_depend_on_the_flows_before_it(flows: FlowsSession) -> None:
    # crewai registers each flow by id() in a set kept in the test's context, shared by
    # every run of the test: a new flow at a dead one's address (CPython reuses them)
    # passed for registered, built its RuntimeState in kickoff instead of at
    # construction, and so named its locks differently from the run its schedule came
    # from (GuardedAppends explored 51 to 87 schedules with the process's past). Here
    # the registry claims every id, as a reused address does for one.
    from crewai.events import event_bus
    from soundness_flows import GuardedAppends

    clean = explore(flows, GuardedAppends, max_schedules=2)

    class EveryId(set[int]):
        def __contains__(self, item: object) -> bool:
            return True

    event_bus._registered_entity_ids_var.set(EveryId())
    again = explore(flows, GuardedAppends, max_schedules=2)
    assert _lock_names(again) == _lock_names(clean)
    assert any("sync:1" in names for names in _lock_names(clean))  # the state's lock
