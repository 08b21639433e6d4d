"""Hypothesis strategies and property helpers for flow state: crash, resume, fork, time travel.

The strategies are plain values (compose them in your own ``@given`` tests):

* :func:`scheduler_seeds` - seeds for the deterministic scheduler (0 keeps the
  runtime's own order; others pick among the orders the runtime allows);
* :func:`crash_points` - where to stop a run: after (or just before) its
  k-th persisted save.

The property helpers (in :mod:`pytest_flows._internal.state.state_properties`, exported from
``pytest_flows``) run *your* flow on the harness and shrink a failure to
the smallest crash point (or checkpoint) with a reproducer:

* :func:`check_crash_resume` - stop the run after any persisted step, resume
  from the store in a fresh flow instance, reach the same final state and
  output as the uninterrupted run;
* :func:`check_fork_isolation` - a Hypothesis state machine of kickoffs,
  resumes and forks: forking never changes the source's history, and the fork
  starts from the source's latest snapshot;
* :func:`check_time_travel` - restore any checkpoint and continue: the same
  final state, output and trace as the rest of the uninterrupted run.

Each has a single-case twin (:func:`assert_crash_resume`,
:func:`assert_fork_isolated`, :func:`assert_time_travel`) that a failure's
reproducer calls. Hypothesis's stateful testing is synchronous; every step
runs the flow with ``flows.run`` on the harness's deterministic loop.

This module is framework-neutral: the framework work (building instances,
kicking off, restoring) comes from the store backend of the flow's framework
(``flow_store.backend_for(flow).operations(flows)``).
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.exploration.seeding import reseeded
from pytest_flows._internal.state.property_runs import Outcome, runtime_view
from pytest_flows._internal.state.store_records import CrashPoint

__all__ = [
    "CrashPoint",
    "Outcome",
    "crash_points",
    "default_settings",
    "private_storage",
    "reseeded",
    "runtime_view",
    "scheduler_seeds",
    "schedules",
]


# -- strategies --------------------------------------------------------------------
def scheduler_seeds(max_seed: int = 2**16 - 1) -> st.SearchStrategy[int]:
    """Scheduler seeds; shrinks towards 0 (the runtime's own submission order)."""
    if max_seed < 0:
        raise FlowsUsageError(f"scheduler_seeds(max_seed={max_seed}): pass a number >= 0.")
    return st.integers(min_value=0, max_value=max_seed)


def schedules(max_length: int = 64, max_choice: int = 3) -> st.SearchStrategy[str]:
    """Schedules to pass to ``flows.run(F, schedule=...)``; shrink towards ``"w"`` (the
    default schedule: what seed 0 does) and fewer departures from it.

    A drawn schedule fits any run (its indices wrap around each choice point's
    options, see :mod:`pytest_flows._internal.runtime.schedule`); the run's ``run.schedule`` is the
    exact schedule to replay a failure with.
    """
    from pytest_flows._internal.runtime.schedule import encode

    if max_length < 0 or max_choice < 1:
        raise FlowsUsageError(
            f"schedules(max_length={max_length}, max_choice={max_choice}): pass "
            "max_length >= 0 and max_choice >= 1."
        )
    choices = st.lists(st.integers(0, max_choice), max_size=max_length)
    return choices.map(lambda indices: "w" + encode(indices)[1:])


def crash_points(
    saves: int, *, when: Sequence[Literal["after", "before"]] = ("after", "before")
) -> st.SearchStrategy[CrashPoint]:
    """Crash points of a run with ``saves`` persisted saves; shrinks to ``after save 1``.

    ``after`` stops the run right after the save landed (the process died
    before the next step); ``before`` stops it with the method done but its
    state not yet saved.
    """
    if saves < 1:
        raise FlowsUsageError(
            f"crash_points({saves}): the run saved nothing, so there is no persisted step to "
            "crash after. Decorate the flow (or its methods) with @persist."
        )
    if not when:
        raise FlowsUsageError("crash_points(when=()): pass 'after', 'before' or both.")
    return st.builds(
        CrashPoint,
        save=st.integers(min_value=1, max_value=saves),
        when=st.sampled_from(list(when)),
    )


def default_settings(max_examples: int = 20) -> settings:
    """Settings for the property helpers: few examples, no deadline, reproducible.

    ``derandomize`` keeps them as deterministic as the harness (same test,
    same examples); ``database=None`` keeps them off the disk.
    """
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        # No "explain" phase: it would list pytest-flows' own lines, not yours.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    )


# -- where hypothesis writes -------------------------------------------------------
_storage_lock = threading.Lock()
_storage: Path | None = None


def _storage_dir() -> Path:
    global _storage
    with _storage_lock:
        if _storage is None:
            _storage = Path(tempfile.mkdtemp(prefix="pytest-flows-hypothesis-"))
            atexit.register(shutil.rmtree, _storage, True)
        return _storage


@contextlib.contextmanager
def private_storage() -> Iterator[None]:
    """Hypothesis' files go to a private temporary directory while the property
    helpers run, not to ``.hypothesis/`` in the project.

    ``database=None`` keeps examples off the disk, but hypothesis still caches
    what it reads of the source tree (``.hypothesis/constants/``, files naming
    absolute paths) in its home directory. A home the user set (the
    ``HYPOTHESIS_STORAGE_DIRECTORY`` variable or ``set_hypothesis_home_dir``)
    is theirs and is kept.
    """
    import os

    from hypothesis import configuration

    previous = getattr(configuration, "__hypothesis_home_directory", None)
    if previous is not None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    configuration.set_hypothesis_home_dir(_storage_dir())
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(None)
