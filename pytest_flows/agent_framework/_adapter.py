"""Runs Agent Framework workflows under the harness.

``flows.run(workflow, message)`` (or ``responses=...``, ``checkpoint_id=...``:
``Workflow.run``'s own arguments) runs the real workflow on the deterministic
loop, with the seed ordering each superstep's concurrent deliveries, and
returns a :class:`WorkflowRun` with the outputs, the final status, the pending
requests, the checkpoints written and the superstep trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agent_framework import AgentExecutor, Workflow, WorkflowBuilder, WorkflowRunState

from pytest_flows.adapters import (
    AdapterBase,
    Binding,
    FlowRun,
    FlowsUsageError,
    declared_seams,
    replaced,
)
from pytest_flows.agent_framework import _patches as patches
from pytest_flows.agent_framework._checkpoints import (
    CheckpointSaveError,
    FlowsCheckpointStorage,
    refusal_from,
    run_reports_refusals,
)
from pytest_flows.agent_framework._llm import current_workflow
from pytest_flows.agent_framework._tracing import (
    WorkflowTracer,
    active_tracer,
    render,
)

if TYPE_CHECKING:
    from pytest_flows.adapters import (
        FakeTools,
        FlowGraph,
        FlowsSession,
        FlowStore,
        GoldenAdapter,
        LLMScript,
        ScriptedHuman,
    )

__all__ = ["ADAPTER", "AgentFrameworkAdapter", "OutputRecord", "PendingRequest", "WorkflowRun"]

_RUN_PARAMS = tuple(p for p in inspect.signature(Workflow.run).parameters if p != "self")


@dataclasses.dataclass(frozen=True)
class PendingRequest:
    """A ``request_info`` the workflow is waiting on."""

    request_id: str
    executor: str
    data: Any
    request_type: Any
    response_type: Any
    event: Any = dataclasses.field(repr=False, compare=False, default=None)

    @classmethod
    def of(cls, event: Any) -> PendingRequest:
        return cls(
            request_id=str(event.request_id),
            executor=str(event.source_executor_id),
            data=event.data,
            request_type=event.request_type,
            response_type=event.response_type,
            event=event,
        )


@dataclasses.dataclass(frozen=True)
class OutputRecord:
    """One ``output`` event: which executor yielded what, in which superstep."""

    superstep: int
    executor: str
    data: Any
    #: Yielded by an ``AgentExecutor`` (its ``AgentResponse``/``AgentResponseUpdate``).
    by_agent: bool = False


@dataclasses.dataclass(repr=False)
class WorkflowRun(FlowRun):
    """What one ``flows.run(workflow, ...)`` produced.

    ``output`` is the last workflow output (``outputs`` has them all),
    ``state`` the committed shared state (without the framework's reserved
    ``_`` keys), ``status`` the final ``WorkflowRunState`` name (``"IDLE"``,
    ``"IDLE_WITH_PENDING_REQUESTS"``, ``"FAILED"``), ``pending`` the requests
    still unanswered, ``checkpoints`` the ids of the checkpoints written during
    this run in order, ``result`` Agent Framework's own ``WorkflowRunResult``
    (None if the run raised) and ``events`` every event the run yielded.

    ``outputs`` holds what Agent Framework reports as workflow outputs: with
    the builder's default ``output_from``, that includes the ``AgentResponse``
    every agent executor yields. ``non_agent_outputs`` leaves those out,
    ``outputs_from(executor, ...)`` keeps the given executors' only, and
    ``output_records`` says who yielded each output in which superstep.
    """

    outputs: list[Any] = dataclasses.field(default_factory=list)
    status: str = ""
    pending: list[PendingRequest] = dataclasses.field(default_factory=list)
    checkpoints: list[str] = dataclasses.field(default_factory=list)
    result: Any = None
    events: list[Any] = dataclasses.field(default_factory=list)
    output_records: list[OutputRecord] = dataclasses.field(default_factory=list)

    @property
    def last_checkpoint(self) -> str | None:
        return self.checkpoints[-1] if self.checkpoints else None

    @property
    def non_agent_outputs(self) -> list[Any]:
        """The outputs the workflow's own executors yielded, without agents' responses."""
        return [o.data for o in self.output_records if not o.by_agent]

    def outputs_from(self, *executors: Any) -> list[Any]:
        """The outputs yielded by these executors (ids or executor objects), in order."""
        if not executors:
            raise FlowsUsageError(
                "run.outputs_from() needs the executors whose outputs you want, by id or "
                "object: run.outputs_from('turn_manager'); run.outputs has them all."
            )
        ids = {e if isinstance(e, str) else str(getattr(e, "id", e)) for e in executors}
        known = set(getattr(self.flow, "executors", {}) or {})
        unknown = sorted(ids - known) if known else []
        if unknown:
            raise FlowsUsageError(
                f"run.outputs_from(): no executor {', '.join(map(repr, unknown))} in workflow "
                f"{getattr(self.flow, 'name', None)!r}; its executors are {sorted(known)}."
            )
        return [o.data for o in self.output_records if o.executor in ids]

    def request(self, request_id: str | None = None) -> PendingRequest:
        """The pending request with this id (or the only one)."""
        if request_id is None:
            if len(self.pending) != 1:
                raise LookupError(
                    f"run.request() without an id needs exactly one pending request, there are "
                    f"{len(self.pending)}: {[p.request_id for p in self.pending]}"
                )
            return self.pending[0]
        for pending in self.pending:
            if pending.request_id == request_id:
                return pending
        raise LookupError(
            f"no pending request {request_id!r}; pending: {[p.request_id for p in self.pending]}"
        )

    def __repr__(self) -> str:
        status = f"failed={type(self.error).__name__}" if self.error else f"status={self.status}"
        name = getattr(self.flow, "name", None) or "workflow"
        return (
            f"<WorkflowRun {name} {status} outputs={len(self.outputs)} "
            f"pending={len(self.pending)} events={len(self.trace)}>"
        )


@dataclasses.dataclass
class _Fakes:
    """The fakes bound in one session, as this adapter uses them."""

    storage: FlowsCheckpointStorage | None = None
    human: Any = None
    llm: Any = None


class AgentFrameworkAdapter(AdapterBase):
    name = "agent_framework"

    def __init__(self) -> None:
        self._fakes: weakref.WeakKeyDictionary[FlowsSession, _Fakes] = weakref.WeakKeyDictionary()

    def configure(self) -> None:
        return None

    def accepts(self, target: object) -> bool:
        return isinstance(target, Workflow | WorkflowBuilder)

    @contextlib.contextmanager
    def activate(self, session: FlowsSession) -> Iterator[None]:
        from pytest_flows.agent_framework._state_access import recorded_state

        with (
            patches.ordered_deliveries(lambda items: session.scheduler.order(items)),
            recorded_state(),
        ):
            try:
                yield
            finally:
                self._fakes.pop(session, None)

    def fakes(self, session: FlowsSession) -> _Fakes:
        fakes = self._fakes.get(session)
        if fakes is None:
            fakes = self._fakes[session] = _Fakes()
        return fakes

    # -- the fakes -------------------------------------------------------------------
    def bind_store(self, session: FlowsSession, store: FlowStore) -> Binding:
        from pytest_flows.agent_framework._persistence import AgentFrameworkStoreBackend

        backend = AgentFrameworkStoreBackend(store, session)
        store.register_backend(backend)
        return _setting(self.fakes(session), "storage", backend.storage)

    def bind_human(self, session: FlowsSession, fake: ScriptedHuman) -> Binding:
        return _setting(self.fakes(session), "human", fake)

    def bind_llm(self, session: FlowsSession, fake: LLMScript) -> Binding:
        from pytest_flows.agent_framework._llm import intercept_chat_clients

        return _both(_setting(self.fakes(session), "llm", fake), intercept_chat_clients(fake))

    def bind_tools(self, session: FlowsSession, fake: FakeTools) -> Binding:
        from pytest_flows.agent_framework._tools import install

        return install(fake)

    def seams(self) -> Sequence[object]:
        return declared_seams(__package__)

    def golden(self) -> GoldenAdapter:
        from pytest_flows.agent_framework._golden import ADAPTER

        return ADAPTER

    def graph(self, flow: Any) -> FlowGraph:
        from pytest_flows.agent_framework._graph import workflow_graph

        return workflow_graph(flow)

    # -- running ---------------------------------------------------------------------
    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> WorkflowRun:
        workflow = _workflow(target)
        call = _call(workflow, args, kwargs)
        fakes = self.fakes(session)
        storage = fakes.storage
        built = patches.built_storage(workflow)
        if (
            storage is not None
            and "checkpoint_storage" not in call
            and not isinstance(built, FlowsCheckpointStorage)
        ):
            # flow_store stands in for the workflow's production storage (its
            # rules and allowlist carry over); a test-built FlowsCheckpointStorage stays.
            call["checkpoint_storage"] = storage
            storage.follow(built)
        _check_storage(workflow, call)

        run = WorkflowRun(flow=workflow)
        name = workflow.name or "workflow"
        tracer = WorkflowTracer(self.trace_sink(session), name)
        running = current_workflow.set(workflow)
        tracing = active_tracer.set(tracer)
        reporting = run_reports_refusals.set(True)
        with contextlib.ExitStack() as cleanup:
            cleanup.callback(current_workflow.reset, running)
            cleanup.callback(active_tracer.reset, tracing)
            cleanup.callback(run_reports_refusals.reset, reporting)
            cleanup.enter_context(patches.observe(workflow, tracer))
            tracer.emit("workflow.started", name, *_start_fields(call))
            try:
                if fakes.human is not None and call.get("checkpoint_id") is not None:
                    # restore, then answer in the same call, as a service would
                    restored = await _restored_answers(session, fakes, workflow, call)
                    if restored:
                        tracer.answered_by.update(dict.fromkeys(restored, "human"))
                        call["responses"] = {**restored, **(call.get("responses") or {})}
                tracer.answering = {str(k) for k in call.get("responses") or {}}
                result = await _invoke(workflow, call, run.events)
                run.result = result
                answers = await _human_answers(session, fakes, workflow)
                while answers:
                    tracer.answered_by.update(dict.fromkeys(answers, "human"))
                    tracer.emit(
                        "workflow.resumed", name, ("responses", "[" + ", ".join(answers) + "]")
                    )
                    follow_up: dict[str, Any] = {"responses": answers}
                    for key in ("checkpoint_storage", "stream"):
                        if key in call:
                            follow_up[key] = call[key]
                    run.result = await _invoke(workflow, follow_up, run.events)
                    answers = await _human_answers(session, fakes, workflow)
            except Exception as exc:
                run.error = exc
            pending = await patches.pending_request_events(workflow)
            run.pending = [PendingRequest.of(event) for event in pending.values()]
            run.status = _status_name(workflow.status if run.error is None else None)
            if run.error is None and tracer.checkpoint_failures:
                run.error = _checkpoint_error(name, *tracer.checkpoint_failures[0])
            _finish_line(tracer, name, run)
        run.outputs = list(tracer.outputs)
        run.output_records = _output_records(workflow, run.events)
        run.output = run.outputs[-1] if run.outputs else None
        run.method_outputs = list(run.outputs)
        run.checkpoints = list(tracer.checkpoints)
        committed = patches.committed_state(workflow)
        run.state = {  # sorted: commit order is the order executors happened to run in
            k: committed[k] for k in sorted(committed) if not patches.reserved_state_key(k)
        }
        run.extras.update(
            outputs=run.outputs,
            status=run.status,
            pending=run.pending,
            checkpoints=run.checkpoints,
            supersteps=tracer.supersteps,
        )
        return run


def _setting(fakes: _Fakes, name: str, value: Any) -> contextlib.AbstractContextManager[None]:
    return replaced(fakes, name, value)


@contextlib.contextmanager
def _both(
    first: contextlib.AbstractContextManager[None], second: contextlib.AbstractContextManager[None]
) -> Iterator[None]:
    with first, second:
        yield


def _output_records(workflow: Any, events: list[Any]) -> list[OutputRecord]:
    agents = {
        executor_id
        for executor_id, executor in (getattr(workflow, "executors", None) or {}).items()
        if isinstance(executor, AgentExecutor)
    }
    records: list[OutputRecord] = []
    superstep = 0
    for event in events:
        kind = getattr(event, "type", None)
        if kind == "superstep_started":
            superstep = int(event.iteration)
        elif kind == "output":
            executor = str(event.executor_id)
            records.append(OutputRecord(superstep, executor, event.data, executor in agents))
    return records


async def _human_answers(session: FlowsSession, fakes: _Fakes, workflow: Any) -> dict[str, Any]:
    """Answers the bound ``human`` gives the requests the workflow now waits on."""
    if fakes.human is None:
        return {}
    from pytest_flows.agent_framework._human import answer_pending

    events = await patches.pending_request_events(workflow)
    # by executor (stable under any seed), then in the order each one asked
    pending = sorted((PendingRequest.of(e) for e in events.values()), key=lambda p: p.executor)
    return answer_pending(fakes.human, workflow, pending, session.clock)


async def _restored_answers(
    session: FlowsSession, fakes: _Fakes, workflow: Any, call: Mapping[str, Any]
) -> dict[str, Any]:
    """The human's answers to the requests pending in the checkpoint being restored."""
    from pytest_flows.agent_framework._human import answer_pending

    storage = call.get("checkpoint_storage") or patches.built_storage(workflow)
    try:
        checkpoint = await storage.load(call["checkpoint_id"])
    except Exception:
        return {}  # the restore itself reports it
    given = call.get("responses") or {}
    pending = [
        PendingRequest.of(event)
        for request_id, event in checkpoint.pending_request_info_events.items()
        if request_id not in given
    ]
    pending.sort(key=lambda p: p.executor)
    return answer_pending(fakes.human, workflow, pending, session.clock)


