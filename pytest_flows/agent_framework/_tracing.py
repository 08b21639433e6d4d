"""Translate what an Agent Framework workflow does into the framework-neutral trace.

A workflow runs in Pregel supersteps; inside one superstep the runtime delivers
messages concurrently and the order it happens to use is not part of the
workflow's meaning. The tracer therefore buffers each superstep and writes it
in a canonical order when the superstep completes:

``superstep.started N``, then one block per delivery sorted by (target, edge) -
``executor.invoked`` followed by what that invocation did (``message.sent``,
``state.set``, ``workflow.output``, ``request.info``, ``executor.failed``) in
the order it did it - then what the superstep committed (``state.committed``)
and the checkpoint written after it (``checkpoint.saved``).

Everything between supersteps (restores, answered requests, the entry
checkpoint) is written as it happens.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from agent_framework import (
    AgentExecutorRequest,
    AgentExecutorResponse,
    AgentResponse,
    AgentResponseUpdate,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    WorkflowMessage,
    WorkflowRunState,
)

from pytest_flows.adapters import MAX_VALUE_CHARS, TraceEvent, elide, render_value
from pytest_flows.agent_framework import _graph as graph
from pytest_flows.agent_framework import _patches as patches
from pytest_flows.agent_framework._checkpoints import refusal_from
from pytest_flows.agent_framework._llm import current_workflow

__all__ = ["WorkflowTracer", "active_tracer", "render"]

Record = Callable[[TraceEvent], None]

#: An id the fake model gave a tool call (``call-<model call>-<k>``, ``occ-call-...``).
_FAKE_CALL_ID = re.compile(r"\bcall-(\d+)-\d+\b")

#: The tracer of the workflow ``flows.run`` is running (for fakes that add lines).
active_tracer: contextvars.ContextVar[WorkflowTracer | None] = contextvars.ContextVar(
    "pytest_flows_af_tracer", default=None
)


# -- values -------------------------------------------------------------------------


def _text_of(value: Any) -> str:
    text = getattr(value, "text", "")
    return text if isinstance(text, str) else ""


def _content(content: Any) -> str:
    kind = getattr(content, "type", "?")
    if kind == "text":
        return repr(content.text)
    if kind == "function_call":
        return f"call {content.name}({content.arguments if content.arguments else ''})"
    if kind == "function_result":
        return f"result {content.call_id}={content.result!r}"
    return str(kind)


def _message(message: Any) -> str:
    role = getattr(message, "role", "?")
    parts = ", ".join(_content(c) for c in getattr(message, "contents", ()) or ())
    return f"{role}: {parts}"


def _summary(value: Any) -> str | None:
    """A short text for Agent Framework's own (large) value types, else None."""
    if isinstance(value, WorkflowMessage):
        return render(value.data)
    if isinstance(value, AgentExecutorResponse):
        return f"AgentExecutorResponse({value.executor_id}: {_text_of(value.agent_response)!r})"
    if isinstance(value, AgentExecutorRequest):
        messages = "; ".join(_message(m) for m in value.messages)
        return f"AgentExecutorRequest([{messages}], should_respond={value.should_respond})"
    if isinstance(value, AgentResponse | ChatResponse):
        parsed = getattr(value, "_value_parsed", False)
        structured = getattr(value, "value", None) if parsed else None
        if structured is not None:
            return f"{type(value).__name__}({render(structured)})"
        messages = "; ".join(_message(m) for m in value.messages)
        return f"{type(value).__name__}([{messages}])"
    if isinstance(value, AgentResponseUpdate | ChatResponseUpdate):
        parts = ", ".join(_content(c) for c in value.contents or ())
        return f"{type(value).__name__}([{parts}])"
    if isinstance(value, Message):
        return f"Message({_message(value)})"
    if isinstance(value, Content):
        return f"Content({_content(value)})"
    return None


