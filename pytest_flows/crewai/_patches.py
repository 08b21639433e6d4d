"""The crewai runtime patches: the event bus, ``or_`` races, flow state, agent steps.

crewai leaves some choices to chance (event-bus handler threads, the iteration
order of a frozenset of racing listeners) and offers no public hook for them.
These narrow patches fix those choices without changing what the runtime
decides. Every seam they rely on is declared in :mod:`pytest_flows.crewai._seams`,
whose :func:`check_patch_points` fails loudly if a crewai upgrade moves one; the
human fake's patches are in ``human_patches.py``, flow_store's in ``store_patches.py``.
"""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

from crewai.events.event_bus import crewai_event_bus
from crewai.flow.runtime import Flow

from pytest_flows.adapters import (
    LAST_WRITE,
    RESULT_WANTED_BY,
    foreign_work,
    note_caveat,
    overlapping,
    record_access,
    replaced,
    shared_outside,
    switch_point,
)
from pytest_flows.adapters import recording_accesses as recording
from pytest_flows.crewai import _compat as compat
from pytest_flows.crewai._own_work import scope
from pytest_flows.crewai._seams import SEAMS, check_patch_points
from pytest_flows.crewai._state_access import observed

__all__ = [
    "InlineExecutor",
    "check_patch_points",
    "condition_leaves",
    "inline_event_bus",
    "note_shared_outside",
    "ordered_races",
    "record_method_outputs",
    "recorded_triggers",
    "render_condition",
    "settled_async_handlers",
    "state_switch_points",
]

RaceObserver = Callable[[Any, list[str]], "RaceRecorder"]


_SETTLED = threading.Condition(_thread.RLock())


class InlineExecutor:
    """Runs event-bus handlers in the emitting thread, in emission order."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        # Settled before anyone sees it, so nobody ever waits on its condition: a real,
        # shared one keeps the bus's many calls on these futures from being switch
        # points (and exploration choices) that exist only because the harness ran
        # the handler inline.
        future._condition = _SETTLED  # seam: concurrent.futures._base:Future.__init__
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None


_original_state: Any = Flow.__dict__["state"]


@contextlib.contextmanager
def state_switch_points() -> Iterator[None]:
    """Every read of ``flow.state`` is a switch point of the thread scheduler.

    crewai hands parallel sync listeners the one shared state object (no proxy), so
    ``self.state.n = self.state.n + 1`` is a read-modify-write race; the seed can now
    switch threads between its read and its write.
    """
    getter = _original_state.fget

    def state(self: Any) -> Any:
        switch_point("flow state")
        return observed(self, getter(self))

    new = property(state, _original_state.fset, _original_state.fdel)
    with SEAMS["crewai.flow.runtime:Flow.state"].replace(new):
        yield


def start_event_bus() -> None:
    bus: Any = crewai_event_bus
    bus._ensure_executor_initialized()


@contextlib.contextmanager
def inline_event_bus() -> Iterator[None]:
    """Run crewai's sync event handlers inline (checkpoints see consistent state)."""
    start_event_bus()
    # The seam is CrewAIEventsBus.emit, which submits sync handlers to this executor.
    with replaced(crewai_event_bus, "_sync_executor", InlineExecutor()):
        yield


def handlers_in_flight() -> list[Future[Any]]:
    """The bus's handler runs not finished yet: the async ones run on the bus's own
    loop, in real time (see foreign_work.py)."""
    bus: Any = crewai_event_bus
    with bus._futures_lock:
        return list(bus._pending_futures)


@contextlib.contextmanager
def settled_async_handlers() -> Iterator[None]:
    """An idle deterministic loop lets the bus's handlers in flight finish before virtual
    time jumps, as the real wait would (``emit`` then ``await asyncio.sleep(...)``)."""
    with foreign_work(handlers_in_flight):
        yield


