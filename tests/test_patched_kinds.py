"""Every stdlib name the harness patches keeps its kind while patched (issue 25).

A function stays a function and a class stays a class, so annotations, ``isinstance``
checks and pydantic schemas behave as on the bare runtime: ``threading.RLock`` is a
function in CPython, and a model annotated ``Optional[threading.RLock]`` must build.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest

from pytest_flows import FlowsSession
from pytest_flows._internal.contract.seams import resolve
from pytest_flows._internal.runtime import lock_factory
from pytest_flows._internal.runtime import stdlib_seams as _stdlib_seams

#: What freezegun replaces while a flows test's wall clock is frozen.
FROZEN = [
    (time, "time"),
    (time, "time_ns"),
    (time, "monotonic"),
    (time, "monotonic_ns"),
    (time, "perf_counter"),
    (time, "perf_counter_ns"),
    (time, "gmtime"),
    (time, "localtime"),
    (time, "strftime"),
    (datetime, "datetime"),
    (datetime, "date"),
]

#: threading's own switch: None means "no C RLock", and RLock() then builds the
#: pure-Python one, whichever way RLock was bound.
SENTINELS = {"threading:_CRLock"}


def kind(obj: Any) -> str:
    if isinstance(obj, type):
        return "class"
    if callable(obj):
        return "function"
    return type(obj).__name__


def _originals() -> dict[str, Any]:
    found = {
        seam.target: resolve(seam)
        for seam in _stdlib_seams.SEAMS
        if seam.kind == "patch" and seam.target not in SENTINELS
    }
    # The plugin makes threading.Lock its switchable factory for the whole session.
    found["threading:Lock"] = lock_factory._ORIGINAL
    found.update({f"{m.__name__}:{name}": getattr(m, name) for m, name in FROZEN})
    return found


ORIGINALS = _originals()


def test_every_patched_name_keeps_its_kind_inside_a_flows_test() -> None:
    with FlowsSession(test_id="kinds"):
        now = {
            seam.target: resolve(seam)
            for seam in _stdlib_seams.SEAMS
            if seam.kind == "patch" and seam.target not in SENTINELS
        }
        now.update({f"{m.__name__}:{name}": getattr(m, name) for m, name in FROZEN})
        patched = [name for name, value in now.items() if value is not ORIGINALS[name]]
        changed = {
            name: (kind(ORIGINALS[name]), kind(now[name]))
            for name in patched
            if callable(ORIGINALS[name]) and kind(ORIGINALS[name]) != kind(now[name])
        }
    # The walk covers what matters: the scheduler's, the clock's and the guard's patches.
    for name in ("threading:Lock", "threading:_allocate_lock", "time:sleep", "time:monotonic"):
        assert name in patched
    assert any(name.startswith("_socket:") for name in patched)
    assert changed == {}


def test_rlock_stays_the_function_and_builds_a_managed_lock() -> None:
    import threading

    with FlowsSession(test_id="kinds"):
        assert kind(threading.RLock) == "function"
        assert type(threading.RLock()).__name__ == "_RLock"  # the pure-Python one, on Lock
        assert type(threading.Lock()).__name__ == "SchedLock"
    assert type(threading.Lock()).__name__ == "lock"
    assert type(threading.RLock()).__name__ == "RLock"


def test_a_lock_factory_bound_before_the_test_builds_managed_locks_during_it() -> None:
    import threading

    bound = threading.Lock  # as PrivateAttr(default_factory=threading.Lock) binds it
    assert type(bound()).__name__ == "lock"
    with FlowsSession(test_id="kinds"):
        assert type(bound()).__name__ == "SchedLock"
    assert type(bound()).__name__ == "lock"


@pytest.mark.parametrize("original", [lock_factory._ORIGINAL], ids=["threading.Lock"])
def test_the_session_wide_factory_looks_like_the_original(original: Any) -> None:
    assert kind(lock_factory.lock) == kind(original)
    assert lock_factory.lock.__name__ == original.__name__
