"""The flight recorder's LangGraph part: one record per graph run, the continuations that
answer its interrupts (``invoke(Command(resume=...), config)``) included.

Nothing of LangGraph is patched: while recording is on, a langchain-core callback
handler is added to every run through ``register_configure_hook`` (the hook langchain
itself uses for its tracers), so a graph's run reports to it from wherever it is
invoked. From the callbacks it records:

* the graph run (a root run LangGraph marks ``ls_integration: langgraph``): its input
  and ``configurable`` keys, the graph (read from the ``Pregel.stream`` call running it)
  and the module-level name it is bound to, so a test can replay it;
* each task (a node's run, ``langgraph_node`` in its metadata), as it starts and
  finishes, in the order the tasks of a superstep complete on the pool threads;
* each chat-model request and reply (messages, offered tools, tool calls or text), a
  streamed reply's text chunk by chunk, each tool call and result, with the node that
  made it;
* each ``interrupt()`` (the node, its value and id) and each answer a continuation
  gives it.

``shadow(run)`` records the graph runs of a replay's context into ``run`` in the same
form (``flows.replay`` compares the two records).
"""

from __future__ import annotations

import contextvars
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.pregel import Pregel
from langgraph.types import Command

from pytest_flows._internal.flight import capture
from pytest_flows._internal.flight.capture import RunRecording
from pytest_flows._internal.flight.format import message_text
from pytest_flows._internal.flight.writer import LOG
from pytest_flows._internal.trace import render_value

__all__ = ["RecordingHandler", "install", "shadow"]

FRAMEWORK = "langgraph"
_VERSION = capture.distribution_version("langgraph")
#: What a root run of a graph carries in its metadata (LangGraph sets it).
_INTEGRATION = ("ls_integration", "langgraph")
#: ``configurable`` keys that are LangGraph's bookkeeping, not the caller's settings.
_RUNTIME_KEYS = ("checkpoint_id", "checkpoint_ns", "checkpoint_map")
_FRAMEWORK_MODULES = ("langgraph", "langchain", "pytest_flows")

#: The in-memory recording of a replay (``shadow``): runs go into it, not to disk.
_shadow: contextvars.ContextVar[RunRecording | None] = contextvars.ContextVar(
    "pytest_flows_flight_langgraph_shadow", default=None
)


def _role(message: Any) -> str:
    return str(getattr(message, "role", None) or getattr(message, "type", None) or "?")


def message_dicts(messages: Any) -> list[dict[str, Any]]:
    """Chat messages as the record keeps them: role (``human``, ``ai``, ``system``,
    ``tool``) and text (a model's tool calls as ``[call name {arguments}]``)."""
    return [{"role": _role(m), "content": message_text(m)} for m in messages or ()]


def response_fields(message: Any) -> dict[str, Any]:
    """A model's reply as the record keeps it: its tool calls, else its text."""
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        return {
            "response_type": "tool_calls",
            "response": [
                {"name": c.get("name"), "arguments": c.get("args") or {}, "id": c.get("id")}
                for c in calls
            ],
        }
    return {"response_type": "text", "response": message_text(message)}


def _tool_names(kwargs: dict[str, Any]) -> list[str]:
    params = kwargs.get("invocation_params") or {}
    names = []
    for tool in params.get("tools") or ():
        if isinstance(tool, dict):
            inner = tool.get("function")
            function = inner if isinstance(inner, dict) else tool
            names.append(str(function.get("name")))
        else:
            names.append(str(getattr(tool, "name", tool)))
    return names


def _graph_call(start: Any) -> tuple[Any, dict[str, Any], Any]:
    """The graph, config and stream mode of the ``Pregel.stream``/``astream`` call running
    now (the frames above the callback), or (None, {}, None)."""
    frame = start
    for _ in range(80):
        if frame is None:
            break
        if frame.f_code.co_name in ("stream", "astream"):
            graph = frame.f_locals.get("self")
            if isinstance(graph, Pregel):
                config = frame.f_locals.get("config")
                mode = frame.f_locals.get("stream_mode")
                return graph, dict(config) if isinstance(config, dict) else {}, mode
        frame = frame.f_back
    return None, {}, None