def _checkpoint_error(name: str, iteration: int, error: BaseException) -> BaseException:
    refused = refusal_from(error, name, iteration)
    if refused is not None:
        return refused
    failure = CheckpointSaveError(name, iteration, error)
    failure.__cause__ = error
    return failure


def _status_name(status: Any) -> str:
    if status is None:
        return WorkflowRunState.FAILED.name
    return str(getattr(status, "name", status))


def _finish_line(tracer: WorkflowTracer, name: str, run: WorkflowRun) -> None:
    if run.error is not None:
        tracer.emit(
            "workflow.failed", name, ("error", render(f"{type(run.error).__name__}: {run.error}"))
        )
    elif run.status == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS.name:
        ids = "[" + ", ".join(sorted(p.request_id for p in run.pending)) + "]"
        tracer.emit("workflow.idle_with_pending_requests", name, ("pending", ids))
    else:
        tracer.emit("workflow.finished", name, ("status", run.status))


async def _invoke(workflow: Any, call: dict[str, Any], events: list[Any]) -> Any:
    if call.get("stream"):
        stream = workflow.run(**call)
        async for event in stream:
            events.append(event)
        return await stream.get_final_response()
    result = await workflow.run(**call)
    events.extend(result)
    return result


def _start_fields(call: Mapping[str, Any]) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    if call.get("message") is not None:
        fields.append(("input", render(call["message"])))
    if call.get("checkpoint_id") is not None:
        fields.append(("checkpoint", str(call["checkpoint_id"])))
    if call.get("responses") is not None:
        fields.append(("responses", "[" + ", ".join(map(str, call["responses"])) + "]"))
    if call.get("stream"):
        fields.append(("stream", "yes"))
    return fields


