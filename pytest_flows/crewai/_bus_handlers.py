"""Handlers registered on crewai's event bus during a test end with the test.

``crewai_event_bus`` is process-wide: a handler a test registers with
``@crewai_event_bus.on(...)`` would go on receiving the next tests' events, and
crewai's per-kickoff usage listener stays registered when a kickoff is torn
down without its ``finally`` (a ``SystemExit`` mid-run). crewai's own
``scoped_handlers()`` is no help here: it unregisters *every* handler (console,
checkpointing) for the duration of the scope.

So: remember which handlers were registered when the test started, and at its
end unregister the new ones, except crewai's own process-wide listeners (they
are registered once, lazily, behind a "done" flag, so removing them would
silence them for the rest of the process).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["registered_handlers", "scoped_handlers"]

#: crewai handlers that belong to one kickoff or one stream, not to the process.
_PER_RUN = (
    "_attach_usage_aggregation_listener.<locals>",
    "_create_stream_handler.<locals>",
)


def registered_handlers(bus: Any) -> set[tuple[type[Any], Any]]:
    """Every ``(event type, handler)`` registered on ``bus`` right now."""
    with bus._rwlock.r_locked():
        tables = (dict(bus._sync_handlers), dict(bus._async_handlers))
    return {
        (event, handler)
        for table in tables
        for event, handlers in table.items()
        for handler in handlers
    }


def _belongs_to_the_test(handler: Any) -> bool:
    function = getattr(handler, "__func__", handler)
    module = str(getattr(function, "__module__", "") or "")
    if not (module == "crewai" or module.startswith("crewai.")):
        return True
    qualname = str(getattr(function, "__qualname__", ""))
    return any(marker in qualname for marker in _PER_RUN)


@contextlib.contextmanager
def scoped_handlers() -> Iterator[None]:
    """Unregister, at exit, the handlers registered inside (see the module doc)."""
    from crewai.events.event_bus import crewai_event_bus

    before = registered_handlers(crewai_event_bus)
    try:
        yield
    finally:
        for event, handler in registered_handlers(crewai_event_bus) - before:
            if _belongs_to_the_test(handler):
                crewai_event_bus.off(event, handler)
