"""What a LangGraph graph does, as the framework-neutral trace, in a canonical order.

LangGraph reports a graph's work through langchain-core callbacks: a run for the
graph, one per task (its metadata carries ``langgraph_step``, ``langgraph_node``,
``langgraph_path``, ``langgraph_triggers`` and the task's ``langgraph_checkpoint_ns``),
one per conditional edge's path function inside its task, and a nested graph run for
a subgraph. The handler here is installed for every graph a test runs (through
``register_configure_hook`` and a ContextVar set per test, so a graph that test code
invokes directly is traced too).

Tasks of a superstep run in parallel and report in completion order, which is not
part of the graph's meaning: each graph run is buffered and written when it ends,
superstep by superstep, its tasks sorted by task path (Send tasks by index, then
nodes by name, LangGraph's own order), each task's lines together::

    superstep 1 tasks=[a, b]
    task a started triggers=[branch:to:a]
    router a route chose=sub
    task a finished writes={"notes": ["a"]}
    ...
    checkpoint saved c3 step=1 source=loop parent=c2 next=[sub, w, w]

A subgraph's lines sit under the task that ran it, indented; a functional ``@task``
call's under the entrypoint task that called it. Checkpoint lines come from the
stream ``flows.run`` drives (a graph invoked directly has none).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import itertools
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.errors import GraphInterrupt
from langgraph.types import Command, Interrupt, Send

from pytest_flows.adapters import TraceEvent, internal_lock, render_value
from pytest_flows.langgraph._ids import Names

__all__ = ["GraphWatch", "Handler", "current_handler", "install_hook", "task_name"]

Record = Callable[[TraceEvent], None]

#: The handler of the running test (None: no test, or the harness is off).
current_handler: contextvars.ContextVar[Handler | None] = contextvars.ContextVar(
    "pytest_flows_langgraph_handler", default=None
)

_hook_lock = threading.Lock()
_hooked = False


def install_hook() -> None:
    """Make langchain-core add the current test's handler to every run (once a process)."""
    global _hooked
    from langchain_core.tracers.context import register_configure_hook

    with _hook_lock:
        if not _hooked:
            register_configure_hook(current_handler, True)
            _hooked = True


# -- values ---------------------------------------------------------------------------


def _send(send: Send) -> TraceEvent:
    return TraceEvent(kind="send", name=str(send.node), fields=(("arg", render_value(send.arg)),))


def _sends(value: Any) -> list[Send]:
    if isinstance(value, Send):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, Send)]
    return []


def _label(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_label(v) for v in value) + "]"
    if isinstance(value, Send):
        return f"Send({value.node})"
    return str(value)


def _command(command: Command[Any]) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    if command.graph is not None:
        fields.append(("graph", str(command.graph)))
    if command.update is not None:
        fields.append(("update", render_value(command.update)))
    goto = command.goto
    if goto:
        targets = goto if isinstance(goto, list | tuple) else [goto]
        fields.append(("goto", "[" + ", ".join(_label(t) for t in targets) + "]"))
    if command.resume is not None:
        fields.append(("resume", render_value(command.resume)))
    return fields


def _error(error: BaseException) -> str:
    return render_value(f"{type(error).__name__}: {error}")


def _path_key(path: Any) -> str:
    """A task path as text that sorts as LangGraph orders tasks (numbers padded)."""
    if isinstance(path, tuple | list):
        return "(" + ",".join(_path_key(p) for p in path) + ")"
    if isinstance(path, bool):
        return "1" if path else "0"
    if isinstance(path, int):
        return f"{path:012d}"
    return str(path)


def task_name(node: str, path: Any) -> str:
    """``node``, or ``node[i]`` for the i-th Send or ``@task`` call (a PUSH task)."""
    if isinstance(path, tuple | list) and path and path[0] == "__pregel_push":
        index = next((p for p in reversed(path[1:]) if type(p) is int), None)
        if index is not None:
            return f"{node}[{index}]"
    return node


# -- the buffered structure -------------------------------------------------------------