def _workflow(target: Any) -> Any:
    if isinstance(target, WorkflowBuilder):
        raise FlowsUsageError(
            "flows.run() got a WorkflowBuilder; build the workflow first: "
            "flows.run(builder.build(), message). Build a fresh workflow per run "
            "unless you mean to continue one (responses=..., checkpoint_id=...)."
        )
    return target


def _call(workflow: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    name = workflow.name or "workflow"
    if len(args) > 1:
        raise FlowsUsageError(
            f"flows.run(<workflow {name!r}>, ...) takes at most one positional argument, the "
            f"message for the start executor; got {len(args)}. Pass the others by keyword "
            f"({', '.join(_RUN_PARAMS)})."
        )
    call = dict(kwargs)
    if args:
        if "message" in call:
            raise FlowsUsageError(
                f"flows.run(<workflow {name!r}>, ...) got the message both positionally and "
                "as message=...; pass it once."
            )
        call["message"] = args[0]
    unknown = sorted(set(call) - set(_RUN_PARAMS))
    if unknown:
        raise FlowsUsageError(
            f"flows.run(<workflow {name!r}>, ...) got unknown keyword argument(s) "
            f"{', '.join(unknown)}; Workflow.run accepts {', '.join(_RUN_PARAMS)} "
            "(plus raise_on_error=False to get a failed run back instead of the error)."
        )
    message = call.get("message")
    responses = call.get("responses")
    checkpoint_id = call.get("checkpoint_id")
    if message is None and responses is None and checkpoint_id is None:
        raise FlowsUsageError(
            f"flows.run(<workflow {name!r}>) needs something to run: a message for the start "
            f"executor (flows.run(workflow, 'hello')), responses to pending requests "
            "(responses={request_id: answer}) or a checkpoint to restore (checkpoint_id=...)."
        )
    if message is not None and (responses is not None or checkpoint_id is not None):
        other = "responses" if responses is not None else "checkpoint_id"
        raise FlowsUsageError(
            f"flows.run(<workflow {name!r}>, ...) got both a message and {other}=...: a "
            "message starts a new run, responses/checkpoint_id continue one. Pass one of them "
            "(responses and checkpoint_id may go together: restore, then answer)."
        )
    if responses is not None and not isinstance(responses, Mapping):
        raise FlowsUsageError(
            f"flows.run(<workflow {name!r}>, responses=...) needs a mapping of request id to "
            f"answer, got {type(responses).__name__}: {responses!r}. Take the ids from "
            "run.pending, e.g. responses={run.pending[0].request_id: True}."
        )
    return call


def _check_storage(workflow: Any, call: Mapping[str, Any]) -> None:
    if call.get("checkpoint_id") is None:
        return
    if call.get("checkpoint_storage") is not None:
        return
    if patches.has_checkpointing(workflow):
        return
    raise FlowsUsageError(
        f"flows.run(<workflow {workflow.name or 'workflow'!r}>, checkpoint_id=...) has no "
        "storage to restore from: the workflow was built without checkpoint_storage. Request "
        "the flow_store fixture (it becomes every run's checkpoint storage), build the "
        "workflow with WorkflowBuilder(..., checkpoint_storage=storage), or pass "
        "checkpoint_storage=storage to flows.run()."
    )


ADAPTER = AgentFrameworkAdapter()