class RaceRecorder:
    """Told how each racer of one ``or_`` race ended."""

    def finished(self, name: str) -> None: ...
    def failed(self, name: str, error: BaseException) -> None: ...
    def cancelled(self, name: str) -> None: ...


_original_racing: Any = Flow._execute_racing_listeners
_SINGLE = SEAMS["crewai.flow.runtime:Flow._execute_single_listener"]
_TRIGGERED = SEAMS["crewai.flow.runtime:Flow._find_triggered_methods"]
_CLEAR_OR = SEAMS["crewai.flow.runtime:Flow._clear_or_listeners"]
_REARM_OR = SEAMS["crewai.flow.runtime:Flow._rearm_or_listeners_for_trigger"]


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
        if recording() and len({_is_async(self, name) for name in racers}) > 1:
            note_caveat(_MIXED_CAVEAT)
        remaining = set(racers)
        original_single = type(self)._execute_single_listener
        original_triggered = type(self)._find_triggered_methods
        # Who wins, and which racer fires the or_ listener, is decided in the racers'
        # own tasks on the event loop: each decision is an access to the race, so an
        # exploration orders the racers' tasks against each other (see Step.task).
        # Two keys: which racer ends first (and whether a loser ends before the racing
        # task cancels it) is independent of which one fires the or_ listener.
        names = f"{scope(self)}or({', '.join(sorted(racers))})"
        key, fires, check = f"race:{names}", f"fires:{names}", f"check:{names}"

        async def tracked(name: Any, *args: Any, **kwargs: Any) -> Any:
            racer = str(name) in remaining
            remaining.discard(str(name))
            if not racer:
                return await original_single(self, name, *args, **kwargs)
            # The racer's pool jobs end against the racing task's look at it (its task
            # has its own context: the mark stays with this racer and what it starts).
            if recording():
                RESULT_WANTED_BY.set(
                    (*RESULT_WANTED_BY.get(), (asyncio.current_task(), (key, check), (check,)))
                )
            try:
                value = await original_single(self, name, *args, **kwargs)
            except asyncio.CancelledError:  # decided by the racing task (see _RacerTask)
                recorder.cancelled(str(name))
                raise
            except Exception as exc:
                record_access(key, write=True)
                recorder.failed(str(name), exc)
                raise
            record_access(key, write=True)
            recorder.finished(str(name))
            return value

        def triggered(trigger_method: Any, router_only: bool) -> Any:
            if not router_only and str(trigger_method) in racers:
                record_access(fires, write=True)  # the racer checks (and fires) the or_
            return original_triggered(self, trigger_method, router_only)

        racing_coros: set[Any] = set()

        def single(name: Any, *args: Any, **kwargs: Any) -> Any:
            coro = tracked(name, *args, **kwargs)
            if str(name) in remaining:
                racing_coros.add(coro)
            return coro

        # The racing method creates its tasks through self._execute_single_listener;
        # an instance attribute shadows the method for exactly this call.
        with (
            _SINGLE.shadow(self, single),
            _TRIGGERED.shadow(self, triggered),
            _racer_tasks(racing_coros, key, check),
        ):
            await _original_racing(self, racers, other_listeners, result, triggering_event_id)

    with SEAMS["crewai.flow.runtime:Flow._execute_racing_listeners"].replace(racing):
        yield


_MIXED_CAVEAT = (
    "an or_ race between a sync racer (on a pool thread) and an async one (on the loop): "
    "the order of the async racer's timer against the sync racer's thread end is not "
    "reversed as a race, so a seed may reach an outcome the search did not (a cancelled "
    "sync racer's output, say)."
)


def _is_async(flow: Any, name: str) -> bool:
    method = getattr(flow, "_methods", {}).get(name)
    method = getattr(method, "_meth", method)
    return asyncio.iscoroutinefunction(method)


_FACTORY_CAVEAT = (
    "an or_ race ran on a loop with its own task factory: the racing task's look at the "
    "racers (whom it cancels) was not recorded, so not every order that decides the race "
    "was tried."
)


