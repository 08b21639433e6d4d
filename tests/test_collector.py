"""The cyclic collector's young threshold while a session is open (runtime/collector.py):
raised by the first session, put back by the last, and never over a choice the test's
own code made. (What it saves is measured in tests/benchmarks, not here.)"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.collector import THRESHOLD


@pytest.fixture
def default_threshold() -> Iterator[tuple[int, ...]]:
    """CPython's default threshold for the test, whatever the session around it did."""
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*saved)


def test_a_session_raises_the_young_threshold_and_puts_it_back(
    default_threshold: tuple[int, ...],
) -> None:
    with FlowsSession(test_id="gc"):
        assert gc.get_threshold() == (THRESHOLD, 10, 10)
        with FlowsSession(test_id="gc-inner"):
            assert gc.get_threshold() == (THRESHOLD, 10, 10)
        assert gc.get_threshold() == (THRESHOLD, 10, 10)  # the outer one is still open
    assert gc.get_threshold() == default_threshold


def test_a_threshold_the_test_sets_stays(default_threshold: tuple[int, ...]) -> None:
    with FlowsSession(test_id="gc"):
        gc.set_threshold(100, 5, 5)
    assert gc.get_threshold() == (100, 5, 5)


def test_a_higher_threshold_or_a_disabled_collector_is_left_alone(
    default_threshold: tuple[int, ...],
) -> None:
    gc.set_threshold(50_000, 10, 10)
    with FlowsSession(test_id="gc"):
        assert gc.get_threshold() == (50_000, 10, 10)
    gc.set_threshold(*default_threshold)
    gc.disable()
    try:
        with FlowsSession(test_id="gc"):
            assert gc.get_threshold() == default_threshold
    finally:
        gc.enable()
    assert gc.get_threshold() == default_threshold


def test_gc_collect_still_collects_a_cycle_during_a_session() -> None:
    class Node:
        other: object = None

    with FlowsSession(test_id="gc"):
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
