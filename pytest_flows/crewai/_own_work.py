"""crewAI's own work inside a run, which an exploration need not order.

A flow whose parallel listeners run agents (``fake_llm`` answering real ``Agent`` s)
made a search of two crews run past 600 schedules for 2 outcomes, where the same flow
with scripted crews (``fake_crews``) completes in 5. Two kinds of crewAI bookkeeping
looked like races between the listeners' threads, and each multiplied the other:

- every agent runs an ``AgentExecutor``, itself a crewAI ``Flow``; keyed by method name
  alone, two executors' firings (``finalize``, ``check_max_iterations``) were one object
  (:func:`scope`);
- every event goes into the run's ``EventRecord`` under a read-write lock that all the
  run's threads share (:func:`quiet_event_record`).

Measured on ``examples/exploration/crew_flow.py`` with agents: past 600 schedules
with either change alone, complete with both (the counts: docs/exploration.md, "Flows
whose parallel listeners run agents").
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from crewai.events.event_bus import CrewAIEventsBus

from pytest_flows.adapters import QuietLock
from pytest_flows.adapters import recording_accesses as recording
from pytest_flows.crewai._seams import SEAMS

__all__ = ["quiet_event_record", "scope"]

_RECORD_EVENT = "crewai.events.event_bus:CrewAIEventsBus._record_event"
_original_record_event: Any = CrewAIEventsBus._record_event


def scope(flow: Any) -> str:
    """The prefix of the keys that record ``flow``'s firings: none for a user's flow; for a
    flow crewAI runs for its own work (an agent's ``AgentExecutor``), its class and the
    agent's role.

    Different prefixes are different flows for sure; two executors of agents with one
    role share a prefix and are ordered against each other as before (sound, only
    dearer). The prefix is the same in every run, whatever order the executors were made
    in, so a search's runs agree on it."""
    cls = type(flow)
    if not cls.__module__.startswith("crewai."):
        return ""
    role = getattr(getattr(flow, "agent", None), "role", None)
    return f"{cls.__qualname__}[{role}]/" if isinstance(role, str) else f"{cls.__qualname__}/"


class _QuietCondition(threading.Condition):
    """``RWLock``'s condition on a :class:`QuietLock`: a free take is no switch point."""

    def __init__(self) -> None:
        super().__init__(QuietLock())  # type: ignore[arg-type]


def _quieted(record: Any) -> None:
    lock: Any = getattr(record, "_lock", None)  # seam: crewai EventRecord._lock (an RWLock)
    cond = getattr(lock, "_cond", None)
    if cond is None or isinstance(cond, _QuietCondition):
        return
    if getattr(lock, "_writer", True) or getattr(lock, "_readers", 1):
        return  # held: swap it only while free, or two writers could meet
    lock._cond = _QuietCondition()  # seam: crewai RWLock._cond


@contextlib.contextmanager
def quiet_event_record() -> Iterator[None]:
    """While a schedule is followed, the run's ``EventRecord`` takes its lock quietly.

    crewAI adds every emitted event to the record under a write lock, from whichever
    thread emits it; the order of two threads' adds decides only the order of the
    record's entries. Within a run nothing reads them back (their readers restore a run
    from a checkpoint and take the highest event sequence number, which no order
    changes); the order shows only in a checkpoint's ``event_record``, which is no part
    of an outcome. So two threads' takes are no race for the search to reverse, and a
    free take is no choice point (a held lock still blocks through the scheduler).
    Making the takes switch points that record nothing kept every schedule string's
    meaning, but left the search of two agents' crews past 300 schedules, where the
    quiet lock completes it (docs/exploration.md)."""
    original = _original_record_event

    def record_event(self: Any, event: Any) -> Any:
        if recording():
            state = self._runtime_state
            if state is not None:
                _quieted(state.event_record)
        return original(self, event)

    with SEAMS[_RECORD_EVENT].replace(record_event):
        yield
