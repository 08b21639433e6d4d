"""What ``flows.run(graph, ...)`` takes and what it returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from langgraph.types import Command

from pytest_flows.adapters import FlowRun, FlowsUsageError, render_value

__all__ = ["Call", "GraphRun", "PendingInterrupt", "call_of", "status_of"]

#: ``Pregel.stream``'s own keyword arguments that flows.run passes on.
STREAM_OPTIONS = (
    "context",
    "durability",
    "interrupt_before",
    "interrupt_after",
    "output_keys",
)
_KNOWN = ("input", "inputs", "config", "asynchronous", "stream_mode", *STREAM_OPTIONS)
#: LangGraph's stream modes (``langgraph.types.StreamMode``).
STREAM_MODES = ("values", "updates", "checkpoints", "tasks", "debug", "messages", "custom")


@dataclasses.dataclass(frozen=True)
class PendingInterrupt:
    """An ``interrupt()`` the graph waits on: its ``id`` (the key of
    ``Command(resume={id: answer})``), the ``value`` it showed, the ``node`` that asked."""

    id: str
    value: Any
    node: str
    interrupt: Any = dataclasses.field(repr=False, compare=False, default=None)

    @classmethod
    def all_of(cls, state: Any) -> list[PendingInterrupt]:
        """Every interrupt ``state`` (a ``StateSnapshot``) waits on, in LangGraph's order
        (by task), with the node that raised it."""
        found: list[PendingInterrupt] = []
        seen: set[str] = set()
        for task in getattr(state, "tasks", ()) or ():
            for interrupt in getattr(task, "interrupts", ()) or ():
                if interrupt.id not in seen:
                    seen.add(interrupt.id)
                    found.append(cls(str(interrupt.id), interrupt.value, str(task.name), interrupt))
        for interrupt in getattr(state, "interrupts", ()) or ():
            if interrupt.id not in seen:
                seen.add(interrupt.id)
                found.append(cls(str(interrupt.id), interrupt.value, "?", interrupt))
        return found


@dataclasses.dataclass(repr=False)
class GraphRun(FlowRun):
    """What one ``flows.run(graph, ...)`` produced.

    ``values`` (also ``output`` and ``state``) is the graph's final state, as
    ``get_state(config).values`` reads it; ``interrupts`` the ``Interrupt`` s the last
    stream reported, as ``invoke`` returns them under ``"__interrupt__"`` (in the order
    they happened to complete: the seed decides it); ``pending`` the interrupts still
    waiting, in LangGraph's stable order; ``status`` ``"finished"``, ``"interrupted"``
    (pending interrupts or a static breakpoint: ``next`` says where) or ``"failed"``;
    ``checkpoints`` the ids written during this run, in order (``checkpoint_names``:
    the trace's ``c1``, ``c2``...); ``config`` continues the thread
    (``flows.run(graph, Command(resume=...), config=run.config)``); ``graph`` is the copy
    that ran (``run.graph.get_state(run.config)``, ``get_state_history``...);
    ``streamed`` the ``(mode, part)`` pairs of the modes ``stream_mode=`` asked for, in
    the order the stream gave them.
    """

    graph: Any = None
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    values: Any = None
    interrupts: list[Any] = dataclasses.field(default_factory=list)
    pending: list[PendingInterrupt] = dataclasses.field(default_factory=list)
    status: str = ""
    next: tuple[str, ...] = ()
    checkpoints: list[str] = dataclasses.field(default_factory=list)
    checkpoint_names: list[str] = dataclasses.field(default_factory=list)
    interrupt_names: dict[str, str] = dataclasses.field(default_factory=dict)
    snapshot: Any = None
    streamed: list[tuple[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def thread_id(self) -> str | None:
        value = (self.config.get("configurable") or {}).get("thread_id")
        return None if value is None else str(value)

    @property
    def last_checkpoint(self) -> str | None:
        return self.checkpoints[-1] if self.checkpoints else None

    @property
    def result(self) -> Any:
        """What ``graph.invoke`` would have returned: the values, with ``"__interrupt__"``
        when the graph stopped on interrupts."""
        if self.interrupts:
            if isinstance(self.values, dict):
                return {**self.values, "__interrupt__": list(self.interrupts)}
            return {"__interrupt__": list(self.interrupts)}
        return self.values

    def interrupt(self, name_or_id: str | None = None) -> PendingInterrupt:
        """The pending interrupt with this id or trace name (``"i1"``), or the only one."""
        if name_or_id is None:
            if len(self.pending) != 1:
                raise LookupError(
                    f"run.interrupt() without an id needs exactly one pending interrupt, there "
                    f"are {len(self.pending)}: {[p.id for p in self.pending]}"
                )
            return self.pending[0]
        wanted = self.interrupt_names.get(name_or_id, name_or_id)
        for pending in self.pending:
            if pending.id == wanted:
                return pending
        raise LookupError(
            f"no pending interrupt {name_or_id!r}; pending: "
            f"{[p.id for p in self.pending]} ({', '.join(self.interrupt_names) or 'none'})"
        )

    def get_state(self) -> Any:
        """``graph.get_state(config)`` of the copy that ran, on this run's thread."""
        return self.graph.get_state(self.config)

    def __repr__(self) -> str:
        status = f"failed={type(self.error).__name__}" if self.error else f"status={self.status}"
        name = getattr(self.graph, "name", None) or "graph"
        return (
            f"<GraphRun {name} {status} thread={self.thread_id} pending={len(self.pending)} "
            f"checkpoints={len(self.checkpoints)} events={len(self.trace)}>"
        )


@dataclasses.dataclass
class Call:
    input: Any
    config: dict[str, Any]
    options: dict[str, Any]
    asynchronous: bool
    stream_mode: tuple[str, ...] = ()  # the caller's, streamed beside the harness's own

    @property
    def continues(self) -> bool:
        """Whether the input continues a thread (a Command, or None) rather than starts one."""
        return self.input is None or isinstance(self.input, Command)

    @property
    def thread_id(self) -> Any:
        return (self.config.get("configurable") or {}).get("thread_id")

    @property
    def input_text(self) -> str:
        if isinstance(self.input, Command):
            parts = []
            if self.input.resume is not None:
                parts.append(f"resume={render_value(self.input.resume)}")
            if self.input.update is not None:
                parts.append(f"update={render_value(self.input.update)}")
            if self.input.goto:
                parts.append(f"goto={render_value(self.input.goto)}")
            return "Command(" + ", ".join(parts) + ")"
        return render_value(self.input)


def call_of(graph: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Call:
    """``flows.run``'s arguments for a graph, checked."""
    name = getattr(graph, "name", "graph")
    if len(args) > 1:
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>, ...) takes at most one positional argument, the "
            f"graph's input; got {len(args)}. Pass the others by keyword "
            f"({', '.join(_KNOWN[1:])})."
        )
    unknown = sorted(set(kwargs) - set(_KNOWN))
    if unknown:
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>, ...) got unknown keyword argument(s) "
            f"{', '.join(unknown)}; it takes the input (positionally, or inputs=...), "
            f"config=..., asynchronous=True (astream) and stream's own "
            f"{', '.join(STREAM_OPTIONS)} (plus raise_on_error=False)."
        )
    given = [k for k in ("input", "inputs") if k in kwargs]
    if len(given) + len(args) > 1:
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>, ...) got the input more than once "
            f"({', '.join(['positionally'] * len(args) + list(given))}); pass it once."
        )
    value = args[0] if args else kwargs.get(given[0]) if given else None
    if not args and not given:
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>) needs the graph's input: flows.run(graph, "
            '{"messages": [...]}) to start, or Command(resume=...) / None with '
            "config=run.config to continue a thread."
        )
    config = kwargs.get("config") or {}
    if not isinstance(config, Mapping):
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>, config={config!r}): config is a RunnableConfig "
            'mapping, e.g. config={"configurable": {"thread_id": "1"}}.'
        )
    asynchronous = kwargs.get("asynchronous", False)
    if not isinstance(asynchronous, bool):
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>, asynchronous={asynchronous!r}): True drives the "
            "graph with astream (async nodes), False (the default) with stream."
        )
    options = {k: kwargs[k] for k in STREAM_OPTIONS if k in kwargs}
    modes = kwargs.get("stream_mode") or ()
    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    if any(mode not in STREAM_MODES for mode in modes):
        raise FlowsUsageError(
            f"flows.run(<graph {name!r}>, stream_mode={kwargs['stream_mode']!r}): each mode is "
            f"one of LangGraph's {', '.join(STREAM_MODES)} (a name or a list of them)."
        )
    return Call(value, dict(config), options, asynchronous, modes)


def status_of(run: GraphRun) -> str:
    if run.error is not None:
        return "failed"
    if run.pending or run.next:
        return "interrupted"
    return "finished"