def _factory(graph: Any, start: Any) -> str | None:
    """``module:name`` a test can import the graph by: the recorder's ``factories`` for
    its name, else a module-level name the calling code binds it to."""
    recorder = capture.active()
    named = (recorder.factories if recorder is not None else {}).get(str(graph.name))
    if named:
        return named
    namespaces = []
    frame = start
    for _ in range(80):
        if frame is None:
            break
        namespaces.append(frame.f_globals)
        frame = frame.f_back
    # where the graph is most likely built: its state schema's module
    schema = getattr(getattr(graph, "builder", None), "state_schema", None)
    home = sys.modules.get(getattr(schema, "__module__", "") or "")
    if home is not None:
        namespaces.append(vars(home))
    for namespace in namespaces:
        module = str(namespace.get("__name__", ""))
        if not module or module == "__main__" or module.startswith(_FRAMEWORK_MODULES):
            continue
        for name, value in list(namespace.items()):
            if value is graph and not name.startswith("_"):
                return f"{module}:{name}"
    return None


class _Run:
    __slots__ = ("node", "record", "root", "task")

    def __init__(self, record: RunRecording, node: str | None, task: bool, root: bool) -> None:
        self.record, self.node, self.task, self.root = record, node, task, root


class RecordingHandler(BaseCallbackHandler):
    """langchain-core callbacks into flight records (inline: on the thread, and in the
    order, the runtime reports them; never raises into the graph)."""

    run_inline = True
    raise_error = False

    def __init__(self) -> None:
        self._runs: dict[uuid.UUID, _Run] = {}
        self._ns: dict[uuid.UUID, str | None] = {}
        #: A graph run that paused on interrupts, by (graph, thread): its continuation
        #: goes into the same record, which is written again.
        self._paused: dict[tuple[str, str], RunRecording] = {}
        self._lock = threading.Lock()

    # -- graph runs and tasks -------------------------------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            self._started(inputs, run_id, parent_run_id, metadata or {}, kwargs)
        except Exception:
            LOG.exception("pytest-flows recorder: recording a LangGraph run failed")

    def _started(
        self,
        inputs: Any,
        run_id: uuid.UUID,
        parent_id: uuid.UUID | None,
        metadata: dict[str, Any],
        kwargs: dict[str, Any],
    ) -> None:
        if parent_id is None:
            if metadata.get(_INTEGRATION[0]) == _INTEGRATION[1]:
                self._graph_started(inputs, run_id, metadata, str(kwargs.get("name") or ""))
            return
        with self._lock:
            parent = self._runs.get(parent_id)
            if parent is None:
                return
            ns = metadata.get("langgraph_checkpoint_ns")
            node = metadata.get("langgraph_node")
            task = node is not None and ns is not None and ns != self._ns.get(parent_id)
            name = str(node) if node else parent.node
            self._runs[run_id] = _Run(parent.record, name, task, False)
            self._ns[run_id] = None if ns is None else str(ns)
        if task:
            step = metadata.get("langgraph_step")
            parent.record.note("method.started", method=str(node), step=step)

    def _graph_started(
        self, inputs: Any, run_id: uuid.UUID, metadata: dict[str, Any], name: str
    ) -> None:
        start = sys._getframe(3)
        thread = str(metadata.get("thread_id", ""))
        record = _shadow.get()
        resume = inputs.resume if isinstance(inputs, Command) else None
        if record is None and resume is not None:
            with self._lock:
                paused = self._paused.pop((name, thread), None)
            if paused is not None and paused.reopen():
                record = paused
        if record is None:
            record = self._begin(inputs, name, start)
            if record is None:
                return
        if resume is not None:
            _answers(record, resume)
        record.note("flow.started", flow=name)
        with self._lock:
            self._runs[run_id] = _Run(record, None, False, True)
            self._ns[run_id] = ""

    def _begin(self, inputs: Any, name: str, start: Any) -> RunRecording | None:
        graph, config, mode = _graph_call(start)
        configurable = {
            k: v
            for k, v in dict(config.get("configurable") or {}).items()
            if not str(k).startswith("__") and k not in _RUNTIME_KEYS
        }
        run_kwargs: dict[str, Any] = {"inputs": inputs}
        if configurable:
            run_kwargs["config"] = {"configurable": configurable}
        if "messages" in ([mode] if isinstance(mode, str) else list(mode or ())):
            # its consumer streamed the models' tokens: nodes' invoke() calls stream then
            run_kwargs["stream_mode"] = "messages"
        target = f"{type(graph).__module__}:{type(graph).__qualname__}" if graph else ""
        record = capture.begin(FRAMEWORK, _VERSION, target, run_kwargs)
        if record is not None:
            record.header["graph"] = name
            record.header["factory"] = None if graph is None else _factory(graph, start)
        return record

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._finished(run_id)
        if run is None:
            return
        try:
            if run.task:
                shown = outputs.goto if isinstance(outputs, Command) else outputs
                run.record.note(
                    "method.finished", method=run.node, output=shown, rendered=render_value(outputs)
                )
            elif run.root:
                self._graph_ended(run.record, outputs, None)
        except Exception:
            LOG.exception("pytest-flows recorder: recording a LangGraph run's end failed")

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._finished(run_id)
        if run is None:
            return
        try:
            if run.task:
                interrupts = _interrupts_of(error)
                if interrupts is not None:
                    for interrupt in interrupts:
                        run.record.note(
                            "human.asked",
                            method=run.node,
                            via="interrupt",
                            interrupt_id=str(getattr(interrupt, "id", "")),
                            value=getattr(interrupt, "value", None),
                        )
                    run.record.note("method.interrupted", method=run.node)
                elif type(error).__name__ != "ParentCommand":
                    run.record.note(
                        "method.failed", method=run.node, error=capture.error_fields(error)
                    )
            elif run.root:
                self._graph_ended(run.record, None, error)
        except Exception:
            LOG.exception("pytest-flows recorder: recording a LangGraph failure failed")

    def _graph_ended(self, record: RunRecording, outputs: Any, error: BaseException | None) -> None:
        if record is _shadow.get():
            return  # a replay's record: flows.replay ends it
        if error is not None:
            record.finish("failed", error=capture.error_fields(error))
            return
        asked = {e.get("interrupt_id") for e in record.entries if e.get("kind") == "human.asked"}
        answered = {
            e.get("interrupt_id") for e in record.entries if e.get("kind") == "human.answered"
        }
        if asked - answered:
            # Written now (production may never answer), and again when it is answered.
            record.finish("paused", output=outputs, rendered=render_value(outputs))
            key = (str(record.header.get("graph")), _thread_of(record))
            with self._lock:
                self._paused[key] = record
            return
        record.finish("finished", output=outputs, rendered=render_value(outputs))

    # -- models and tools -------------------------------------------------------------
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._child(run_id, parent_run_id)
        if run is None:
            return
        try:
            params = kwargs.get("invocation_params") or {}
            run.record.note(
                "llm.request",
                call_id=str(run_id),
                method=run.node,
                model=params.get("model_name") or params.get("model") or kwargs.get("name"),
                messages=message_dicts(messages[0] if messages else []),
                tools=_tool_names(kwargs),
                stream=bool(params.get("stream")),
            )
        except Exception:
            LOG.exception("pytest-flows recorder: recording a model request failed")

    def on_llm_end(
        self,
        response: Any,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._finished(run_id)
        if run is None:
            return
        try:
            generation = response.generations[0][0]
            message = getattr(generation, "message", None)
            fields = (
                response_fields(message)
                if message is not None
                else {"response_type": "text", "response": str(generation.text)}
            )
            usage = getattr(message, "usage_metadata", None)
            run.record.note(
                "llm.response",
                call_id=str(run_id),
                method=run.node,
                usage=dict(usage) if usage else None,
                **fields,
            )
        except Exception:
            LOG.exception("pytest-flows recorder: recording a model reply failed")

    def on_llm_new_token(
        self,
        token: Any,
        *,
        chunk: Any = None,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        # A streamed reply's text, chunk by chunk, as the stream's consumer got it (a
        # node's ``model.stream(...)``, or ``stream_mode="messages"`` streaming an
        # ``invoke``). Chunks without text (the role, a tool call's pieces, the finish
        # reason) show a consumer nothing: the reply itself holds the tool calls.
        if not isinstance(token, str) or not token:
            return
        with self._lock:
            run = self._runs.get(run_id)
        if run is not None:
            run.record.note("llm.chunk", call_id=str(run_id), method=run.node, chunk=token)

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._finished(run_id)
        if run is not None:
            run.record.note(
                "llm.failed",
                call_id=str(run_id),
                method=run.node,
                error=str(error),
                exception=capture.exception_fields(error),
            )

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._child(run_id, parent_run_id)
        if run is None:
            return
        tool = kwargs.get("name") or (serialized or {}).get("name")
        run.record.note(
            "tool.started",
            method=run.node,
            tool=tool,
            args=inputs if inputs is not None else input_str,
            call_id=str(run_id),
        )

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._finished(run_id)
        if run is not None:
            content = getattr(output, "content", output)
            run.record.note(
                "tool.finished",
                method=run.node,
                tool=kwargs.get("name"),
                output=content,
                call_id=str(run_id),
            )

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._finished(run_id)
        if run is not None:
            run.record.note(
                "tool.failed",
                method=run.node,
                tool=kwargs.get("name"),
                error=str(error),
                call_id=str(run_id),
            )

    def _finished(self, run_id: uuid.UUID) -> _Run | None:
        """The run ``run_id`` belonged to, no longer followed (None: not followed)."""
        with self._lock:
            self._ns.pop(run_id, None)
            return self._runs.pop(run_id, None)

    def _child(self, run_id: uuid.UUID, parent_id: uuid.UUID | None) -> _Run | None:
        """The run ``run_id`` belongs to (its parent's record and node), now followed."""
        with self._lock:
            parent = self._runs.get(parent_id) if parent_id is not None else None
            if parent is None:
                return None
            run = _Run(parent.record, parent.node, False, False)
            self._runs[run_id] = run
            return run


def _interrupts_of(error: BaseException) -> list[Any] | None:
    """The interrupts a ``GraphInterrupt`` carries, or None for any other error."""
    if type(error).__name__ not in ("GraphInterrupt", "NodeInterrupt"):
        return None
    found = error.args[0] if error.args else ()
    return list(found) if isinstance(found, list | tuple) else []


def _thread_of(record: RunRecording) -> str:
    config = (record.header.get("run_kwargs") or {}).get("config") or {}
    return str((config.get("configurable") or {}).get("thread_id", ""))


def _answers(record: RunRecording, resume: Any) -> None:
    """A continuation's ``Command(resume=...)``: one answer per interrupt it answers
    (a dict by interrupt id; else the one the record still waits on)."""
    asked = [e for e in record.entries if e.get("kind") == "human.asked"]
    answered = {e.get("interrupt_id") for e in record.entries if e.get("kind") == "human.answered"}
    waiting = [e for e in asked if e.get("interrupt_id") not in answered]
    ids = {str(e.get("interrupt_id")): e for e in waiting}
    if isinstance(resume, dict) and resume and set(map(str, resume)) <= set(ids):
        pairs = [(ids[str(key)], value) for key, value in resume.items()]
    elif waiting:
        pairs = [(waiting[-1], resume)]
    else:
        return
    for entry, value in pairs:
        record.note(
            "human.answered",
            method=entry.get("method"),
            via="interrupt",
            interrupt_id=entry.get("interrupt_id"),
            answer=value,
        )


_HANDLER = RecordingHandler()
#: The configure hook's variable: its default is the handler, so every context (pool
#: threads, event loops) sees it while the hook is registered.
_HOOK: contextvars.ContextVar[RecordingHandler | None] = contextvars.ContextVar(
    "pytest_flows_flight_langgraph", default=_HANDLER
)
_hook_lock = threading.Lock()
_installs = 0


def install() -> Callable[[], None]:
    """Add the handler to every langchain-core run until the returned undo is called."""
    global _installs
    from langchain_core.tracers import context as lc_context

    with _hook_lock:
        if not any(hook[0] is _HOOK for hook in lc_context._configure_hooks):
            lc_context.register_configure_hook(_HOOK, True)
        _installs += 1
    undone = False

    def undo() -> None:
        global _installs
        nonlocal undone
        with _hook_lock:
            if undone:
                return
            undone = True
            _installs -= 1
            if _installs == 0:
                # langchain-core has no unregister: the hook's entry is taken out of its list
                lc_context._configure_hooks[:] = [
                    hook for hook in lc_context._configure_hooks if hook[0] is not _HOOK
                ]

    return undo


def shadow(
    run: RunRecording, *, answer_tool: Callable[..., Any] | None = None
) -> Callable[[], None]:
    """Record the graph runs of this context into ``run`` (replay compares them).

    (``answer_tool`` is crewAI's: LangGraph's tools are answered by ``fake_tools``.)
    """
    undo = install()
    token = _shadow.set(run)

    def done() -> None:
        _shadow.reset(token)
        undo()

    return done
