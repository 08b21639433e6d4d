"""Every reach into Agent Framework's private internals, in one place.

Agent Framework runs the deliveries of one superstep concurrently
(``gather_cancelling_siblings_on_error`` across sources, across a source's edge
runners and across a fan-out's targets) and leaves their order to the event
loop; it offers no public hook to observe which edge a message took or what a
superstep committed. These narrow patches

* start the concurrent deliveries in the order the test's seed picks (seed 0
  keeps the runtime's own order) - :func:`ordered_deliveries`;
* observe one workflow instance while it runs (deliveries along edges, sent
  messages, events, state writes and commits, checkpoints, restores and
  responses) without changing what it decides - :func:`observe`.

:func:`check_patch_points` fails loudly if an agent_framework upgrade moves any
of them; the test suite calls it.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from typing import Any, Protocol

from agent_framework import BaseChatClient, FunctionInvocationLayer
from agent_framework._middleware import ChatMiddlewareLayer
from agent_framework._workflows import _edge_runner, _runner, _runner_context, _state, _workflow
from agent_framework._workflows._checkpoint_encoding import (
    decode_checkpoint_value,
    encode_checkpoint_value,
)
from agent_framework._workflows._const import INTERNAL_SOURCE_PREFIX

__all__ = [
    "WorkflowObserver",
    "check_patch_points",
    "current_invocation",
    "decode_checkpoint_value",
    "encode_checkpoint_value",
    "observe",
    "ordered_deliveries",
    "reserved_state_key",
]

Order = Callable[[list[Any]], list[Any]]

_original_gather: Callable[..., Coroutine[Any, Any, None]] = (
    _edge_runner.gather_cancelling_siblings_on_error
)
#: The modules whose concurrent deliveries the seed orders (and only those:
#: responses and sub-workflow outputs keep the runtime's order).
_GATHER_MODULES = (_runner, _edge_runner)
_GATHER = "gather_cancelling_siblings_on_error"


@contextlib.contextmanager
def ordered_deliveries(order: Order) -> Iterator[None]:
    """Start each superstep's concurrent deliveries in ``order(coroutines)``'s order.

    ``order`` receives the coroutines in the order the runtime created them and
    returns them in the order their tasks are to start.
    """

    async def gather_in_seeded_order(*coroutines: Coroutine[Any, Any, Any]) -> None:
        await _original_gather(*order(list(coroutines)))

    previous = [getattr(module, _GATHER) for module in _GATHER_MODULES]
    for module in _GATHER_MODULES:
        setattr(module, _GATHER, gather_in_seeded_order)
    try:
        yield
    finally:
        for module, saved in zip(_GATHER_MODULES, previous, strict=True):
            setattr(module, _GATHER, saved)


# -- reading a workflow's runtime -------------------------------------------------------


def built_storage(workflow: Any) -> Any:
    """The checkpoint storage the workflow was built with (or None)."""
    return workflow._runner_context._checkpoint_storage


def allowed_types_of(storage: Any) -> frozenset[str]:
    """A ``FileCheckpointStorage``'s ``allowed_checkpoint_types``."""
    return frozenset(getattr(storage, "_allowed_types", frozenset()))


def has_checkpointing(workflow: Any) -> bool:
    return bool(workflow._runner.context.has_checkpointing())


async def pending_request_events(workflow: Any) -> dict[str, Any]:
    """The ``request_info`` events the workflow waits on, in the order they were raised."""
    events: dict[str, Any] = await workflow._runner.context.get_pending_request_info_events()
    return events


def committed_state(workflow: Any) -> dict[str, Any]:
    """A copy of the workflow's committed shared state (reserved keys included)."""
    state: dict[str, Any] = workflow._runner.state.export_state()
    return state


# -- observing one workflow instance ------------------------------------------------

#: The delivery (a token from :meth:`WorkflowObserver.delivering`) the running
#: task is executing, so writes and sends can be attributed to it.
_current: contextvars.ContextVar[Any] = contextvars.ContextVar("pytest_flows_af_delivery")


def current_invocation() -> Any:
    """The token of the delivery the calling task runs inside, or None."""
    return _current.get(None)


def reserved_state_key(key: str) -> bool:
    """Whether a shared-state key is the framework's own (executor state, kwargs...)."""
    return key.startswith("_")


