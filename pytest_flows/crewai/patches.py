"""Every reach into crewai's private internals, in one place.

crewai leaves some choices to chance (event-bus handler threads, the iteration
order of a frozenset of racing listeners) and offers no public hook for them.
These narrow patches fix those choices without changing what the runtime
decides. :func:`check_patch_points` fails loudly if a crewai upgrade moves any
of them; the test suite calls it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

from crewai.events.event_bus import crewai_event_bus
from crewai.flow.runtime import Flow

__all__ = [
    "InlineExecutor",
    "check_patch_points",
    "inline_event_bus",
    "ordered_races",
    "render_condition",
]

RaceObserver = Callable[[Any, list[str]], "RaceRecorder"]


class InlineExecutor:
    """Runs event-bus handlers in the emitting thread, in emission order."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


@contextlib.contextmanager
def inline_event_bus() -> Iterator[None]:
    """Run crewai's sync event handlers inline (checkpoints see consistent state)."""
    bus: Any = crewai_event_bus
    bus._ensure_executor_initialized()
    previous = bus._sync_executor
    bus._sync_executor = InlineExecutor()
    try:
        yield
    finally:
        bus._sync_executor = previous


class RaceRecorder:
    """Told how each racer of one ``or_`` race ended."""

    def finished(self, name: str) -> None: ...
    def failed(self, name: str, error: BaseException) -> None: ...
    def cancelled(self, name: str) -> None: ...


_original_racing: Any = Flow._execute_racing_listeners


@contextlib.contextmanager
def ordered_races(order: Callable[[list[str]], list[str]], observe: RaceObserver) -> Iterator[None]:
    """Start ``or_`` racers in a seeded order instead of frozenset (hash-seed) order.

    ``order`` receives the racer names sorted and returns the start order;
    ``observe(flow, racers)`` returns a :class:`RaceRecorder` for the race.
    """

    async def racing(
        self: Any,
        racing_listeners: frozenset[str],
        other_listeners: list[str],
        result: Any,
        triggering_event_id: str | None = None,
    ) -> None:
        racers = order(sorted(str(name) for name in racing_listeners))
        recorder = observe(self, racers)
        remaining = set(racers)
        single = self.__dict__.get("_execute_single_listener")
        original_single = type(self)._execute_single_listener

        async def tracked(name: Any, *args: Any, **kwargs: Any) -> Any:
            racer = str(name) in remaining
            remaining.discard(str(name))
            if not racer:
                return await original_single(self, name, *args, **kwargs)
            try:
                value = await original_single(self, name, *args, **kwargs)
            except asyncio.CancelledError:
                recorder.cancelled(str(name))
                raise
            except Exception as exc:
                recorder.failed(str(name), exc)
                raise
            recorder.finished(str(name))
            return value

        # The racing method creates its tasks through self._execute_single_listener;
        # an instance attribute shadows the method for exactly this call.
        self.__dict__["_execute_single_listener"] = tracked
        try:
            await _original_racing(self, racers, other_listeners, result, triggering_event_id)
        finally:
            if single is None:
                self.__dict__.pop("_execute_single_listener", None)
            else:
                self.__dict__["_execute_single_listener"] = single

    setattr(Flow, "_execute_racing_listeners", racing)  # noqa: B010 - the patch
    try:
        yield
    finally:
        setattr(Flow, "_execute_racing_listeners", _original_racing)  # noqa: B010


def render_condition(condition: Any) -> str:
    """``and(a, or(b, c))`` for crewai's condition trees (str or {"and"/"or": [...]})."""
    if isinstance(condition, str):
        return condition
    if isinstance(condition, dict):
        for op in ("and", "or"):
            if op in condition:
                return f"{op}({', '.join(render_condition(c) for c in condition[op])})"
    return repr(condition)


def listen_condition(flow: Any, method: str) -> Any:
    """The condition ``method`` listens on, or None for a plain start method."""
    definition = flow._definition.methods.get(method)
    return None if definition is None else definition.listen


def is_router(flow: Any, method: str) -> bool:
    definition = flow._definition.methods.get(method)
    return bool(definition is not None and definition.router)


def check_patch_points() -> None:
    """Raise AssertionError naming the first private crewai seam that moved."""
    bus: Any = crewai_event_bus
    problems = []
    for attr in ("_ensure_executor_initialized", "_sync_executor"):
        if not hasattr(bus, attr) and attr != "_sync_executor":
            problems.append(f"crewai_event_bus.{attr}")
    params = list(inspect.signature(_original_racing).parameters)
    if params[:5] != [
        "self",
        "racing_listeners",
        "other_listeners",
        "result",
        "triggering_event_id",
    ]:
        problems.append(f"Flow._execute_racing_listeners signature is now {params}")
    source = inspect.getsource(_original_racing)
    if "self._execute_single_listener(" not in source or "as_completed" not in source:
        problems.append("Flow._execute_racing_listeners no longer races via as_completed")
    if not hasattr(Flow, "_definition") and "_definition" not in getattr(
        Flow, "__private_attributes__", {}
    ):
        problems.append("Flow._definition")
    emit_source = inspect.getsource(type(bus).emit)
    if "self._sync_executor.submit(" not in emit_source:
        problems.append("CrewAIEventsBus.emit no longer submits sync handlers to _sync_executor")
    if problems:
        raise AssertionError(
            "pytest-flows' crewai patch points moved (crewai upgrade?): " + "; ".join(problems)
        )
