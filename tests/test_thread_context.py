"""Threads started during a flows test run in a copy of the starter's context."""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor

from pytest_flows import FlowsSession
from pytest_flows._internal.runtime.thread_context import threads_inherit_context

_marker: contextvars.ContextVar[str] = contextvars.ContextVar("test_marker", default="unset")


def _seen_by_a_thread() -> str:
    seen: list[str] = []
    thread = threading.Thread(target=lambda: seen.append(_marker.get()))
    thread.start()
    thread.join()
    return seen[0]


def test_a_thread_sees_its_starters_context_only_inside_the_block() -> None:
    token = _marker.set("from the test")
    try:
        assert _seen_by_a_thread() == "unset"
        with threads_inherit_context():
            assert _seen_by_a_thread() == "from the test"
        assert _seen_by_a_thread() == "unset"
    finally:
        _marker.reset(token)


def test_a_thread_changes_only_its_own_copy() -> None:
    token = _marker.set("outer")
    try:
        with threads_inherit_context():
            thread = threading.Thread(target=lambda: _marker.set("changed in the thread"))
            thread.start()
            thread.join()
        assert _marker.get() == "outer"
    finally:
        _marker.reset(token)


def test_pool_workers_do_not_inherit() -> None:
    token = _marker.set("from the test")
    try:
        with threads_inherit_context(), ThreadPoolExecutor(1) as pool:
            assert pool.submit(_marker.get).result() == "unset"
    finally:
        _marker.reset(token)


def test_a_flows_session_makes_threads_inherit_until_it_closes() -> None:
    token = _marker.set("in the session")
    original = threading.Thread.start
    try:
        with FlowsSession(test_id="thread-context"):
            assert _seen_by_a_thread() == "in the session"
        assert threading.Thread.start is original
        assert _seen_by_a_thread() == "unset"
    finally:
        _marker.reset(token)