@dataclasses.dataclass
class _Task:
    node: str
    name: str
    step: int
    path_key: str
    triggers: tuple[str, ...]
    push_arg: Any = None
    items: list[Any] = dataclasses.field(default_factory=list)  # events, _Graph blocks
    calls: list[_Task] = dataclasses.field(default_factory=list)  # functional @task calls
    end: list[TraceEvent] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class _Graph:
    name: str
    steps: dict[int, list[_Task]] = dataclasses.field(default_factory=dict)
    tails: dict[int, list[TraceEvent]] = dataclasses.field(default_factory=dict)
    head: list[TraceEvent] = dataclasses.field(default_factory=list)
    foot: list[TraceEvent] = dataclasses.field(default_factory=list)
    nested: bool = False
    #: A root graph's tasks as GraphWatch._tasks holds them, forgotten when it ends.
    tasks: list[tuple[str, _Task]] = dataclasses.field(default_factory=list)

    def lines(self, depth: int) -> Iterable[TraceEvent]:
        for event in self.head:
            yield _deeper(event, depth)
        for step in sorted(set(self.steps) | set(self.tails)):
            tasks = sorted(self.steps.get(step, ()), key=lambda t: t.path_key)
            if tasks:
                names = "[" + ", ".join(t.name for t in tasks) + "]"
                yield TraceEvent(
                    kind="superstep.started",
                    name=str(step),
                    fields=(("tasks", names),),
                    depth=depth,
                )
            for task in tasks:
                yield from _task_lines(task, depth)
            for event in self.tails.get(step, ()):
                yield _deeper(event, depth)
        for event in self.foot:
            yield _deeper(event, depth)


def _deeper(event: TraceEvent, depth: int) -> TraceEvent:
    return event.model_copy(update={"depth": event.depth + depth}) if depth else event


def _task_lines(task: _Task, depth: int) -> Iterable[TraceEvent]:
    fields: list[tuple[str, str]] = []
    if task.triggers and task.triggers != ("__pregel_push",):
        fields.append(("triggers", "[" + ", ".join(task.triggers) + "]"))
    if task.push_arg is not None:
        fields.append(("arg", render_value(task.push_arg)))
    yield TraceEvent(kind="task.started", name=task.name, fields=tuple(fields), depth=depth)
    for item in task.items:
        if isinstance(item, _Graph):
            yield from item.lines(depth + 1)
        else:
            yield _deeper(item, depth)
    for call in sorted(task.calls, key=lambda t: t.path_key):
        yield from _task_lines(call, depth + 1)
    for event in task.end:
        yield _deeper(event, depth)


@dataclasses.dataclass
class _Run:
    """One callback run the handler saw (graphs, tasks, and what runs inside tasks)."""

    parent: _Run | None
    name: str
    ns: str | None  # the task namespace its metadata carries, if any
    task: _Task | None = None
    graph: _Graph | None = None
    router_of: _Task | None = None

    def root(self) -> _Run:
        run = self
        while run.parent is not None:
            run = run.parent
        return run

    def enclosing_task(self) -> _Task | None:
        run: _Run | None = self
        while run is not None:
            if run.task is not None:
                return run.task
            run = run.parent
        return None