def _json_like(value: Any) -> bool:
    """Whether ``render_value`` shows ``value`` as itself inside a JSON list."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list | tuple):
        return all(_json_like(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v) for k, v in value.items())
    return False


def render(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """Like :func:`~pytest_flows._internal.trace.render_value`, with short forms of AF types."""
    summary = _summary(value)
    if summary is None and isinstance(value, list | tuple) and value:
        parts = [_summary(item) for item in value]
        pairs = zip(parts, value, strict=True)
        if any(part is not None or not _json_like(item) for part, item in pairs):
            summary = (
                "["
                + ", ".join(
                    part if part is not None else render_value(item, limit=10_000)
                    for part, item in zip(parts, value, strict=True)
                )
                + "]"
            )
    if summary is None:
        return render_value(value, limit)
    return elide(summary.replace("\n", "\\n"), limit)


def _error(error: BaseException | str) -> str:
    if isinstance(error, BaseException):
        return render_value(f"{type(error).__name__}: {error}")
    return render_value(error)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or str(tp)


# -- the tracer ---------------------------------------------------------------------


@dataclasses.dataclass
class _Delivery:
    target: str
    edge: str
    seq: int
    events: list[TraceEvent]
    failed: bool = False
    #: the tracer whose workflow made the delivery (a sub-workflow runs inside its
    #: parent's delivery: what the sub-workflow does is not that delivery's)
    owner: Any = None


@dataclasses.dataclass
class _Superstep:
    number: int
    deliveries: list[_Delivery] = dataclasses.field(default_factory=list)
    tail: list[TraceEvent] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class SuperstepSummary:
    """What one superstep produced, for properties (restore equivalence)."""

    number: int
    outputs: list[Any] = dataclasses.field(default_factory=list)
    lines: list[str] = dataclasses.field(default_factory=list)


class WorkflowTracer(patches.WorkflowObserver):
    """Receives a workflow's hooks (see :func:`patches.observe`) and records trace events."""

    def __init__(self, record: Record, workflow_name: str = "workflow") -> None:
        self._record = record
        self.workflow_name = workflow_name
        self._open: _Superstep | None = None
        self._seq = itertools.count()
        #: Who answered a request (default: the caller of flows.run).
        self.answered_by: dict[str, str] = {}
        #: Request ids the current call answers (a restore re-raises them first).
        self.answering: set[str] = set()
        #: Checkpoint ids saved while observed, in order.
        self.checkpoints: list[str] = []
        #: (superstep, error) of every checkpoint the runtime failed to save.
        self.checkpoint_failures: list[tuple[int, BaseException]] = []
        #: Outputs (``output`` events) per superstep, in emission order.
        self.supersteps: list[SuperstepSummary] = []
        self.outputs: list[Any] = []
        self._model_calls = 0
        #: The tracer of the outermost run (a sub-workflow's tracer numbers its model
        #: calls with its parent's, as one conversation history would).
        self._root: WorkflowTracer = self

    def next_model_call(self, seen_ids: Sequence[str] = ()) -> int:
        """The number of this run's next model call (the fake's reply ids carry it).

        Numbered per run, but never one that an id the run already holds carries
        (``seen_ids``: the conversation's call ids; a restored pending request's id):
        a restored run must not give a new tool call the id of an old one.
        """
        root = self._root
        for seen in seen_ids:
            root._note_call_id(seen)
        root._model_calls += 1
        return root._model_calls

    def _note_call_id(self, text: str) -> None:
        root = self._root
        for match in _FAKE_CALL_ID.finditer(text):
            root._model_calls = max(root._model_calls, int(match.group(1)))

    # -- sub-workflows ----------------------------------------------------------------
    @contextlib.contextmanager
    def sub_workflow(
        self, executor_id: str, workflow: Any, call: dict[str, Any]
    ) -> Iterator[WorkflowTracer]:
        """A tracer for one run of a ``WorkflowExecutor``'s inner workflow: its lines go
        into the delivery of that executor, one level deeper, and it counts in coverage
        as its own workflow."""
        name = str(workflow.name or executor_id)
        child = WorkflowTracer(self._nested, name)
        child._root = self._root
        running = current_workflow.set(workflow)  # its model calls and coverage name it
        try:
            fields = []
            if call.get("message") is not None:
                fields.append(("input", render(call["message"])))
            if call.get("responses"):
                fields.append(("responses", "[" + ", ".join(map(str, call["responses"])) + "]"))
            child.emit("workflow.started", name, *fields)
            yield child
        finally:
            current_workflow.reset(running)

    def sub_workflow_ended(self, child: Any, result: Any, error: BaseException | None) -> None:
        if not isinstance(child, WorkflowTracer):
            return
        name = child.workflow_name
        if error is not None:
            child.emit("workflow.failed", name, ("error", _error(error)))
            return
        state = result.get_final_state()
        if state == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS:
            ids = sorted(str(e.request_id) for e in result.get_request_info_events())
            child.emit(
                "workflow.idle_with_pending_requests", name, ("pending", f"[{', '.join(ids)}]")
            )
        else:
            child.emit("workflow.finished", name, ("status", str(getattr(state, "name", state))))

    def _nested(self, event: TraceEvent) -> None:
        self._put(event.model_copy(update={"depth": event.depth + 1}))

    # -- writing ------------------------------------------------------------------
    def emit(self, kind: str, name: str = "", *fields: tuple[str, str]) -> None:
        """Record a workflow-level event now (outside any superstep)."""
        if kind == "workflow.started":
            graph.note_started(name)  # coverage: which workflow this run is
        self._put(TraceEvent(kind=kind, name=name, fields=tuple(fields)))

    def put(self, event: TraceEvent) -> None:
        """Record ``event`` where it happened: the running delivery (a sub-workflow's
        too), the superstep, or now."""
        token = patches.current_invocation()
        if isinstance(token, _Delivery) and token.owner is not None:
            token.owner._put(event)
        else:
            self._put(event)

    def _mine(self, token: Any) -> bool:
        """Whether ``token`` is a delivery of this tracer's workflow."""
        return isinstance(token, _Delivery) and token.owner is self

    def _put(self, event: TraceEvent) -> None:
        """Into the current delivery block, the open superstep's tail, or straight out."""
        token = patches.current_invocation()
        if self._mine(token) and self._open is not None:
            token.events.append(event)
        elif self._open is not None:
            self._open.tail.append(event)
        else:
            self._record(event)

    def _flush(self) -> None:
        step, self._open = self._open, None
        if step is None:
            return
        self._record(TraceEvent(kind="superstep.started", name=str(step.number)))
        for delivery in sorted(step.deliveries, key=lambda d: (d.target, d.edge, d.seq)):
            for event in delivery.events:
                self._record(event)
        for event in step.tail:
            self._record(event)

    # -- the runner ---------------------------------------------------------------
    def runner_event(self, event: Any) -> None:
        if event.type == "superstep_started":
            self._flush()
            self._open = _Superstep(int(event.iteration))
            self.supersteps.append(SuperstepSummary(int(event.iteration)))
        elif event.type == "superstep_completed":
            self._flush()

    def runner_ended(self, error: BaseException | None) -> None:
        self._flush()

    # -- deliveries ---------------------------------------------------------------
    def delivering(self, target: str, sources: list[str], message: Any, edge_group: str) -> Any:
        response = isinstance(message, WorkflowMessage) and patches.is_response(message)
        if response:
            source = "response"
        elif len(sources) == 1 and patches.internal_source(sources[0]):
            source = "input"
        else:
            source = "+".join(sources)
        edge = f"{source}->{target}"
        fields: list[tuple[str, str]] = [("edge", edge)]
        if response and message.original_request_info_event is not None:
            fields.append(("request", str(message.original_request_info_event.request_id)))
        data = message.data if isinstance(message, WorkflowMessage) else message
        fields.append(("input", render(data)))
        delivery = _Delivery(
            owner=self,
            target=target,
            edge=edge,
            seq=next(self._seq),
            events=[TraceEvent(kind="executor.invoked", name=target, fields=tuple(fields))],
        )
        if self._open is None:  # not expected: deliveries happen inside supersteps
            self._open = _Superstep(0)
        self._open.deliveries.append(delivery)
        return delivery

    def delivered(self, token: Any, error: BaseException | None, cancelled: bool) -> None:
        if not isinstance(token, _Delivery):
            return
        if cancelled:
            token.events.append(TraceEvent(kind="executor.cancelled", name=token.target))
        elif error is not None and not token.failed:
            token.failed = True
            token.events.append(
                TraceEvent(
                    kind="executor.failed", name=token.target, fields=(("error", _error(error)),)
                )
            )

    def sent(self, message: Any) -> None:
        token = patches.current_invocation()
        if not self._mine(token) or not isinstance(message, WorkflowMessage):
            return  # the workflow's input or a response: traced by the adapter/responded()
        token.events.append(
            TraceEvent(
                kind="message.sent",
                name=message.source_id,
                fields=(("target", message.target_id or "*"), ("data", render(message.data))),
            )
        )

    def event(self, event: Any) -> None:
        kind = event.type
        token = patches.current_invocation()
        if kind in ("output", "intermediate"):
            if kind == "output":
                self.outputs.append(event.data)
                if self.supersteps:
                    self.supersteps[-1].outputs.append(event.data)
            self._put(
                TraceEvent(
                    kind=f"workflow.{kind}",
                    name=str(event.executor_id),
                    fields=(("data", render(event.data)),),
                )
            )
        elif kind == "request_info":
            fields = (
                ("executor", str(event.source_executor_id)),
                ("data", render(event.data)),
                ("response_type", _type_name(event.response_type)),
            )
            inside = self._mine(token)
            self._note_call_id(str(event.request_id))
            if not inside and str(event.request_id) in self.answering:
                return  # re-raised by a restore and answered in the same call
            self._put(
                TraceEvent(
                    kind="request.info" if inside else "request.pending",
                    name=str(event.request_id),
                    fields=fields,
                )
            )
        elif kind == "executor_failed" and not self._mine(token):
            # (inside a delivery, delivered() records the exception itself: the
            # event's details hide the message unless sensitive data is enabled)
            details = event.data
            text = f"{getattr(details, 'error_type', '?')}: {getattr(details, 'message', '')}"
            self._put(
                TraceEvent(
                    kind="executor.failed",
                    name=str(event.executor_id),
                    fields=(("error", render_value(text)),),
                )
            )
        elif kind in ("warning", "error"):
            self._put(TraceEvent(kind=f"workflow.{kind}", fields=(("data", render(event.data)),)))

    # -- state ----------------------------------------------------------------------
    def state_set(self, key: str, value: Any) -> None:
        token = patches.current_invocation()
        if patches.reserved_state_key(key) or not self._mine(token):
            return
        token.events.append(
            TraceEvent(
                kind="state.set",
                name=key,
                fields=(("value", render(value)), ("by", token.target)),
            )
        )

    def state_deleted(self, key: str) -> None:
        token = patches.current_invocation()
        if patches.reserved_state_key(key) or not self._mine(token):
            return
        token.events.append(
            TraceEvent(kind="state.delete", name=key, fields=(("by", token.target),))
        )

    def state_committing(self, pending: dict[str, Any], deleted: Sequence[str]) -> None:
        for key in sorted(k for k in pending if not patches.reserved_state_key(k)):
            self._put(
                TraceEvent(
                    kind="state.committed", name=key, fields=(("value", render(pending[key])),)
                )
            )
        for key in sorted(k for k in deleted if not patches.reserved_state_key(k)):
            self._put(TraceEvent(kind="state.deleted", name=key))

    # -- checkpoints, restores, responses ----------------------------------------------
    def checkpoint_saved(self, checkpoint_id: str, iteration: int, parent: str | None) -> None:
        self.checkpoints.append(checkpoint_id)
        self._put(
            TraceEvent(
                kind="checkpoint.saved",
                name=checkpoint_id,
                fields=(("superstep", str(iteration)), ("parent", parent or "-")),
            )
        )

    def checkpoint_failed(self, iteration: int, error: BaseException) -> None:
        self.checkpoint_failures.append((iteration, error))
        refused = refusal_from(error, self.workflow_name, iteration)
        if refused is not None:
            fields = [("superstep", str(iteration))]
            if refused.blocked_type:
                fields.append(("blocked", refused.blocked_type))
            else:
                fields.append(("error", _error(refused.__cause__ or refused)))
            event = TraceEvent(
                kind="checkpoint.refused", name=refused.checkpoint_id, fields=tuple(fields)
            )
        else:
            event = TraceEvent(
                kind="checkpoint.failed",
                fields=(("superstep", str(iteration)), ("error", _error(error))),
            )
        self._put(event)

    def restored(self, checkpoint_id: str, iteration: int) -> None:
        self._put(
            TraceEvent(
                kind="workflow.restored",
                name=checkpoint_id,
                fields=(("superstep", str(iteration)),),
            )
        )

    def responded(self, request_id: str, response: Any) -> None:
        self._put(
            TraceEvent(
                kind="request.answered",
                name=request_id,
                fields=(
                    ("answer", render(response)),
                    ("by", self.answered_by.get(str(request_id), "caller")),
                ),
            )
        )
