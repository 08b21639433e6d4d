"""Which flow class or workflow each run in a test was, noted by the adapters.

The trace names a run (``flow started Triage``) but a name is not an identity:
two test modules may each define a ``Triage``. So when coverage is on, the
adapters note the run's graph at the moment they trace its start, in the same
order as the ``flow.started`` / ``workflow.started`` events; counting pairs
them up. With coverage off, noting is one global read.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator

from pytest_flows._internal.coverage.model import FlowGraph

__all__ = ["Started", "collecting", "note"]


@dataclasses.dataclass(frozen=True)
class Started:
    framework: str
    name: str  # as the trace's start event names it
    graph: FlowGraph | None  # None: the adapter could not read the structure
    problem: str = ""


# The harness runs one test at a time per process (as loop.active_scheduler).
_active: list[Started] | None = None
_lock = threading.Lock()


def note(framework: str, name: str, build: Callable[[], FlowGraph]) -> None:
    """Record that a run of ``name`` starts now; ``build`` is called only when collecting.

    Never raises: it runs inside the frameworks' event dispatch.
    """
    notes = _active
    if notes is None:
        return
    try:
        started = Started(framework, name, build())
    except Exception as exc:
        started = Started(framework, name, None, f"{type(exc).__name__}: {exc}")
    with _lock:
        notes.append(started)


@contextlib.contextmanager
def collecting() -> Iterator[list[Started]]:
    """Collect the runs started until exit (one test; inside another collection, the
    runs are the outer one's too)."""
    global _active
    notes: list[Started] = []
    with _lock:
        previous, _active = _active, notes
    try:
        yield notes
    finally:
        with _lock:
            _active = previous
            if previous is not None:
                previous.extend(notes)