class GraphWatch:
    """One test's view of every LangGraph run: stable names, known routers, and the
    root graph runs in flight (written to ``record`` when each ends)."""

    def __init__(self, record: Record) -> None:
        self.record = record
        self.names = Names()
        #: node name -> names of its conditional edges' path functions (from the graphs
        #: flows.run ran: a direct invocation's routers are known once one was)
        self.routers: dict[str, set[str]] = {}
        self._runs: dict[uuid.UUID, _Run] = {}
        #: root runs flows.run writes itself (with its checkpoints and final line)
        self.managed: dict[uuid.UUID, _Graph] = {}
        self._tasks: dict[str, _Task] = {}
        # the harness's bookkeeping: a switch point here is none in production (a
        # managed lock made each callback a choice point an exploration branched on)
        self._lock = internal_lock()
        self._seq = itertools.count()

    def learn_routers(self, graph: Any) -> None:
        """Note the path functions of ``graph``'s conditional edges (and its subgraphs')."""
        graphs = [graph]
        # (a graph whose subgraphs cannot be listed: its subgraphs' routers go unnamed)
        with contextlib.suppress(Exception):
            graphs.extend(sub for _, sub in graph.get_subgraphs(recurse=True))
        for each in graphs:
            builder = getattr(each, "builder", None)
            for node, branches in (getattr(builder, "branches", None) or {}).items():
                for key, branch in branches.items():
                    path = getattr(branch, "path", None)
                    names = self.routers.setdefault(str(node), set())
                    names.add(str(getattr(path, "name", None) or key))

    # -- flows.run's side ---------------------------------------------------------
    def manage(self, run_id: uuid.UUID, name: str) -> _Graph:
        graph = _Graph(name)
        with self._lock:
            self.managed[run_id] = graph
        return graph

    def release(self, run_id: uuid.UUID) -> None:
        with self._lock:
            graph = self.managed.pop(run_id, None)
            self._runs.pop(run_id, None)
            if graph is not None:
                self._forget(graph)

    def _forget(self, graph: _Graph) -> None:
        """The root ``graph`` ended: its tasks take no more lines (a later run of the
        same task, a resume, registered its own)."""
        for ns, task in graph.tasks:
            if self._tasks.get(ns) is task:
                del self._tasks[ns]
        graph.tasks.clear()

    def put(self, event: TraceEvent) -> None:
        """Record ``event`` in the task that is running now (its config says which),
        else straight away: what fakes say inside a node stays with that node."""
        task = self._current_task()
        if task is None:
            self.record(event)
            return
        with self._lock:
            task.items.append(event)

    def _current_task(self) -> _Task | None:
        # What ``langgraph.config.get_config()`` reads, read without the RuntimeError it
        # raises outside a graph run (most events a run records come from there)
        config = var_child_runnable_config.get()
        if not config:  # outside a graph run
            return None
        metadata = config.get("metadata") or {}
        ns = metadata.get("langgraph_checkpoint_ns")
        with self._lock:
            return self._tasks.get(str(ns)) if ns is not None else None

    # -- the callbacks --------------------------------------------------------------
    def started(
        self,
        run_id: uuid.UUID,
        parent_id: uuid.UUID | None,
        name: str,
        metadata: Mapping[str, Any],
        inputs: Any,
    ) -> None:
        with self._lock:
            parent = self._runs.get(parent_id) if parent_id is not None else None
            if parent_id is not None and parent is None:
                return  # inside something the handler does not follow
            ns = metadata.get("langgraph_checkpoint_ns")
            ns = None if ns is None else str(ns)
            run = _Run(parent=parent, name=name, ns=ns)
            self._runs[run_id] = run
            if parent is None:
                run.graph = self.managed.get(run_id) or _Graph(name)
                return
            if ns is not None and ns != parent.ns and "langgraph_node" in metadata:
                self._task_started(run, parent, metadata, inputs)
                return
            task = parent.task
            if task is not None and name in self.routers.get(task.node, ()):
                run.router_of = task

    def _task_started(
        self, run: _Run, parent: _Run, metadata: Mapping[str, Any], inputs: Any
    ) -> None:
        node = str(metadata["langgraph_node"])
        path = metadata.get("langgraph_path", ())
        task = _Task(
            node=node,
            name=task_name(node, path),
            step=int(metadata.get("langgraph_step", 0)),
            path_key=_path_key(path),
            triggers=tuple(str(t) for t in metadata.get("langgraph_triggers", ()) or ()),
            push_arg=inputs if task_name(node, path) != node and parent.task is None else None,
        )
        run.task = task
        self._tasks[str(run.ns)] = task
        root = run.root().graph
        if root is not None:
            root.tasks.append((str(run.ns), task))
        if parent.task is not None:  # a functional @task called from a running task
            parent.task.calls.append(task)
            return
        graph = parent.graph
        if graph is None:  # a subgraph: its graph run sits inside a task of its parent
            graph = parent.graph = _Graph(parent.name, nested=True)
            outer = parent.enclosing_task()
            if outer is not None:
                outer.items.append(graph)
        graph.steps.setdefault(task.step, []).append(task)

    def ended(self, run_id: uuid.UUID, outputs: Any) -> None:
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            if run.router_of is not None:
                fields = [("chose", _label(outputs))]
                run.router_of.items.append(
                    TraceEvent(
                        kind="router", name=run.router_of.name, fields=(("path", run.name), *fields)
                    )
                )
                run.router_of.items.extend(_send(s) for s in _sends(outputs))
            elif run.task is not None:
                run.task.end.append(self._finished(run.task, outputs))
            done = self._root_done(run_id, run)
        if done is not None:
            for event in done:
                self.record(event)

    def _finished(self, task: _Task, outputs: Any) -> TraceEvent:
        if isinstance(outputs, Command):
            return TraceEvent(kind="task.finished", name=task.name, fields=tuple(_command(outputs)))
        fields: list[tuple[str, str]] = [("writes", render_value(outputs))]
        sends = [s for s in _sends(outputs)]
        if sends:
            fields = [("sends", "[" + ", ".join(_label(s) for s in sends) + "]")]
        return TraceEvent(kind="task.finished", name=task.name, fields=tuple(fields))

    def failed(self, run_id: uuid.UUID, error: BaseException) -> None:
        with self._lock:
            run = self._runs.pop(run_id, None)
            if run is None:
                return
            task = run.task
            if task is not None:
                task.end.extend(self._task_failed(task, error))
            elif run.router_of is not None:
                run.router_of.items.append(
                    TraceEvent(
                        kind="router.failed",
                        name=run.router_of.name,
                        fields=(("path", run.name), ("error", _error(error))),
                    )
                )
            done = self._root_done(run_id, run)
        if done is not None:
            for event in done:
                self.record(event)

    def _task_failed(self, task: _Task, error: BaseException) -> list[TraceEvent]:
        if isinstance(error, GraphInterrupt):
            found = error.args[0] if error.args else ()
            interrupts = [i for i in found if isinstance(i, Interrupt)] if found else []
            events = [
                TraceEvent(
                    kind="interrupt",
                    name=task.name,
                    fields=(("id", self.names.interrupt(i.id)), ("value", render_value(i.value))),
                )
                for i in interrupts
            ]
            events.append(TraceEvent(kind="task.interrupted", name=task.name))
            return events
        if type(error).__name__ == "ParentCommand" and error.args:
            command = error.args[0]
            fields = _command(command) if isinstance(command, Command) else []
            return [TraceEvent(kind="task.finished", name=task.name, fields=tuple(fields))]
        return [TraceEvent(kind="task.failed", name=task.name, fields=(("error", _error(error)),))]

    def _root_done(self, run_id: uuid.UUID, run: _Run) -> list[TraceEvent] | None:
        """The lines of a root graph run that just ended, if nobody else writes them."""
        if run.parent is not None or run.graph is None or run_id in self.managed:
            return None
        graph = run.graph
        self._forget(graph)
        if not graph.steps:
            return None  # a chain that is not a graph (or a graph that ran no task)
        graph.head.insert(0, TraceEvent(kind="graph.started", name=graph.name))
        graph.foot.append(TraceEvent(kind="graph.finished", name=graph.name))
        return list(graph.lines(0))

    # -- checkpoints (from flows.run's stream) -----------------------------------
    def checkpoint(self, graph: _Graph, payload: Mapping[str, Any]) -> bool:
        """Add the line of a ``checkpoints`` stream event: ``checkpoint saved``, or
        ``checkpoint loaded`` for one this test saw before (a run continuing from it).
        Whether it is new."""
        config = payload.get("config") or {}
        metadata = payload.get("metadata") or {}
        parent = payload.get("parent_config") or {}
        with self._lock:
            raw = config.get("configurable", {}).get("checkpoint_id")
            new = not self.names.knows_checkpoint(raw)
            name = self.names.checkpoint(raw)
            parent_name = self.names.checkpoint(
                (parent.get("configurable") or {}).get("checkpoint_id")
            )
            step = int(metadata.get("step", -1))
            fields = [
                ("step", str(step)),
                ("source", str(metadata.get("source", "?"))),
                ("parent", parent_name),
            ]
            following = sorted(str(n) for n in payload.get("next") or ())
            if following:
                fields.append(("next", "[" + ", ".join(following) + "]"))
            kind = "checkpoint.saved" if new else "checkpoint.loaded"
            graph.tails.setdefault(step, []).append(
                TraceEvent(kind=kind, name=name, fields=tuple(fields))
            )
        return new


class Handler(BaseCallbackHandler):
    """langchain-core callbacks into a :class:`GraphWatch` (run inline: on the thread and
    in the context of the task that reports, so no executor hop reorders them)."""

    run_inline = True
    raise_error = False

    def __init__(self, watch: GraphWatch) -> None:
        self.watch = watch

    # Only chain runs make the trace (graphs, tasks, routers): the model, tool and
    # retriever events are not dispatched to this handler at all.
    @property
    def ignore_llm(self) -> bool:
        return True

    @property
    def ignore_chat_model(self) -> bool:
        return True

    @property
    def ignore_retriever(self) -> bool:
        return True

    @property
    def ignore_agent(self) -> bool:
        return True

    @property
    def ignore_retry(self) -> bool:
        return True

    @property
    def ignore_custom_event(self) -> bool:
        return True

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or "?"
        self.watch.started(run_id, parent_run_id, str(name), metadata or {}, inputs)

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.watch.ended(run_id, outputs)

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.watch.failed(run_id, error)