class _RacerTask(asyncio.Task):  # type: ignore[type-arg]
    """A racer's task: the racing method's look at whether it is done (deciding whom to
    cancel once one racer won) is an access to the race, made by the racing task."""

    race_key = ""
    check_key = ""

    def done(self) -> bool:
        running = asyncio.current_task(self.get_loop())
        if running is not None and running is not self:
            record_access(self.race_key, write=True)
            record_access(self.check_key, write=True)
        return super().done()


@contextlib.contextmanager
def _racer_tasks(coros: set[Any], key: str, check: str) -> Iterator[None]:
    """While the racing method runs, the tasks it creates for ``coros`` are
    :class:`_RacerTask` s (other tasks are made as before)."""
    if not recording():  # only a schedule being followed records the race
        yield
        return
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    if previous is not None and not getattr(previous, "_flows_racers", False):
        # The flow's own task factory makes the racers' tasks: the racing task's look
        # at them is not seen, so the exploration says so.
        note_caveat(_FACTORY_CAVEAT)
        yield
        return

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        if coro in coros:
            coros.discard(coro)
            task = _RacerTask(coro, loop=loop, **kwargs)
            task.race_key, task.check_key = key, check
            return task
        if previous is not None:  # an enclosing race's
            return previous(loop, coro, **kwargs)
        return asyncio.Task(coro, loop=loop, **kwargs)

    factory._flows_racers = True  # type: ignore[attr-defined]

    loop.set_task_factory(factory)
    try:
        yield
    finally:
        if loop.get_task_factory() is factory:
            loop.set_task_factory(previous)


class _RecordedOutputs(list):  # type: ignore[type-arg]
    """crewai's list of method outputs: each append is an access, since the order of
    the appends decides the flow's output (its last method's), and the loop's tasks
    append in whatever order their work ends."""

    def append(self, item: Any) -> None:
        # The flow's output is the last method's: two appends of equal outputs commute.
        output = item.get("output") if isinstance(item, dict) else item
        record_access(f"{LAST_WRITE}{_text(output)}", write=True)
        super().append(item)


def _text(value: Any) -> str:
    try:
        return repr(value)[:200]
    except Exception:  # a repr that fails: tell values apart by identity
        return f"<{type(value).__qualname__} {id(value):x}>"


#: The packages whose classes a flow inherits the framework's own code from.
_FRAMEWORK = ("crewai", "pydantic", "builtins", "typing", "abc")


def note_shared_outside(flow: Any, trace: Callable[[], Any]) -> None:
    """While a schedule is followed: say what methods that ran at the same time in this
    run (``trace()``: its events) share outside the state, which the search does not
    record (see outside_state.py)."""
    if not recording():
        return
    events = [
        (e.kind.removeprefix("method."), e.name or "")
        for e in trace()
        if e.kind.startswith("method.")
    ]
    for caveat in shared_outside(type(flow), _FRAMEWORK, overlapping(events)):
        note_caveat(caveat)


def record_method_outputs(flow: Any) -> None:
    """While a schedule is followed, make the order of ``flow``'s method outputs an
    access the exploration orders (see :class:`_RecordedOutputs`)."""
    if not recording():
        return
    outputs = getattr(flow, "_method_outputs", None)
    if type(outputs) is list:
        flow._method_outputs = _RecordedOutputs(outputs)  # seam: crewai Flow._method_outputs


# -- reading the flow's graph (trace lines) ----------------------------------------------


_original_triggered: Any = Flow._find_triggered_methods
_original_clear: Any = Flow._clear_or_listeners
_original_rearm: Any = Flow._rearm_or_listeners_for_trigger


def condition_leaves(condition: Any) -> list[str]:
    """The method names and labels a crewai condition tree (str or {"and"/"or": [...]})
    waits on, in order ([] for None or a shape not known)."""
    if isinstance(condition, str):
        return [condition]
    if isinstance(condition, dict):
        return [leaf for sub in next(iter(condition.values())) for leaf in condition_leaves(sub)]
    return []


