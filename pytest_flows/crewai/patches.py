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
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

from crewai.events.event_bus import crewai_event_bus
from crewai.flow.runtime import Flow

from pytest_flows.crewai.state_access import observed
from pytest_flows.threads import switch_point

__all__ = [
    "InlineExecutor",
    "check_patch_points",
    "inline_event_bus",
    "ordered_races",
    "render_condition",
    "state_switch_points",
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
def _replaced(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name = value`` for the block; the original comes back however it exits."""
    original = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


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

    with _replaced(Flow, "state", property(state, _original_state.fset, _original_state.fdel)):
        yield


def start_event_bus() -> None:
    bus: Any = crewai_event_bus
    bus._ensure_executor_initialized()


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

    with _replaced(Flow, "_execute_racing_listeners", racing):
        yield


def render_condition(condition: Any) -> str:
    """``and(a, or(b, c))`` for crewai's condition trees (str or {"and"/"or": [...]})."""
    if isinstance(condition, str):
        return condition
    if isinstance(condition, dict):
        for op in ("and", "or"):
            if op in condition:
                return f"{op}({', '.join(render_condition(c) for c in condition[op])})"
    return repr(condition)


def start_condition(flow: Any, method: str) -> Any:
    """The router labels a conditional ``@start("label")`` waits for, or None."""
    definition = flow._definition.methods.get(method)
    start = None if definition is None else definition.start
    return start if isinstance(start, str | dict) else None


def listen_condition(flow: Any, method: str) -> Any:
    """The condition ``method`` listens on, or None for a plain start method."""
    definition = flow._definition.methods.get(method)
    return None if definition is None else definition.listen


def is_router(flow: Any, method: str) -> bool:
    definition = flow._definition.methods.get(method)
    return bool(definition is not None and definition.router)


def _supported_range() -> str:
    from importlib.metadata import version

    from pytest_flows.adapters import ADAPTERS

    spec = next(s for s in ADAPTERS if s.framework == "crewai")
    return f"{spec.supported} (installed: crewai {version('crewai')})"


def check_patch_points() -> None:
    """Raise AssertionError naming every private crewai seam of the harness that moved.

    Covers the foundation's seams here and calls the fakes', humans' and
    store's own checks, so one call vets every patch pytest-flows makes.
    """
    bus: Any = crewai_event_bus
    problems = []
    for attr in ("_ensure_executor_initialized", "reset_runtime_state"):
        if not callable(getattr(bus, attr, None)):
            problems.append(f"crewai_event_bus.{attr}() is gone")
    params = list(inspect.signature(_original_racing).parameters)
    expected = ["self", "racing_listeners", "other_listeners", "result", "triggering_event_id"]
    if params[:5] != expected:
        problems.append(f"Flow._execute_racing_listeners signature is now {params}")
    source = inspect.getsource(_original_racing)
    if "self._execute_single_listener(" not in source or "as_completed" not in source:
        problems.append("Flow._execute_racing_listeners no longer races via as_completed")
    from crewai.flow.flow_definition import FlowDefinition, FlowMethodDefinition

    missing = {"start", "listen", "router"} - set(FlowMethodDefinition.model_fields)
    if missing or "methods" not in FlowDefinition.model_fields:
        problems.append("FlowDefinition.methods[...].start/listen/router moved")
    if "_definition" not in inspect.getsource(Flow._listener_methods):
        problems.append("Flow no longer keeps its graph in self._definition")
    emit_source = inspect.getsource(type(bus).emit)
    if "self._sync_executor.submit(" not in emit_source:
        problems.append("CrewAIEventsBus.emit no longer submits sync handlers to _sync_executor")
    if not isinstance(_original_state, property) or _original_state.fget is None:
        problems.append("Flow.state is no longer a property")
    if problems:
        raise AssertionError(
            "pytest-flows' crewai patch points moved (crewai upgrade?): "
            + "; ".join(problems)
            + f". pytest-flows supports {_supported_range()}."
        )
    check_fake_patch_points()
    check_human_patch_points()
    check_store_patch_points()
    from pytest_flows.crewai.crews import check_crew_seams  # crews imports this module
    from pytest_flows.crewai.tools import check_tool_seams

    check_crew_seams()
    check_tool_seams()


def retry_after_seconds(error: BaseException) -> float | None:
    """crewai's reading of a ``Retry-After`` hint on a provider error."""
    from crewai.llms.retry import _retry_after_seconds

    value: float | None = _retry_after_seconds(error)
    return value


def check_fake_patch_points() -> None:
    """Raise AssertionError naming the first private seam of the fakes that moved."""
    import importlib

    import crewai.llms.retry as retry
    from crewai.llm import LLM

    from pytest_flows.crewai.callers import PURPOSE_FUNCTIONS

    problems = []
    if not callable(getattr(retry, "_retry_after_seconds", None)):
        problems.append("crewai.llms.retry._retry_after_seconds")
    if "__new__" not in LLM.__dict__:
        problems.append("crewai.llm.LLM.__new__ (the LLM routing point)")
    # crewai.flow re-exports the human_feedback decorator under the module's name.
    owners = (
        Flow,
        importlib.import_module("crewai.flow.conversational_mixin")._ConversationalMixin,
        importlib.import_module("crewai.flow.human_feedback"),
    )
    for name in PURPOSE_FUNCTIONS:
        if not any(hasattr(owner, name) for owner in owners):
            problems.append(f"{name} (an LLM-call purpose the fake recognises)")
    if problems:
        raise AssertionError(
            "pytest-flows' crewai fake seams moved (crewai upgrade?): " + "; ".join(problems)
        )


_agent_step: Any = None  # ContextVar, created on first use


def _agent_step_var() -> Any:
    global _agent_step
    if _agent_step is None:
        import contextvars

        _agent_step = contextvars.ContextVar("pytest_flows_agent_step", default=False)
    return _agent_step


def in_agent_step() -> bool:
    """Whether the running code is inside a declarative ``call: agent`` step."""
    return bool(_agent_step_var().get())


@contextlib.contextmanager
def outside_agent_step() -> Iterator[None]:
    token = _agent_step_var().set(False)
    try:
        yield
    finally:
        _agent_step_var().reset(token)


@contextlib.contextmanager
def marking_agent_steps() -> Iterator[None]:
    """Mark the run of every declarative ``call: agent`` step (``AgentAction.run``).

    The step builds its agent and awaits ``agent.kickoff_async`` in the same
    task, so a ContextVar set here tells that kickoff apart from any other.
    ``run`` must stay a coroutine function: flows built from a declaration
    checked that when they were built.
    """
    from crewai.flow.runtime._actions import AgentAction

    original = AgentAction.__dict__["run"]

    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = _agent_step_var().set(True)
        try:
            return await original(self, *args, **kwargs)
        finally:
            _agent_step_var().reset(token)

    with _replaced(AgentAction, "run", run):
        yield


# -- human-in-the-loop seams (pytest_flows.crewai.human) -----------------------------


@contextlib.contextmanager
def feedback_provider(provider: Any) -> Iterator[None]:
    """``@human_feedback`` steps that have a provider (decorator or ``flow_config``)
    get ``provider`` instead; steps without one keep crewai's console path."""
    original = Flow.__dict__["_resolve_feedback_provider"]

    def resolve(self: Any, feedback_definition: Any) -> Any:
        found = original(self, feedback_definition)
        return None if found is None else provider

    with _replaced(Flow, "_resolve_feedback_provider", resolve):
        yield


@contextlib.contextmanager
def input_provider(provider: Any) -> Iterator[None]:
    """Every ``Flow.ask()`` asks ``provider`` (over per-flow and global providers)."""
    with _replaced(Flow, "_resolve_input_provider", lambda self: provider):
        yield


ConsoleAnswer = Callable[[Any, dict[str, Any]], str]


@contextlib.contextmanager
def console_feedback(answer: ConsoleAnswer) -> Iterator[None]:
    """Answer the console path's ``input("Your feedback: ")`` with ``answer``.

    crewai's runtime module reads ``input`` from its globals, so a module-level
    ``input`` there shadows the builtin for that module only.
    ``answer(flow, request)`` gets what ``_request_human_feedback`` was asked
    (``message``, ``output``, ``metadata``, ``emit``, ``method_name``).
    """
    import builtins

    import crewai.flow.runtime as runtime

    def scripted_input(prompt: object = "") -> str:
        frame = sys._getframe(1)
        if frame.f_code.co_name != "_request_human_feedback":
            return builtins.input(prompt)
        local = frame.f_locals
        asked = {key: local.get(key) for key in ("message", "output", "metadata", "emit")}
        asked["method_name"] = local.get("method_name", "")
        return answer(local.get("self"), asked)

    had = "input" in runtime.__dict__
    previous = runtime.__dict__.get("input")
    runtime.input = scripted_input  # type: ignore[attr-defined]
    try:
        yield
    finally:
        if had:
            runtime.input = previous  # type: ignore[attr-defined]
        else:
            del runtime.input  # type: ignore[attr-defined]


@contextlib.contextmanager
def explicit_outcomes(lookup: Callable[[Any, str, Any], str | None]) -> Iterator[None]:
    """``lookup(flow, feedback, outcomes)`` may decide the outcome of a feedback,
    skipping the LLM that would classify it (``None``: classify as usual)."""
    original = Flow.__dict__["_collapse_to_outcome"]

    def collapse(self: Any, feedback: str, outcomes: Any, llm: Any) -> str:
        decided = lookup(self, feedback, outcomes)
        if decided is not None:
            return decided
        result: str = original(self, feedback, outcomes, llm)
        return result

    with _replaced(Flow, "_collapse_to_outcome", collapse):
        yield


def pending_context(flow: Any, method_name: str, output: Any) -> Any:
    """The ``PendingFeedbackContext`` crewai's provider path builds for a paused step."""
    from crewai.execution import get_execution_uuid
    from crewai.flow.async_feedback.types import PendingFeedbackContext
    from crewai.flow.human_feedback import _serialize_llm_for_context

    definition = flow._definition.methods[method_name].human_feedback
    llm = definition.llm
    return PendingFeedbackContext(
        flow_id=flow.flow_id or "unknown",
        flow_class=f"{type(flow).__module__}.{type(flow).__name__}",
        method_name=method_name,
        method_output=output,
        message=definition.message,
        emit=list(definition.emit) if definition.emit else None,
        default_outcome=definition.default_outcome,
        metadata=definition.metadata or {},
        llm=llm if llm is None or isinstance(llm, str | dict) else _serialize_llm_for_context(llm),
        execution_uuid=get_execution_uuid(),
    )


@contextlib.contextmanager
def fallback_persistence(factory: Callable[[], Any]) -> Iterator[bool]:
    """Make ``factory`` crewai's default flow persistence if no one registered one.

    Yields whether it did: a store someone else registered (the ``flow_store``
    fixture, the application) is left alone.
    """
    import crewai.flow.persistence.factory as persistence_factory

    if persistence_factory._factory is not None:
        yield False
        return
    persistence_factory.set_flow_persistence_factory(factory)
    try:
        yield True
    finally:
        if persistence_factory._factory is factory:
            persistence_factory.set_flow_persistence_factory(None)


def check_human_patch_points() -> None:
    """Raise AssertionError naming the first private seam of the human fake that moved."""
    import crewai.flow.persistence.factory as persistence_factory

    problems = []
    expected = {
        "_resolve_feedback_provider": ["self", "feedback_definition"],
        "_resolve_input_provider": ["self"],
        "_collapse_to_outcome": ["self", "feedback", "outcomes", "llm"],
        "_request_human_feedback": ["self", "message", "output", "metadata", "emit", "method_name"],
    }
    for name, params in expected.items():
        method = Flow.__dict__.get(name)
        if method is None:
            problems.append(f"Flow.{name} is gone")
            continue
        found = list(inspect.signature(method).parameters)
        if found[: len(params)] != params:
            problems.append(f"Flow.{name} signature is now {found}")
    if "input(" not in inspect.getsource(Flow.__dict__["_request_human_feedback"]):
        problems.append("Flow._request_human_feedback no longer reads input()")
    if not hasattr(persistence_factory, "_factory"):
        problems.append("crewai.flow.persistence.factory._factory")
    from crewai.flow.runtime._actions import AgentAction

    if not inspect.iscoroutinefunction(AgentAction.__dict__.get("run")):
        problems.append("AgentAction.run is no longer a coroutine function")
    if "kickoff_async(" not in inspect.getsource(AgentAction.__dict__["run"]):
        problems.append("AgentAction.run no longer calls agent.kickoff_async")
    if problems:
        raise AssertionError(
            "pytest-flows' crewai human/agent-step seams moved (crewai upgrade?): "
            + "; ".join(problems)
        )


# -- seams flow_store uses (pytest_flows.crewai.persistence / checkpoints) --------------


def sqlite_codec() -> tuple[Callable[[Any], dict[str, Any]], Callable[[Any], Any]]:
    """``SQLiteFlowPersistence``'s own encoding: (state -> dict, ``json.dumps`` default)."""
    from crewai.flow.persistence import sqlite

    to_state_dict: Callable[[Any], dict[str, Any]] = sqlite.SQLiteFlowPersistence._to_state_dict
    json_default: Callable[[Any], Any] = sqlite._json_default
    return to_state_dict, json_default


def json_checkpoint_location(directory: str, branch: str, parent_id: str | None) -> str:
    """Where ``JsonProvider.checkpoint`` would write (validates the branch like it does)."""
    from crewai.state.provider.json_provider import _build_path

    return str(_build_path(directory, branch, parent_id))


def sqlite_checkpoint_id() -> str:
    """The id ``SqliteProvider.checkpoint`` would give a new checkpoint."""
    from crewai.state.provider.sqlite_provider import _make_id

    checkpoint_id: str = _make_id()[0]
    return checkpoint_id


_KICKOFF_CODE: Any = Flow.kickoff_async.__code__


def restore_intent(flow_uuid: str) -> str:
    """Why ``load_state(flow_uuid)`` is being called: ``resume``, ``fork`` or ``load``.

    crewai loads a persisted state for two reasons inside ``kickoff_async``:
    ``inputs["id"]`` (resume; the local ``restore_uuid`` is set right before)
    and ``restore_from_state_id`` (fork). Anything else is a plain ``load``.
    """
    frame = sys._getframe(1)
    for _ in range(8):
        if frame is None:
            break
        if frame.f_code is _KICKOFF_CODE:
            local = frame.f_locals
            if "restore_uuid" in local:
                return "resume"
            if local.get("restore_from_state_id") == flow_uuid:
                return "fork"
            return "load"
        frame = frame.f_back  # type: ignore[assignment]
    return "load"


def is_resuming(flow: Any) -> bool:
    """Whether ``flow`` is replaying completed methods (checkpoint or feedback resume)."""
    return bool(getattr(flow, "_is_execution_resuming", False))


_PROVIDER_METHODS = ("checkpoint", "acheckpoint", "from_checkpoint", "afrom_checkpoint", "prune")


@contextlib.contextmanager
def routed_checkpoints(router: Any) -> Iterator[None]:
    """Send every ``JsonProvider``/``SqliteProvider`` read and write to ``router``.

    ``router.write(kind, data, location, parent_id, branch) -> location``,
    ``router.read(location) -> str | None`` (None: not the store's),
    ``router.prune(location, max_keep, branch) -> int``,
    ``router.missing(location)`` (raises unless a real checkpoint is there) and
    ``router.kind_of(location) -> "json" | "sqlite" | None``. ``detect_provider``
    (used by every restore) answers from the router for the store's locations.
    """
    import crewai.state.provider.utils as provider_utils
    from crewai.state.provider.json_provider import JsonProvider
    from crewai.state.provider.sqlite_provider import SqliteProvider

    stack = contextlib.ExitStack()

    def swap(owner: Any, name: str, value: Any) -> None:
        stack.enter_context(_replaced(owner, name, value))

    for cls, kind in ((JsonProvider, "json"), (SqliteProvider, "sqlite")):
        original_read = cls.__dict__["from_checkpoint"]
        original_aread = cls.__dict__["afrom_checkpoint"]

        def checkpoint(
            self: Any,
            data: str,
            location: str,
            *,
            parent_id: str | None = None,
            branch: str = "main",
            _kind: str = kind,
        ) -> str:
            written: str = router.write(_kind, data, location, parent_id, branch)
            return written

        async def acheckpoint(
            self: Any,
            data: str,
            location: str,
            *,
            parent_id: str | None = None,
            branch: str = "main",
            _kind: str = kind,
        ) -> str:
            written: str = router.write(_kind, data, location, parent_id, branch)
            return written

        def from_checkpoint(self: Any, location: str, _original: Any = original_read) -> str:
            raw: str | None = router.read(location)
            if raw is None:
                router.missing(location)  # raises unless a real checkpoint is there
                raw = _original(self, location)
            return raw

        async def afrom_checkpoint(
            self: Any, location: str, _original: Any = original_aread
        ) -> str:
            raw: str | None = router.read(location)
            if raw is None:
                router.missing(location)
                raw = await _original(self, location)
            return raw

        def prune(self: Any, location: str, max_keep: int, *, branch: str = "main") -> int:
            removed: int = router.prune(location, max_keep, branch)
            return removed

        for name, value in zip(
            _PROVIDER_METHODS,
            (checkpoint, acheckpoint, from_checkpoint, afrom_checkpoint, prune),
            strict=True,
        ):
            swap(cls, name, value)

    original_detect = provider_utils.detect_provider

    def detect_provider(path: str) -> Any:
        kind = router.kind_of(str(path))
        if kind == "json":
            return JsonProvider()
        if kind == "sqlite":
            return SqliteProvider()
        return original_detect(path)

    swap(provider_utils, "detect_provider", detect_provider)
    with stack:
        yield


_SQLITE_METHODS = (
    "init_db",
    "save_state",
    "load_state",
    "save_pending_feedback",
    "load_pending_feedback",
    "clear_pending_feedback",
)


@contextlib.contextmanager
def routed_sqlite_persistence(target: Any) -> Iterator[None]:
    """Make explicit ``SQLiteFlowPersistence(...)`` instances read and write ``target``.

    ``@persist(SQLiteFlowPersistence("flows.db"))`` binds a real database file at
    import time; during a ``flow_store`` test its calls go to the store instead.
    """
    from crewai.flow.persistence.sqlite import SQLiteFlowPersistence

    def init_db(self: Any) -> None:
        return None

    def delegate(name: str) -> Callable[..., Any]:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(target, name)(*args, **kwargs)

        method.__name__ = name
        return method

    with contextlib.ExitStack() as stack:
        stack.enter_context(_replaced(SQLiteFlowPersistence, "init_db", init_db))
        for name in _SQLITE_METHODS[1:]:
            stack.enter_context(_replaced(SQLiteFlowPersistence, name, delegate(name)))
        yield


def check_store_patch_points() -> None:
    """Raise AssertionError naming the first private seam of flow_store that moved."""
    from crewai.flow.persistence import sqlite
    from crewai.flow.persistence.factory import set_flow_persistence_factory
    from crewai.state.provider import json_provider, sqlite_provider, utils
    from crewai.state.provider.json_provider import JsonProvider
    from crewai.state.provider.sqlite_provider import SqliteProvider

    problems = []
    if not callable(getattr(sqlite.SQLiteFlowPersistence, "_to_state_dict", None)):
        problems.append("SQLiteFlowPersistence._to_state_dict")
    if not callable(getattr(sqlite, "_json_default", None)):
        problems.append("crewai.flow.persistence.sqlite._json_default")
    save_source = inspect.getsource(sqlite.SQLiteFlowPersistence._save_state_sql)
    if "json.dumps(state_dict, default=_json_default)" not in save_source:
        problems.append(
            "SQLiteFlowPersistence no longer encodes with json.dumps(default=_json_default)"
        )
    for name in _SQLITE_METHODS:
        if name not in sqlite.SQLiteFlowPersistence.__dict__:
            problems.append(f"SQLiteFlowPersistence.{name}")
    if not callable(getattr(json_provider, "_build_path", None)):
        problems.append("crewai.state.provider.json_provider._build_path")
    if not callable(getattr(sqlite_provider, "_make_id", None)):
        problems.append("crewai.state.provider.sqlite_provider._make_id")
    for cls in (JsonProvider, SqliteProvider):
        for name in _PROVIDER_METHODS:
            if name not in cls.__dict__:
                problems.append(f"{cls.__name__}.{name}")
    if not callable(getattr(utils, "detect_provider", None)):
        problems.append("crewai.state.provider.utils.detect_provider")
    from crewai.state import runtime

    if "from crewai.state.provider.utils import detect_provider" not in inspect.getsource(
        runtime.RuntimeState.from_checkpoint
    ):
        problems.append("RuntimeState.from_checkpoint no longer resolves detect_provider per call")
    if "_is_execution_resuming" not in getattr(Flow, "__private_attributes__", {}):
        problems.append("Flow._is_execution_resuming")
    names = _KICKOFF_CODE.co_varnames
    if "restore_uuid" not in names or "restore_from_state_id" not in names:
        problems.append("Flow.kickoff_async locals restore_uuid / restore_from_state_id")
    if not callable(set_flow_persistence_factory):
        problems.append("crewai.flow.persistence.factory.set_flow_persistence_factory")
    if problems:
        raise AssertionError(
            "pytest-flows' flow_store crewai seams moved (crewai upgrade?): " + "; ".join(problems)
        )
