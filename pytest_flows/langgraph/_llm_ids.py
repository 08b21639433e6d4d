"""The ids ``fake_llm`` gives its replies in LangGraph graphs: ``msg-<node>-<n>``.

Counted per node, so which of two parallel branches asks first never changes the
state (message ids are in it), and per thread, so each run on a fresh thread (every
``flows.run`` without a ``thread_id``, each schedule ``explore()`` runs) numbers from 1
and a re-run of the same schedule gives the same messages. A run that continues a
thread goes on counting where the thread's earlier runs stopped, and a number an id
the model is shown already carries (a history passed into a new thread) is skipped:
``add_messages`` replaces a message whose id it already holds, so a reused id would
overwrite history instead of appending to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["ReplyNumbers"]

_OURS = re.compile(r"^(?:msg|call)-(?P<node>.+)-(?P<n>\d+)(?:-\d+)?$")


class ReplyNumbers:
    """The reply counters of one binding of ``fake_llm``. Not thread-safe: the caller
    holds its binding's lock."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str | None, str], int] = {}

    def next(self, thread: Any, node: str, shown: Iterable[Any]) -> str:
        """The ident (``<node>-<n>``) of ``node``'s next reply on ``thread``, past every
        number the messages ``shown`` to the model carry for ``node``."""
        key = (None if thread is None else str(thread), node)
        count = self._counts.get(key, 0)
        for seen in _ids_of(shown):
            match = _OURS.match(seen)
            if match is not None and match.group("node") == node:
                count = max(count, int(match.group("n")))
        self._counts[key] = count + 1
        return f"{node}-{count + 1}"


def _ids_of(messages: Iterable[Any]) -> Iterable[str]:
    for message in messages:
        ident = getattr(message, "id", None)
        if isinstance(ident, str):
            yield ident
        for call in getattr(message, "tool_calls", None) or ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                yield call["id"]
        tool_call_id = getattr(message, "tool_call_id", None)
        if isinstance(tool_call_id, str):
            yield tool_call_id