@contextlib.contextmanager
def recorded_triggers() -> Iterator[None]:
    """While a schedule is followed, a completed method's look at each ``and_``/``or_``
    listener it counts towards is a write of ``fires:<listener>``.

    The completion that makes such a condition true fires the listener: its task then
    happens after that completion, and which completion it is depends on the order the
    sources ended in. crewai keeps that in the flow's pending events, which no state
    access shows; without the record an exploration never reverses two sources' ends
    (an ``and_(s0, s1)`` listener always started by ``s1``, with ``s0``'s end held back
    by no schedule though a seed holds it back: soundness_flows.HeldBackStart).
    """

    def triggered(self: Any, trigger_method: Any, router_only: bool) -> Any:
        if not recording():
            return _original_triggered(self, trigger_method, router_only)
        trigger = str(trigger_method)
        prefix = scope(self)
        joins: list[str] = []
        for name, definition, condition in self._listener_methods():
            if definition.router != router_only or isinstance(condition, str):
                # not looked at in this call (crewai's own filter); or one source:
                # fired by it alone, in whatever order
                continue
            leaves = condition_leaves(condition)
            if _plain_and(condition) and trigger in leaves:
                joins.append(str(name))
            elif not leaves or trigger in leaves:  # not leaves: a shape not known
                record_access(f"fires:{prefix}{name}", write=True)
        fired = _original_triggered(self, trigger_method, router_only)
        names = {str(n) for n in fired or ()}
        sole = _sole_joins(self) if joins else set()
        for name in joins:
            if name in sole:
                # Its sources start nothing else: which one fires it decides only where
                # its task is queued, and that is where the last look ran, whichever
                # source's it is. The looks commute; the firing one comes after all.
                record_access(f"after:{prefix}{name}/{trigger}", write=True)
                if name in names:
                    for source in _join_sources(self, name):
                        record_access(f"after:{prefix}{name}/{source}", write=False)
                continue
            # An and_ of methods fires once all have ended: the sources' looks commute
            # (each adds its own end), the one that fires it reads them all. Which one
            # that is still matters (the listener's task is queued where it fires).
            record_access(f"fires:{prefix}{name}.{trigger}", write=True)
            if name in names:
                record_access(f"fires:{prefix}{name}", write=False)
        return fired

    def cleared(self: Any) -> None:
        # crewai clears every fired or_ listener when a method runs again (a cycle): a
        # source's end after the clear fires the or_ listener again, before it does not.
        # Not recorded, the two orders were no race (soundness_misses/or_router_runs_again.txt).
        if recording():
            for name in _or_listeners(self):
                record_access(f"fires:{scope(self)}{name}", write=True)
        _original_clear(self)

    def rearmed(self: Any, trigger: Any, rearmable: Any = None) -> Any:
        # A router's fresh label re-arms the fired or_ listeners it feeds (a cycle):
        # like the clear, a source's end after it fires such a listener again, before
        # it does not.
        if recording():
            fed = {
                str(n)
                for n, _d, c in self._listener_methods()
                if str(trigger) in condition_leaves(c)
            }
            for name in _or_listeners(self):
                if name in fed:
                    record_access(f"fires:{scope(self)}{name}", write=True)
        return _original_rearm(self, trigger, rearmable)

    with (
        _TRIGGERED.replace(triggered),
        _CLEAR_OR.replace(cleared),
        _REARM_OR.replace(rearmed),
    ):
        yield


def _or_listeners(flow: Any) -> list[str]:
    """The listeners crewai fires once until it clears them: an ``or_`` of two or more
    sources, not a router (crewai's ``_is_multi_event_or``, checked for non-routers)."""
    found = []
    for name, definition, condition in flow._listener_methods():
        if definition.router or not isinstance(condition, dict) or len(condition) != 1:
            continue
        ((op, branches),) = condition.items()
        if op == "or" and len(branches) > 1:
            found.append(str(name))
    return found