class WorkflowObserver(Protocol):
    """Told what one workflow instance does, synchronously, as it happens."""

    def runner_event(self, event: Any) -> None: ...
    def runner_ended(self, error: BaseException | None) -> None: ...
    def delivering(self, target: str, sources: list[str], message: Any, edge_group: str) -> Any: ...
    def delivered(self, token: Any, error: BaseException | None, cancelled: bool) -> None: ...
    def sent(self, message: Any) -> None: ...
    def event(self, event: Any) -> None: ...
    def state_set(self, key: str, value: Any) -> None: ...
    def state_deleted(self, key: str) -> None: ...
    def state_committing(self, pending: dict[str, Any], deleted: Sequence[str]) -> None: ...
    def checkpoint_saved(self, checkpoint_id: str, iteration: int, parent: str | None) -> None: ...
    def checkpoint_failed(self, iteration: int, error: BaseException) -> None: ...
    def restored(self, checkpoint_id: str, iteration: int) -> None: ...
    def responded(self, request_id: str, response: Any) -> None: ...


def is_response(message: Any) -> bool:
    """Whether a delivered message is an answer to a ``request_info``."""
    return bool(message.type == _runner_context.MessageType.RESPONSE)


def internal_source(source_id: str) -> bool:
    """Whether a message source is the workflow itself (its input or a response)."""
    return source_id.startswith(INTERNAL_SOURCE_PREFIX + ":")


