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

from pytest_flows._internal.runtime import stdlib_seams as _stdlib_seams

__all__ = ["threads_inherit_context"]


def threads_inherit_context() -> contextlib.AbstractContextManager[None]:
    """Until exit, a started thread runs in a copy of the starting thread's context.

    The one ``Thread.start`` patch (shared with the thread scheduler) lives in
    ``_stdlib_seams.py``.
    """
    return _stdlib_seams.inheriting_context()
