"""Which shared-state keys each Agent Framework executor reads and writes, while a
schedule is explored.

Executors of one superstep run concurrently and share the workflow's state
(``ctx.get_state`` / ``ctx.set_state``); a fan-in whose result depends on which
delivery ran last is a race on a key. While a schedule is explored or replayed,
each call is recorded (:func:`pytest_flows._internal.runtime.participants.record_access`) under the
executor's id, with the user's source line.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from agent_framework import WorkflowContext

from pytest_flows.adapters import current_participant as current
from pytest_flows.adapters import record_access

__all__ = ["recorded_state"]

_INTERNAL = ("-packages/agent_framework/", "/pytest_flows/")


def _where() -> str:
    frame: Any = sys._getframe(2)
    while frame is not None and any(p in frame.f_code.co_filename for p in _INTERNAL):
        frame = frame.f_back
    if frame is None:
        return ""
    return f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"


def _note(ctx: Any, key: str, *, write: bool) -> None:
    me = current()
    if me is None or me.sched.chooser is None:
        return
    method = str(getattr(ctx, "_executor_id", "") or "")
    record_access(f"state.{key}", write=write, where=_where(), method=method)


@contextlib.contextmanager
def recorded_state() -> Iterator[None]:
    """Record ``ctx.get_state`` / ``ctx.set_state`` for the block."""
    get, put = WorkflowContext.get_state, WorkflowContext.set_state

    def get_state(self: Any, key: str, *args: Any, **kwargs: Any) -> Any:
        _note(self, key, write=False)
        return get(self, key, *args, **kwargs)

    def set_state(self: Any, key: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        _note(self, key, write=True)
        return put(self, key, value, *args, **kwargs)

    WorkflowContext.get_state = get_state  # type: ignore[method-assign]
    WorkflowContext.set_state = set_state  # type: ignore[method-assign]
    try:
        yield
    finally:
        WorkflowContext.get_state = get  # type: ignore[method-assign]
        WorkflowContext.set_state = put  # type: ignore[method-assign]
