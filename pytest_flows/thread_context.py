"""Threads a test starts run in a copy of the test's context.

A flows test's trace capture, console silencing and fakes are scoped to
ContextVars (crewai's stream sinks are ContextVars too). asyncio copies the
context into tasks and ``to_thread`` workers, but a ``threading.Thread`` starts
with an empty one (before Python 3.14), so a ``flows.run`` or ``kickoff()`` in
a helper thread would run unseen: no trace, no fakes. While a flows test runs,
every thread it starts gets a copy of its starter's context, as
``Thread(context=None)`` does on Python 3.14 with ``thread_inherit_context``.

Thread-pool workers are left alone: a pool outlives the work that started it,
and correct code hands each work item its context (``asyncio.to_thread``,
crewai's executors do).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["threads_inherit_context"]

_POOL_WORKER_MODULE = "concurrent.futures.thread"


def _inheriting(start: Callable[[threading.Thread], None]) -> Callable[[threading.Thread], None]:
    def start_in_context(thread: threading.Thread) -> None:
        target: Any = getattr(thread, "_target", None)
        if getattr(target, "__module__", None) != _POOL_WORKER_MODULE:
            context = contextvars.copy_context()
            body = thread.run
            thread.run = lambda: context.run(body)  # type: ignore[method-assign]
        start(thread)

    return start_in_context


@contextlib.contextmanager
def threads_inherit_context() -> Iterator[None]:
    """Until exit, a started thread runs in a copy of the starting thread's context."""
    original: Any = threading.Thread.start
    threading.Thread.start = _inheriting(original)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        threading.Thread.start = original  # type: ignore[method-assign]
