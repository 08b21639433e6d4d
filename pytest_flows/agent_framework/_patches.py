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

Every seam they rely on is declared in :mod:`pytest_flows.agent_framework._seams`,
whose :func:`check_patch_points` fails loudly if an upgrade moves one; the test
suite calls it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from typing import Any, Protocol

from agent_framework import WorkflowExecutor
from agent_framework._workflows import _edge_runner, _runner_context, _state
from agent_framework._workflows._checkpoint_encoding import (
    decode_checkpoint_value,
    encode_checkpoint_value,
)
from agent_framework._workflows._const import INTERNAL_SOURCE_PREFIX

from pytest_flows.agent_framework._seams import SEAMS, check_patch_points

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

_WF = "agent_framework._workflows"
_GATHER = "gather_cancelling_siblings_on_error"
_original_gather: Callable[..., Coroutine[Any, Any, None]] = getattr(_edge_runner, _GATHER)
#: The modules whose concurrent deliveries the seed orders (and only those:
#: responses and sub-workflow outputs keep the runtime's order).
_GATHER_SEAMS = (f"{_WF}._edge_runner:{_GATHER}", f"{_WF}._runner:{_GATHER}")


@contextlib.contextmanager
def ordered_deliveries(order: Order) -> Iterator[None]:
    """Start each superstep's concurrent deliveries in ``order(coroutines)``'s order.

    ``order`` receives the coroutines in the order the runtime created them and
    returns them in the order their tasks are to start.
    """

    async def gather_in_seeded_order(*coroutines: Coroutine[Any, Any, Any]) -> None:
        await _original_gather(*order(list(coroutines)))

    with contextlib.ExitStack() as stack:
        for target in _GATHER_SEAMS:
            stack.enter_context(SEAMS[target].replace(gather_in_seeded_order))
        yield


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
    def sub_workflow(
        self, executor_id: str, workflow: Any, call: dict[str, Any]
    ) -> contextlib.AbstractContextManager[Any]:
        """Entered around one run of a ``WorkflowExecutor``'s inner workflow; yields the
        observer of that run (its result is then given to ``sub_workflow_ended``)."""
        ...

    def sub_workflow_ended(self, child: Any, result: Any, error: BaseException | None) -> None: ...


def is_response(message: Any) -> bool:
    """Whether a delivered message is an answer to a ``request_info``."""
    return bool(message.type == _runner_context.MessageType.RESPONSE)


def internal_source(source_id: str) -> bool:
    """Whether a message source is the workflow itself (its input or a response)."""
    return source_id.startswith(INTERNAL_SOURCE_PREFIX + ":")


_RUNNER = f"{_WF}._runner:RunnerImpl"
_CONTEXT = f"{_WF}._runner_context:InProcRunnerContext"
_STATE = f"{_WF}._state:State"
_ON_TARGET = f"{_WF}._edge_runner:EdgeRunner._execute_on_target"


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
    stack = contextlib.ExitStack()

    def shadow(obj: Any, seam: str, replacement: Any) -> None:
        stack.enter_context(SEAMS[seam].shadow(obj, replacement))

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

    shadow(runner, f"{_RUNNER}.run_until_convergence", run_until_convergence)

    original_restore = runner.restore_from_checkpoint

    async def restore_from_checkpoint(checkpoint_id: str, *args: Any, **kwargs: Any) -> None:
        await original_restore(checkpoint_id, *args, **kwargs)
        observer.restored(str(checkpoint_id), int(runner._iteration))

    shadow(runner, f"{_RUNNER}.restore_from_checkpoint", restore_from_checkpoint)

    # -- deliveries along edges -----------------------------------------------------
    for edge_runner in runner._edge_runners:
        shadow(edge_runner, _ON_TARGET, _delivery_hook(edge_runner, observer))

    # -- the runner context: sends, events, checkpoints, responses -------------------
    original_send = ctx.send_message

    async def send_message(message: Any) -> None:
        observer.sent(message)
        await original_send(message)

    shadow(ctx, f"{_CONTEXT}.send_message", send_message)

    original_add_event = ctx.add_event

    async def add_event(event: Any) -> None:
        observer.event(event)
        await original_add_event(event)

    shadow(ctx, f"{_CONTEXT}.add_event", add_event)

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

    shadow(ctx, f"{_CONTEXT}.create_checkpoint", create_checkpoint)

    original_respond = ctx.send_request_info_response

    async def send_request_info_response(request_id: str, response: Any) -> None:
        await original_respond(request_id, response)
        observer.responded(request_id, response)

    shadow(ctx, f"{_CONTEXT}.send_request_info_response", send_request_info_response)

    # -- shared state ---------------------------------------------------------------
    original_set = state.set

    def state_set(key: str, value: Any) -> None:
        original_set(key, value)
        observer.state_set(key, value)

    shadow(state, f"{_STATE}.set", state_set)

    original_delete = state.delete

    def state_delete(key: str) -> None:
        original_delete(key)
        observer.state_deleted(key)

    shadow(state, f"{_STATE}.delete", state_delete)

    original_commit = state.commit

    def state_commit() -> None:
        pending: dict[str, Any] = state._pending
        sentinel = _state._DeleteSentinel
        written = {k: v for k, v in pending.items() if v is not sentinel}
        deleted = [k for k, v in pending.items() if v is sentinel]
        if written or deleted:
            observer.state_committing(written, deleted)
        original_commit()

    shadow(state, f"{_STATE}.commit", state_commit)

    # -- sub-workflows: each run of a WorkflowExecutor's inner workflow ---------------
    for executor in workflow.executors.values():
        if isinstance(executor, WorkflowExecutor):
            inner = executor.workflow
            shadow(inner, _WORKFLOW_RUN, _sub_workflow_run(inner, str(executor.id), observer))

    with stack:
        yield


_WORKFLOW_RUN = "agent_framework:Workflow.run"


def _sub_workflow_run(inner: Any, executor_id: str, observer: WorkflowObserver) -> Any:
    """``inner.run`` observed, while it runs, by the child observer ``observer`` gives."""
    original = inner.run

    def run(message: Any = None, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs.get("stream"):  # not how WorkflowExecutor calls it: as it is
            return original(message, *args, **kwargs)

        async def observed() -> Any:
            call = {"message": message, **kwargs}
            with observer.sub_workflow(executor_id, inner, call) as child, observe(inner, child):
                try:
                    result = await original(message, **kwargs)
                except BaseException as exc:
                    observer.sub_workflow_ended(child, None, exc)
                    raise
                observer.sub_workflow_ended(child, result, None)
                return result

        return observed()

    return run


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

    with SEAMS["agent_framework:BaseChatClient.get_response"].replace(get_response):
        yield