def _join_sources(flow: Any, name: str) -> list[str]:
    definition = _definition(flow, name)
    return [] if definition is None else condition_leaves(definition.listen)


def _sole_joins(flow: Any) -> set[str]:
    """The plain ``and_`` listeners whose sources start nothing else (no other listener
    waits on any of them), in a flow where every method runs at most once (no router,
    no start that also listens): which source's end fires such a join decides only
    where the join's task is queued, and that is where the last look ran, whoever's it
    is; every other look comes before it in every order (see docs/exploration.md)."""
    methods = compat.flow_definition(flow).methods
    if any(d.router or (d.start and d.listen is not None) for d in methods.values()):
        return set()
    listeners = [(str(name), condition) for name, _d, condition in flow._listener_methods()]
    found: set[str] = set()
    for name, condition in listeners:
        if isinstance(condition, str) or not _plain_and(condition):
            continue
        others = {
            leaf for other, cond in listeners if other != name for leaf in condition_leaves(cond)
        }
        if not set(condition_leaves(condition)) & others:
            found.add(name)
    return found


def _plain_and(condition: Any) -> bool:
    """An ``and_`` of method names alone (no nested ``or_``, no router labels' repeats)."""
    if not isinstance(condition, dict) or len(condition) != 1:
        return False
    ((op, leaves),) = condition.items()
    return op == "and" and all(isinstance(leaf, str) for leaf in leaves)


def render_condition(condition: Any) -> str:
    """``and(a, or(b, c))`` for crewai's condition trees (str or {"and"/"or": [...]})."""
    if isinstance(condition, str):
        return condition
    if isinstance(condition, dict):
        for op in ("and", "or"):
            if op in condition:
                return f"{op}({', '.join(render_condition(c) for c in condition[op])})"
    return repr(condition)


def _definition(flow: Any, method: str) -> Any:
    return compat.flow_definition(flow).methods.get(method)


def start_condition(flow: Any, method: str) -> Any:
    """The router labels a conditional ``@start("label")`` waits for, or None."""
    definition = _definition(flow, method)
    start = None if definition is None else definition.start
    return start if isinstance(start, str | dict) else None


def listen_condition(flow: Any, method: str) -> Any:
    """The condition ``method`` listens on, or None for a plain start method."""
    definition = _definition(flow, method)
    return None if definition is None else definition.listen


def is_router(flow: Any, method: str) -> bool:
    definition = _definition(flow, method)
    return bool(definition is not None and definition.router)


def is_resuming(flow: Any) -> bool:
    """Whether ``flow`` is replaying completed methods (checkpoint or feedback resume)."""
    return bool(getattr(flow, "_is_execution_resuming", False))


# -- declarative agent steps (fake_crews) -----------------------------------------------

_agent_step: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "pytest_flows_agent_step", default=False
)


def in_agent_step() -> bool:
    """Whether the running code is inside a declarative ``call: agent`` step."""
    return _agent_step.get()


@contextlib.contextmanager
def outside_agent_step() -> Iterator[None]:
    token = _agent_step.set(False)
    try:
        yield
    finally:
        _agent_step.reset(token)


@contextlib.contextmanager
def marking_agent_steps() -> Iterator[None]:
    """Mark the run of every declarative ``call: agent`` step (``AgentAction.run``).

    The step builds its agent and awaits ``agent.kickoff_async`` in the same
    task, so a ContextVar set here tells that kickoff apart from any other.
    ``run`` must stay a coroutine function: flows built from a declaration
    checked that when they were built.
    """
    action = compat.agent_action()
    if action is None:  # crewai 1.14.x: no declarative agent steps to mark
        yield
        return
    original = action.__dict__["run"]

    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _agent_step.set(True)
        try:
            return await original(self, *args, **kwargs)
        finally:
            _agent_step.reset(token)

    with SEAMS["crewai.flow.runtime._actions:AgentAction.run"].replace(run):
        yield
