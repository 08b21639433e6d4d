"""One test's harness: scheduler, ids, clock, network guard, adapters and trace.

The plugin opens a :class:`FlowsSession` before a flows test's fixtures are set
up and closes it after they are torn down; the ``flows`` fixture is its public
face.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import datetime as _dt
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.contract.adapters import (
    BIND_KINDS,
    Adapter,
    adapter_specs,
    bind_fake,
    load_adapter,
    spec_of,
)
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.exploration.schedule_runs import following_schedule, noted
from pytest_flows._internal.fakes.usage import collecting, enforced, merged_budget, within_budget
from pytest_flows._internal.identity import (
    DEFAULT_EPOCH,
    Normalizer,
    frozen_wall_clock,
    seeded_uuids,
)
from pytest_flows._internal.isolation import deterministic_loops
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime import collector as _collector
from pytest_flows._internal.runtime import loop as _loop
from pytest_flows._internal.runtime.liveness import check_block_grace
from pytest_flows._internal.runtime.network import check_allow_hosts, loopback_only, network_guard
from pytest_flows._internal.runtime.participants import internal_lock
from pytest_flows._internal.runtime.real_work import Hold, check_spin_limit
from pytest_flows._internal.runtime.thread_context import threads_inherit_context
from pytest_flows._internal.stash import SESSION_KEY
from pytest_flows._internal.trace import Trace, TraceEvent

if TYPE_CHECKING:
    from pytest_flows._internal.fakes.human_script import ScriptedHuman

__all__ = ["SESSION_KEY", "FlowsSession", "session_of"]


class FlowsSession:
    """Everything pytest-flows installs for one test, undone on :meth:`close`."""

    def __init__(
        self,
        *,
        seed: int = 0,
        test_id: str = "",
        console: bool = False,
        allow_hosts: Sequence[str] = (),
        epoch: _dt.datetime = DEFAULT_EPOCH,
        budget: Any = None,
        block_grace: float | None = None,
        spin_limit: float | None = None,
    ) -> None:
        self.budget = budget  # @pytest.mark.flows(budget=...), checked at each run
        #: @pytest.mark.flows(schedule=...) / --flows-schedule: every run replays it.
        self.schedule: str | None = None
        #: @pytest.mark.flows(races=...) / ini flows_races: "off", "warn" or "fail".
        self.races = "off"
        self.recorded_schedules: list[Any] = []  # what the runs accessed (races != "off")
        self.scheduler = _loop.Scheduler(seed=seed, stream=test_id)
        if block_grace is not None:
            self.scheduler.threads.block_grace = check_block_grace(
                block_grace, "FlowsSession(block_grace=...)"
            )
        # The trace says when virtual time waited for real work outside (real_work.py).
        # (weakly: a session must die with its test, see test_plugin's KEPT)
        held = weakref.WeakMethod(self._held)
        self.scheduler.threads.real_work.on_hold = lambda hold: _call(held, hold)
        if spin_limit is not None:
            self.scheduler.threads.real_work.spin_limit = check_spin_limit(
                spin_limit, "FlowsSession(spin_limit=...)"
            )
        self.test_id = test_id
        self.console = console
        self.allow_hosts = check_allow_hosts(allow_hosts, "FlowsSession(allow_hosts=...)")
        self.epoch = epoch
        self._events: list[TraceEvent] = []
        self._open_runs: list[list[TraceEvent]] = []  # the runs in flight (see _held)
        self._events_lock = internal_lock()
        self._stack = contextlib.ExitStack()
        self._active: dict[str, Adapter] = {}
        self._bindings: dict[str, Any] = {}
        self._open = False

    # -- lifecycle -----------------------------------------------------------
    def open(self) -> FlowsSession:
        try:
            self._enter()
        except BaseException:
            # Half-open is worse than closed: a frozen clock or a scheduler left
            # behind would leak into every later test.
            self.close()
            raise
        return self

    def _enter(self) -> None:
        stack = self._stack
        # Fewer cyclic collections while the test runs (collector.py: when a garbage
        # cycle is found changes, nothing else).
        _collector.open_session()
        stack.callback(_collector.close_session)
        # Every loop made during the test is deterministic, including the one
        # pytest-asyncio makes from the policy it saw first.
        stack.enter_context(deterministic_loops())
        stack.enter_context(_loop.activate(self.scheduler))
        stack.enter_context(threads_inherit_context())  # helper threads see the trace capture
        stack.enter_context(seeded_uuids(f"{self.test_id}:{self.scheduler.seed}"))
        stack.enter_context(frozen_wall_clock(self.scheduler.clock, self.epoch))
        stack.enter_context(network_guard(loopback_only(self.allow_hosts)))
        self._open = True
        for spec in adapter_specs():
            self.ensure(spec.framework)

    def close(self) -> None:
        self._open = False
        self._stack.close()

    def __enter__(self) -> FlowsSession:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ensure(self, framework: str) -> Adapter | None:
        """The adapter of ``framework``, activated in this test, if the framework is imported."""
        adapter = self._active.get(framework)
        if adapter is not None:
            return adapter
        adapter = load_adapter(spec_of(framework))
        if adapter is not None and self._open:
            self._stack.enter_context(adapter.activate(self))
            self._active[framework] = adapter
            for kind, fake in self._bindings.items():
                self._bind_one(adapter, kind, fake)
        return adapter

    # -- fakes ---------------------------------------------------------------------
    def bind(self, kind: str, fake: Any) -> None:
        """Install ``fake`` (a scripted LLM, crews, human, store...) in every adapter.

        Each adapter decides what ``kind`` means for its framework; adapters
        activated later in the test get the binding too. Undone at close.
        """
        if kind not in BIND_KINDS:
            raise FlowsUsageError(
                f"session.bind({kind!r}, ...): no such kind of fake; the kinds are "
                f"{', '.join(BIND_KINDS)}."
            )
        if kind in self._bindings:
            raise FlowsUsageError(f"a fake of kind {kind!r} is already bound in this test")
        self._bindings[kind] = fake
        for adapter in list(self._active.values()):
            self._bind_one(adapter, kind, fake)

    def bound(self, kind: str) -> Any:
        """The fake bound for ``kind`` in this test, or None."""
        return self._bindings.get(kind)

    def bound_fakes(self) -> list[Any]:
        """Every fake bound in this test, in the order they were bound."""
        return list(self._bindings.values())

    def _bind_one(self, adapter: Adapter, kind: str, fake: Any) -> None:
        context = bind_fake(adapter, self, kind, fake)
        if context is not None:
            self._stack.enter_context(context)

    # -- properties ------------------------------------------------------------
    @property
    def seed(self) -> int:
        return self.scheduler.seed

    @property
    def clock(self) -> _loop.VirtualClock:
        return self.scheduler.clock

    # -- trace -------------------------------------------------------------------
    def record(self, event: TraceEvent) -> None:
        """Append a raw (not yet normalized) event; adapters call this.

        The event goes to the test's trace and to every run of this session the
        calling context belongs to, so concurrent runs keep their own events.
        """
        with self._events_lock:
            self._events.append(event)
            for owner, events in _runs.get():
                if owner is self:
                    events.append(event)

    def _held(self, hold: Hold) -> None:
        """Virtual time waited for real work outside (real_work.py): one ``clock.held``
        line for a stretch of waits for the same work (a child's poll loop waits many
        times, as often as real time allows), with no real durations in it."""
        with self._events_lock:
            mine = [events for owner, events in _runs.get() if owner is self]
            events = mine[-1] if mine else self._open_runs[-1] if self._open_runs else self._events
            last = events[-1] if events else None
        # the work, not its state at the moment looked (running or sleeping: real time's)
        name = hold.what.split(" (")[0]
        same = last is not None and last.kind == "clock.held" and last.name == name
        if same and (not hold.gave_up or last.get("gave_up") is not None):  # type: ignore[union-attr]
            return
        fields = (("gave_up", "the grace ran out; the clock moved on"),) if hold.gave_up else ()
        event = TraceEvent(kind="clock.held", name=name, fields=fields)
        if any(owner is self for owner, _ in _runs.get()) or not self._open_runs:
            self.record(event)
            return
        # Held by the loop between task steps (its own context, no run's): the run
        # in flight gets it.
        with self._events_lock:
            self._events.append(event)
            self._open_runs[-1].append(event)

    def event_count(self) -> int:
        """Events recorded so far in the current run (or, outside any run, in the test)."""
        with self._events_lock:
            return len(self._own_events())

    def _own_events(self) -> list[TraceEvent]:
        mine = [events for owner, events in _runs.get() if owner is self]
        return mine[-1] if mine else self._events

    @property
    def trace(self) -> Trace:
        """The normalized trace of everything recorded in this test so far."""
        with self._events_lock:
            raw = list(self._events)
        return _normalized_trace(raw)

    def trace_slice(self, start: int = 0, stop: int | None = None) -> Trace:
        """The normalized trace of events ``start`` to ``stop`` as :meth:`event_count`
        counts them: the current run's, or outside any run the test's."""
        with self._events_lock:
            raw = self._own_events()[start:stop]
        return _normalized_trace(raw)

    # -- running -----------------------------------------------------------------
    def adapter_for(self, target: object) -> Adapter:
        specs = adapter_specs()
        for spec in specs:
            adapter = self.ensure(spec.framework)
            if adapter is not None and adapter.accepts(target):
                return adapter
        kinds = " or ".join(s.describe for s in specs)
        raise FlowsUsageError(
            f"flows.run() cannot run {target!r} (type {type(target).__qualname__}): it takes "
            f"{kinds}. Pass the flow class or an instance of it, e.g. flows.run(MyFlow, "
            "inputs={...})."
        )

    def _resume_human(
        self, human: ScriptedHuman, paused: Any, feedback: str, outcome: str | None
    ) -> FlowRun:
        """``human.resume(paused, feedback, outcome=...)``: the adapter of the paused
        run's flow (``paused`` is the paused ``FlowRun`` or the paused flow) resumes it."""
        target = paused.flow if isinstance(paused, FlowRun) else paused
        return self.adapter_for(target).resume_human(self, human, paused, feedback, outcome)

    async def arun(
        self,
        target: Any,
        *args: Any,
        raise_on_error: bool = True,
        budget: Any = None,
        schedule: str | None = None,
        **kwargs: Any,
    ) -> FlowRun:
        """Run ``target`` on the current loop if it is deterministic, else on one of ours."""
        self._require_open()
        _check_raise_on_error(raise_on_error, "arun")
        limits = enforced(merged_budget(self.budget, budget))
        adapter = self.adapter_for(target)
        with following_schedule(self, schedule) as chooser:
            running = asyncio.get_running_loop()
            if isinstance(running, _loop.DeterministicEventLoop) and running.deterministic:
                result = await self._run(adapter, target, args, kwargs)
            else:
                # A foreign loop (say, a custom pytest-asyncio loop factory): run on a
                # deterministic loop in a helper thread and await the result.
                ctx = contextvars.copy_context()
                with ThreadPoolExecutor(1, thread_name_prefix="pytest-flows-run") as pool:
                    future = pool.submit(ctx.run, self._run_blocking, adapter, target, args, kwargs)
                    result = await asyncio.wrap_future(future)
        return self._finish(within_budget(noted(result, chooser), limits), raise_on_error)

    def _require_open(self) -> None:
        if not self._open:
            raise FlowsUsageError(
                "this flows harness is closed: flows.run()/arun() work only during the test "
                "that requested the `flows` fixture."
            )

    def run(
        self,
        target: Any,
        *args: Any,
        raise_on_error: bool = True,
        budget: Any = None,
        schedule: str | None = None,
        **kwargs: Any,
    ) -> FlowRun:
        """Run ``target`` to completion on a fresh deterministic loop.

        ``budget`` caps what the run may use (see :mod:`pytest_flows._internal.fakes.usage`);
        ``schedule`` replays one schedule ``explore()`` reported (see
        :mod:`pytest_flows._internal.runtime.schedule`).
        """
        self._require_open()
        _check_raise_on_error(raise_on_error, "run")
        limits = enforced(merged_budget(self.budget, budget))
        adapter = self.adapter_for(target)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            in_async_test = False
        else:
            in_async_test = True
        # Outside the except block: errors the flow raises must not carry
        # "RuntimeError: no running event loop" as their context.
        with following_schedule(self, schedule, (target, args, kwargs)) as chooser:
            if not in_async_test:
                result = self._run_blocking(adapter, target, args, kwargs)
            else:
                # Called from an async test: keep the test's loop untouched.
                ctx = contextvars.copy_context()
                with ThreadPoolExecutor(1, thread_name_prefix="pytest-flows-run") as pool:
                    result = pool.submit(
                        ctx.run, self._run_blocking, adapter, target, args, kwargs
                    ).result()
        return self._finish(within_budget(noted(result, chooser), limits), raise_on_error)

    def replay(
        self, record: Any, target: Any = None, *, schedules: int = 160, seeds: int = 8
    ) -> Any:
        """Replay a flight record (``pytest_flows.recorder``) with ``target``, the flow or
        workflow class it was made from (Agent Framework: the workflow, or the function
        that builds it): every LLM call, tool, crew and human answer from the record; the
        recorded order searched among ``schedules`` schedules, then ``seeds`` seeds.
        Returns a ``ReplayResult``: ``.run`` (the ``FlowRun``), ``.divergences``,
        ``.report()``, ``.check()``, ``.interleaving``, ``.schedule``. See docs/recorder.md."""
        from pytest_flows._internal.flight.replay import replay

        self._require_open()
        return replay(self, record, target, schedules=schedules, seeds=seeds)

    def _run_blocking(
        self, adapter: Adapter, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        result: FlowRun = _loop.run(self._run(adapter, target, args, kwargs), self.scheduler)
        return result

    async def _run(
        self, adapter: Adapter, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        # The run's own collector lives in this context, which asyncio copies into
        # the run's tasks and to_thread workers: two runs gathered side by side,
        # or one in a helper thread, each collect exactly their own events.
        events: list[TraceEvent] = []
        token = _runs.set((*_runs.get(), (self, events)))
        self._open_runs.append(events)
        try:
            with collecting(self.clock) as usage:
                result = await adapter.run(self, target, args, kwargs)
        finally:
            self._open_runs = [e for e in self._open_runs if e is not events]
            _runs.reset(token)
        result.usage = usage.finish()
        with self._events_lock:
            raw = list(events)
        result.trace, result.extras["normalizer"] = _normalized(raw)
        return result

    def _finish(self, result: FlowRun, raise_on_error: bool) -> FlowRun:
        error = result.error
        if error is not None and raise_on_error:
            if not getattr(error, "__flows_trace__", None):
                error.__flows_trace__ = result.trace  # type: ignore[attr-defined]
                error.add_note(
                    "pytest-flows: the flow raised this error; trace of the run so far:\n"
                    + _indent(result.trace.render())
                    + "(pass raise_on_error=False to flows.run() to get the failed FlowRun)"
                )
            raise error
        return result


def _call(method: weakref.WeakMethod[Any], *args: Any) -> None:
    bound = method()
    if bound is not None:
        bound(*args)


def _check_raise_on_error(value: object, method: str) -> None:
    if not isinstance(value, bool):
        raise FlowsUsageError(
            f"flows.{method}(..., raise_on_error={value!r}): raise_on_error is True (the "
            "default: the flow's error is raised) or False (get the failed FlowRun back, "
            "with .error set)."
        )


#: The runs the current context is part of, innermost last (a flow may call
#: flows.run itself): each with the session it belongs to and its events.
_runs: contextvars.ContextVar[tuple[tuple[FlowsSession, list[TraceEvent]], ...]] = (
    contextvars.ContextVar("pytest_flows_runs", default=())
)


def _normalized_trace(raw: list[TraceEvent]) -> Trace:
    return _normalized(raw)[0]


def _normalized(raw: list[TraceEvent]) -> tuple[Trace, Normalizer]:
    """The trace of ``raw`` events, and the normalizer that numbered its ids (a run's
    other values are normalized on with it, so they name the trace's placeholders)."""
    normalizer = Normalizer()
    events = []
    for e in raw:
        name = normalizer.text(e.name)
        fields = tuple((k, normalizer.text(v)) for k, v in e.fields)
        if name == e.name and fields == e.fields and e.model_fields_set >= _ALL_SET:
            # Most events hold no id or timestamp: the frozen event is its own normal
            # form, and validating an equal copy was most of a run's trace cost.
            events.append(e)
        else:
            nested = {"depth": e.depth} if e.depth else {}
            events.append(TraceEvent(kind=e.kind, name=name, fields=fields, **nested))
    return Trace.of(events), normalizer


#: A copy sets these fields; an event is reused only if it did too (model_dump(exclude_unset)).
#: (``depth`` is set only on nested events, so the text of the others keeps its shape.)
_ALL_SET = frozenset(TraceEvent.model_fields) - {"depth"}


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def session_of(request: Any) -> FlowsSession:
    """The open session of the test ``request`` belongs to (for fixtures)."""
    session = request.node.stash.get(SESSION_KEY, None)
    if session is None:
        raise FlowsUsageError(
            f"{request.node.nodeid}: no pytest-flows harness is open for this test; "
            "request the `flows` fixture or mark the test with @pytest.mark.flows."
        )
    return session  # type: ignore[no-any-return]