@contextlib.contextmanager
def observe(workflow: Any, observer: WorkflowObserver) -> Iterator[None]:
    """Report what ``workflow`` does to ``observer`` until exit.

    Only instance attributes of this workflow's runner, runner context, state
    and edge runners are shadowed; executors (which ``@executor`` functions and
    module-level agents share between workflows) are never touched.
    """
    runner: Any = workflow._runner
    ctx: Any = runner.context
    state: Any = runner.state
    undo: list[Callable[[], None]] = []

    def shadow(obj: Any, name: str, replacement: Any) -> None:
        had = name in vars(obj)
        saved = vars(obj).get(name)
        setattr(obj, name, replacement)

        def restore() -> None:
            if had:
                setattr(obj, name, saved)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(obj, name)

        undo.append(restore)

    # -- supersteps: the runner's event stream, seen in order -------------------
    original_converge = runner.run_until_convergence

    async def run_until_convergence() -> AsyncIterator[Any]:
        events = original_converge()
        error: BaseException | None = None
        try:
            async for event in events:
                observer.runner_event(event)
                yield event
        except BaseException as exc:
            error = exc
            raise
        finally:
            await events.aclose()
            observer.runner_ended(error)

    shadow(runner, "run_until_convergence", run_until_convergence)

    original_restore = runner.restore_from_checkpoint

    async def restore_from_checkpoint(checkpoint_id: str, *args: Any, **kwargs: Any) -> None:
        await original_restore(checkpoint_id, *args, **kwargs)
        observer.restored(str(checkpoint_id), int(runner._iteration))

    shadow(runner, "restore_from_checkpoint", restore_from_checkpoint)

    # -- deliveries along edges -----------------------------------------------------
    for edge_runner in runner._edge_runners:
        shadow(edge_runner, "_execute_on_target", _delivery_hook(edge_runner, observer))

    # -- the runner context: sends, events, checkpoints, responses -------------------
    original_send = ctx.send_message

    async def send_message(message: Any) -> None:
        observer.sent(message)
        await original_send(message)

    shadow(ctx, "send_message", send_message)

    original_add_event = ctx.add_event

    async def add_event(event: Any) -> None:
        observer.event(event)
        await original_add_event(event)

    shadow(ctx, "add_event", add_event)

    original_create = ctx.create_checkpoint

    async def create_checkpoint(
        workflow_name: str,
        graph_signature_hash: str,
        state_: Any,
        previous_checkpoint_id: str | None,
        iteration_count: int,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        try:
            checkpoint_id = await original_create(
                workflow_name,
                graph_signature_hash,
                state_,
                previous_checkpoint_id,
                iteration_count,
                *args,
                **kwargs,
            )
        except Exception as exc:
            observer.checkpoint_failed(iteration_count, exc)
            raise
        observer.checkpoint_saved(str(checkpoint_id), iteration_count, previous_checkpoint_id)
        return checkpoint_id

    shadow(ctx, "create_checkpoint", create_checkpoint)

    original_respond = ctx.send_request_info_response

    async def send_request_info_response(request_id: str, response: Any) -> None:
        await original_respond(request_id, response)
        observer.responded(request_id, response)

    shadow(ctx, "send_request_info_response", send_request_info_response)

    # -- shared state ---------------------------------------------------------------
    original_set = state.set

    def state_set(key: str, value: Any) -> None:
        original_set(key, value)
        observer.state_set(key, value)

    shadow(state, "set", state_set)

    original_delete = state.delete

    def state_delete(key: str) -> None:
        original_delete(key)
        observer.state_deleted(key)

    shadow(state, "delete", state_delete)

    original_commit = state.commit

    def state_commit() -> None:
        pending: dict[str, Any] = state._pending
        sentinel = _state._DeleteSentinel
        written = {k: v for k, v in pending.items() if v is not sentinel}
        deleted = [k for k, v in pending.items() if v is sentinel]
        if written or deleted:
            observer.state_committing(written, deleted)
        original_commit()

    shadow(state, "commit", state_commit)

    try:
        yield
    finally:
        for restore in reversed(undo):
            restore()


def _delivery_hook(edge_runner: Any, observer: WorkflowObserver) -> Any:
    original = edge_runner._execute_on_target
    group = type(edge_runner._edge_group).__name__

    async def execute_on_target(
        target_id: str, source_ids: list[str], message: Any, *args: Any, **kwargs: Any
    ) -> None:
        token = observer.delivering(target_id, list(source_ids), message, group)
        reset = _current.set(token)
        try:
            await original(target_id, source_ids, message, *args, **kwargs)
        except BaseException as exc:
            import asyncio

            cancelled = isinstance(exc, asyncio.CancelledError)
            observer.delivered(token, None if cancelled else exc, cancelled)
            raise
        else:
            observer.delivered(token, None, False)
        finally:
            _current.reset(reset)

    return execute_on_target


# -- chat clients -------------------------------------------------------------------------

ChatRoute = Callable[[Any, Any, bool, Any], Any]


@contextlib.contextmanager
def routed_chat_clients(route: ChatRoute) -> Iterator[None]:
    """Send every chat client's model call to ``route(client, messages, stream, options)``.

    ``BaseChatClient.get_response`` is the step below the tool loop
    (``FunctionInvocationLayer``) and the chat middleware, which reach it with
    ``super().get_response``; it is where a provider's ``_inner_get_response``
    would be called. Tools still run for real.
    """

    def get_response(
        self: Any, messages: Any, *, stream: bool = False, options: Any = None, **kwargs: Any
    ) -> Any:
        return route(self, messages, stream, options)

    cls: Any = BaseChatClient
    previous = cls.__dict__["get_response"]
    cls.get_response = get_response
    try:
        yield
    finally:
        cls.get_response = previous


# -- upgrade guard ---------------------------------------------------------------------


def _supported_range() -> str:
    from importlib.metadata import version

    from pytest_flows.adapters import ADAPTERS

    spec = next(s for s in ADAPTERS if s.framework == "agent_framework")
    return f"{spec.supported} (installed: agent-framework-core {version('agent-framework-core')})"


def check_patch_points() -> None:
    """Raise AssertionError naming every private agent_framework seam that moved."""
    problems: list[str] = []

    def need(condition: bool, what: str) -> None:
        if not condition:
            problems.append(what)

    gather_params = list(inspect.signature(_original_gather).parameters)
    need(gather_params == ["coroutines"], f"gather_cancelling_siblings_on_error{gather_params}")
    need(
        "ensure_future(" in inspect.getsource(_original_gather),
        "gather_cancelling_siblings_on_error no longer starts tasks in argument order",
    )
    for module in _GATHER_MODULES:
        need(
            hasattr(module, _GATHER),
            f"{module.__name__}.gather_cancelling_siblings_on_error",
        )
    iteration = inspect.getsource(_runner.RunnerImpl._run_iteration)
    need(
        "await gather_cancelling_siblings_on_error(" in iteration
        and "drain_messages()" in iteration,
        "RunnerImpl._run_iteration no longer gathers deliveries per source",
    )
    fan_out = inspect.getsource(_edge_runner.FanOutEdgeRunner.send_message)
    need(
        "gather_cancelling_siblings_on_error(" in fan_out,
        "FanOutEdgeRunner.send_message no longer gathers its targets",
    )
    target_params = list(inspect.signature(_edge_runner.EdgeRunner._execute_on_target).parameters)
    need(
        target_params[:4] == ["self", "target_id", "source_ids", "message"],
        f"EdgeRunner._execute_on_target{target_params}",
    )
    for cls in _edge_runner.EdgeRunner.__subclasses__():
        need(
            "_execute_on_target" not in vars(cls),
            f"{cls.__name__} overrides _execute_on_target",
        )
    need(
        "_edge_group" in inspect.getsource(_edge_runner.EdgeRunner.__init__),
        "EdgeRunner._edge_group",
    )
    runner_init = inspect.getsource(_runner.RunnerImpl.__init__)
    need("self._edge_runners = " in runner_init, "RunnerImpl._edge_runners")
    need("self._iteration = " in runner_init, "RunnerImpl._iteration")
    for name in ("run_until_convergence", "restore_from_checkpoint", "context", "state"):
        need(hasattr(_runner.RunnerImpl, name), f"RunnerImpl.{name}")
    converge = inspect.getsource(_runner.RunnerImpl.run_until_convergence)
    need(
        "superstep_started" in converge
        and "superstep_completed" in converge
        and converge.index("self._state.commit()")
        < converge.index("create_checkpoint_if_enabled()")
        < converge.index("superstep_completed("),
        "RunnerImpl.run_until_convergence: commit -> checkpoint -> superstep_completed",
    )
    need(
        "self._runner.run_until_convergence()" in inspect.getsource(_workflow.Workflow),
        "Workflow no longer drives self._runner.run_until_convergence()",
    )
    ctx_cls = _runner_context.InProcRunnerContext
    for name in (
        "send_message",
        "add_event",
        "create_checkpoint",
        "send_request_info_response",
        "add_request_info_event",
    ):
        need(callable(getattr(ctx_cls, name, None)), f"InProcRunnerContext.{name}")
    need(
        "self.add_event(" in inspect.getsource(ctx_cls.add_request_info_event),
        "InProcRunnerContext.add_request_info_event no longer goes through add_event",
    )
    create_params = list(inspect.signature(ctx_cls.create_checkpoint).parameters)
    need(
        create_params[:6]
        == [
            "self",
            "workflow_name",
            "graph_signature_hash",
            "state",
            "previous_checkpoint_id",
            "iteration_count",
        ],
        f"InProcRunnerContext.create_checkpoint{create_params}",
    )
    from agent_framework import FileCheckpointStorage, Workflow

    workflow_init = inspect.getsource(Workflow.__init__)
    need("self._runner_context = " in workflow_init, "Workflow._runner_context")
    need("self._runner: RunnerImpl = " in workflow_init, "Workflow._runner")
    need(
        "self._checkpoint_storage = " in inspect.getsource(ctx_cls.__init__),
        "InProcRunnerContext._checkpoint_storage",
    )
    need(
        "self._allowed_types" in inspect.getsource(FileCheckpointStorage.__init__),
        "FileCheckpointStorage._allowed_types",
    )
    file_save = inspect.getsource(FileCheckpointStorage.save)
    need(
        "encode_checkpoint_value(" in file_save
        and "decode_checkpoint_value(encoded_checkpoint, allowed_types=self._allowed_types)"
        in file_save,
        "FileCheckpointStorage.save no longer encodes and restrict-decodes (the codec "
        "FlowsCheckpointStorage mirrors)",
    )
    for name in ("get_pending_request_info_events", "has_checkpointing"):
        need(callable(getattr(ctx_cls, name, None)), f"InProcRunnerContext.{name}")
    state_cls = _state.State
    need(hasattr(_state, "_DeleteSentinel"), "agent_framework._workflows._state._DeleteSentinel")
    need("self._pending" in inspect.getsource(state_cls.commit), "State._pending")
    for name in ("set", "delete", "commit"):
        need(callable(getattr(state_cls, name, None)), f"State.{name}")
    base_get = inspect.getsource(BaseChatClient.get_response)
    need(
        "self._inner_get_response(" in base_get,
        "BaseChatClient.get_response no longer calls _inner_get_response",
    )
    for layer in (FunctionInvocationLayer, ChatMiddlewareLayer):
        need(
            "super().get_response" in inspect.getsource(layer),
            f"{layer.__name__} no longer reaches the client through super().get_response",
        )
    get_params = list(inspect.signature(BaseChatClient.get_response).parameters)
    need(
        get_params[:4] == ["self", "messages", "stream", "options"],
        f"BaseChatClient.get_response{get_params}",
    )
    if problems:
        raise AssertionError(
            "pytest-flows' agent_framework patch points moved (agent-framework-core upgrade?): "
            + "; ".join(problems)
            + f". pytest-flows supports {_supported_range()}."
        )
    from pytest_flows.agent_framework.tools import check_tool_seams  # tools imports this module

    check_tool_seams()
