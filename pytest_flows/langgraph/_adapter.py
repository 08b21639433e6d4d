"""Runs LangGraph graphs under the harness.

``flows.run(graph, inputs, config=...)`` runs a compiled graph (a ``StateGraph``
compiled, or an ``@entrypoint``), or a ``StateGraph`` builder compiled for the run, on
a copy of the graph whose checkpointer is the test's (``flow_store``'s saver when that
fixture is requested, else one ``InMemorySaver`` per test): the user's graph object
is never changed. It returns a :class:`GraphRun` with the final values, the pending
interrupts, the status, the checkpoints written and the superstep trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command

from pytest_flows.adapters import (
    AdapterBase,
    Binding,
    FlowRun,
    FlowsUsageError,
    TraceEvent,
    note_started,
    render_value,
    replaced,
)
from pytest_flows.langgraph import _ids
from pytest_flows.langgraph._run import (
    GraphRun,
    call_of,
    status_of,
)
from pytest_flows.langgraph._tracing import GraphWatch, Handler, current_handler, install_hook

if TYPE_CHECKING:
    from pytest_flows.adapters import (
        FakeTools,
        FlowGraph,
        FlowsSession,
        FlowStore,
        LLMScript,
        ScriptedHuman,
    )

__all__ = ["ADAPTER", "LangGraphAdapter"]

#: How many times one flows.run answers pending interrupts before it stops, saying so
#: (a graph that asks again after every answer would otherwise never return).
MAX_RESUMES = 100


@dataclasses.dataclass
class _Fakes:
    """What one session binds, as this adapter uses it."""

    checkpointer: Any = None  # flow_store's saver (i40c's _persistence), if bound
    human: Any = None
    own_saver: Any = None  # the test's InMemorySaver, made on first use
    watch: GraphWatch | None = None
    threads: int = 0


class LangGraphAdapter(AdapterBase):
    name = "langgraph"

    def __init__(self) -> None:
        self._fakes: weakref.WeakKeyDictionary[FlowsSession, _Fakes] = weakref.WeakKeyDictionary()

    def configure(self) -> None:
        install_hook()

    def accepts(self, target: object) -> bool:
        if isinstance(target, GraphRun):
            return False
        return isinstance(target, Pregel | StateGraph) or _is_remote(target)

    def fakes(self, session: FlowsSession) -> _Fakes:
        fakes = self._fakes.get(session)
        if fakes is None:
            fakes = self._fakes[session] = _Fakes()
        return fakes

    def watch(self, session: FlowsSession) -> GraphWatch:
        fakes = self.fakes(session)
        if fakes.watch is None:
            fakes.watch = GraphWatch(session.record)
        return fakes.watch

    def trace_sink(self, session: FlowsSession) -> Callable[[TraceEvent], None]:
        """Lines recorded here inside a node (a fake's model call) join that node's block
        of the trace; anywhere else they are recorded at once."""
        return self.watch(session).put

    @contextlib.contextmanager
    def activate(self, session: FlowsSession) -> Iterator[None]:
        watch = self.watch(session)
        token = current_handler.set(Handler(watch))
        try:
            with _ids.deterministic_ids(f"{session.test_id}:{session.seed}"):
                yield
        finally:
            with contextlib.suppress(ValueError):  # set in another context: leave it
                current_handler.reset(token)
            self._fakes.pop(session, None)

    # -- the fakes ----------------------------------------------------------------
    # The model, tool and store parts live in modules of their own (_llm, _tools,
    # _persistence); until they are there, the fixtures bind nothing for LangGraph.
    def bind_llm(self, session: FlowsSession, fake: LLMScript) -> Binding:
        bind = _part("_llm", "bind_llm")
        return None if bind is None else bind(session, fake)

    def bind_tools(self, session: FlowsSession, fake: FakeTools) -> Binding:
        bind = _part("_tools", "bind_tools")
        return None if bind is None else bind(session, fake)

    def bind_store(self, session: FlowsSession, store: FlowStore) -> Binding:
        store_saver = _part("_persistence", "store_saver")
        if store_saver is None:
            return None
        return replaced(self.fakes(session), "checkpointer", store_saver(store, session))

    def bind_human(self, session: FlowsSession, fake: ScriptedHuman) -> Binding:
        return replaced(self.fakes(session), "human", fake)

    def resume_human(
        self,
        session: FlowsSession | None,
        human: ScriptedHuman,
        paused: Any,
        feedback: str,
        outcome: str | None,
    ) -> FlowRun:
        if session is None or not isinstance(paused, GraphRun):
            raise FlowsUsageError(
                "human.resume(run, answer) for a LangGraph graph takes the GraphRun that "
                "flows.run() returned, inside the test that ran it."
            )
        if not paused.pending:
            raise FlowsUsageError(
                f"human.resume(run, {feedback!r}): the run is not waiting on an interrupt "
                f"(status {paused.status!r}); nothing to resume."
            )
        return session.run(
            paused.flow, Command(resume=feedback), config=paused.config, raise_on_error=False
        )

    def graph(self, flow: Any) -> FlowGraph:
        from pytest_flows.langgraph._graph import coverage_graph

        return coverage_graph(flow)

    def seams(self) -> Sequence[object]:
        from pytest_flows.langgraph._seams import RECORDER_SEAMS, SEAMS

        return (*SEAMS, *RECORDER_SEAMS)

    def golden(self) -> Any:
        from pytest_flows.langgraph._golden import ADAPTER as GOLDEN

        return GOLDEN

    # -- running ------------------------------------------------------------------
    def checkpointer(self, session: FlowsSession) -> Any:
        """The saver every run of this test uses: flow_store's, else the test's own."""
        fakes = self.fakes(session)
        if fakes.checkpointer is not None:
            return fakes.checkpointer
        if fakes.own_saver is None:
            fakes.own_saver = InMemorySaver()
        return fakes.own_saver

    def _graph_for(self, session: FlowsSession, target: Any) -> Any:
        if _is_remote(target):
            raise FlowsUsageError(
                f"flows.run() got a RemoteGraph ({getattr(target, 'assistant_id', '?')!r}): it "
                "runs on a LangGraph server over the network, which a test cannot make "
                "deterministic. Run the graph itself: import the compiled graph (or its "
                "StateGraph builder) the server deploys and pass that to flows.run()."
            )
        if isinstance(target, StateGraph):
            return target.compile(checkpointer=self.checkpointer(session))
        if target.checkpointer is False:
            return target  # persistence switched off on purpose: runs as it would
        saver = self.checkpointer(session)
        serving = getattr(saver, "serving", None)  # flow_store's: with the graph's serializer
        if callable(serving):
            saver = serving(target.checkpointer)
        return target.copy(update={"checkpointer": saver})

    async def run(
        self, session: FlowsSession, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> GraphRun:
        graph = self._graph_for(session, target)
        fakes = self.fakes(session)
        call = call_of(graph, args, kwargs)
        if "thread_id" not in (call.config.get("configurable") or {}):
            if call.continues:
                raise FlowsUsageError(
                    f"flows.run(<graph {graph.name!r}>, {call.input_text}) continues a thread "
                    "but names none: pass the config of the run it continues, "
                    "flows.run(graph, Command(resume=...), config=run.config)."
                )
            fakes.threads += 1
            configurable = {**(call.config.get("configurable") or {})}
            configurable["thread_id"] = f"thread-{fakes.threads}"
            call.config = {**call.config, "configurable": configurable}
        watch = self.watch(session)
        watch.learn_routers(graph)
        _stored_ids_first(graph, call.config)
        run = GraphRun(flow=target, graph=graph, config=_thread_config(call.config))
        sink = self.trace_sink(session)
        note_started(self, graph.name, target)
        fields = [("input", call.input_text), ("thread", str(call.thread_id))]
        sink(TraceEvent(kind="graph.started", name=graph.name, fields=tuple(fields)))
        given: Any = call.input
        final: list[Any] = []  # the final state, when _human_answers read it and asked nobody
        try:
            for _ in range(MAX_RESUMES):
                await _stream(graph, given, call, watch, run, sink)
                answers = _human_answers(session, fakes, graph, run, final)
                if answers is None:
                    break
                given, line = answers
                sink(line)
            else:
                raise FlowsUsageError(
                    f"flows.run(<graph {graph.name!r}>): the human answered {MAX_RESUMES} "
                    "interrupts in a row and the graph still asks; script a pause "
                    "(human.pause()) or fewer answers."
                )
        except FlowsUsageError:
            raise
        except Exception as exc:
            run.error = exc
        _finish(graph, run, watch, sink, *final)
        return run


async def _stream(
    graph: Any, given: Any, call: Any, watch: GraphWatch, run: GraphRun, sink: Any
) -> None:
    import uuid

    run_id = uuid.uuid4()  # seeded per test (the harness's uuid4)
    root = watch.manage(run_id, graph.name)
    config = {**call.config, "run_id": run_id}
    own = ["updates", "values", "checkpoints"]
    options = {**call.options, "stream_mode": own + [m for m in call.stream_mode if m not in own]}
    run.interrupts = []

    def take(chunk: Any) -> None:
        mode, payload = chunk
        if mode in call.stream_mode:  # the caller's modes (messages: the models stream)
            run.streamed.append((mode, payload))
        if mode == "checkpoints":
            if watch.checkpoint(root, payload):
                run.checkpoints.append(str(payload["config"]["configurable"]["checkpoint_id"]))
        elif mode == "values":
            run.values = payload
        elif mode == "updates" and isinstance(payload, Mapping):
            found = payload.get("__interrupt__")
            if found is not None:
                run.interrupts.extend(found)

    try:
        # only while a graph runs: other frameworks keep the pool lock they had
        with _managed_pool_lock(), _ordered_pool_joins():
            await _drive(graph, given, config, options, call.asynchronous, take)
    finally:
        with watch._lock:
            lines = list(root.lines(0))
        watch.release(run_id)
        for line in lines:
            sink(line)


async def _drive(
    graph: Any, given: Any, config: Any, options: Any, asynchronous: bool, take: Any
) -> None:
    if asynchronous:
        async for chunk in graph.astream(given, config, **options):
            take(chunk)
    else:
        import asyncio

        def drive() -> None:
            for chunk in graph.stream(given, config, **options):
                take(chunk)

        await asyncio.to_thread(drive)


def _human_answers(
    session: FlowsSession, fakes: _Fakes, graph: Any, run: GraphRun, final: list[Any]
) -> tuple[Any, TraceEvent] | None:
    """The input that continues the run with the human's answers, or None (stop here).

    A state that waits on nothing is the run's final one: it goes into ``final``, so that
    ``_finish`` does not read it again (a human asked might have changed it: not kept)."""
    if fakes.human is None or graph.checkpointer in (None, False):
        return None
    from pytest_flows.langgraph._human import answer_pending, pending_interrupts

    state = graph.get_state(run.config)
    pending = pending_interrupts(graph, state)
    watch = fakes.watch
    names = watch.names if watch is not None else _ids.Names()
    if pending:
        answers = answer_pending(fakes.human, graph, pending, session.clock)
        if not answers:
            return None
        listed = "[" + ", ".join(names.interrupt(i) for i in answers) + "]"
        line = TraceEvent(kind="graph.resumed", name=graph.name, fields=(("answers", listed),))
        return Command(resume=answers), line
    if state.next:
        from pytest_flows.langgraph._human import answer_breakpoint

        if not answer_breakpoint(fakes.human, graph, state):
            return None
        nodes = "[" + ", ".join(sorted(state.next)) + "]"
        line = TraceEvent(kind="graph.resumed", name=graph.name, fields=(("breakpoint", nodes),))
        return None, line
    final.append(state)
    return None


def _finish(graph: Any, run: GraphRun, watch: GraphWatch, sink: Any, state: Any = None) -> None:
    """The run's final values, status and last line; ``state`` the final state if it was
    read already (else it is read here)."""
    if state is None and graph.checkpointer not in (None, False):
        try:
            state = graph.get_state(run.config)
        except Exception:  # the saver itself failed: the run's error says why
            state = None
    run.snapshot = state
    if state is not None:
        run.values = state.values
        run.next = tuple(state.next)
        from pytest_flows.langgraph._human import pending_interrupts

        run.pending = pending_interrupts(graph, state)
    run.status = status_of(run)
    run.output = run.values
    run.state = run.values
    run.checkpoint_names = [watch.names.checkpoint(c) for c in run.checkpoints]
    run.interrupt_names = {watch.names.interrupt(p.id): p.id for p in run.pending}
    if run.error is not None:
        fields: tuple[tuple[str, str], ...] = (
            ("error", render_value(f"{type(run.error).__name__}: {run.error}")),
        )
        sink(TraceEvent(kind="graph.failed", name=graph.name, fields=fields))
    elif run.status == "interrupted":
        waiting = [watch.names.interrupt(p.id) + "@" + p.node for p in run.pending]
        fields = (("next", "[" + ", ".join(sorted(run.next)) + "]"),)
        if waiting:
            fields = (*fields, ("pending", "[" + ", ".join(waiting) + "]"))
        sink(TraceEvent(kind="graph.interrupted", name=graph.name, fields=fields))
    else:
        sink(
            TraceEvent(
                kind="graph.finished",
                name=graph.name,
                fields=(("values", render_value(run.values)),),
            )
        )
    run.extras.update(
        status=run.status,
        checkpoints=run.checkpoints,
        pending=run.pending,
        thread_id=run.thread_id,
    )


def _part(module: str, name: str) -> Any:
    """``name`` from the adapter's module ``module``, or None if that part is absent."""
    import importlib

    qualified = f"{__package__}.{module}"
    try:
        found = importlib.import_module(qualified)
    except ModuleNotFoundError as exc:
        if exc.name != qualified:
            raise
        return None
    return getattr(found, name)


def _thread_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config that continues this run's thread (its configurable keys only)."""
    configurable = dict(config.get("configurable") or {})
    configurable.pop("checkpoint_id", None)
    return {"configurable": configurable}


def _stored_ids_first(graph: Any, config: Mapping[str, Any]) -> None:
    """New checkpoint ids sort after the thread's stored ones (see ``_ids.ids_after``)."""
    saver = graph.checkpointer
    if saver in (None, False):
        return
    try:
        latest = saver.get_tuple({"configurable": dict(config.get("configurable") or {})})
    except Exception:  # an async-only saver, or none stored: nothing to follow
        return
    if latest is not None:
        _ids.ids_after([str(latest.config["configurable"].get("checkpoint_id"))])


def _managed_pool_lock() -> contextlib.AbstractContextManager[None]:
    """``concurrent.futures``' module-wide submit lock, made during the test (so the
    scheduler manages it) for the test's length.

    LangGraph submits to its pool from the pool's own workers (a finished task's writes
    are saved from its done-callback); ``submit`` starts a worker thread (a switch
    point) while holding this lock, made at import and so unmanaged: a worker that
    submits meanwhile would block outside the scheduler until its grace ran out.
    """
    from pytest_flows.langgraph._explore_pool import QuietLock
    from pytest_flows.langgraph._seams import SEAMS

    # quiet: taking it free is no switch point (see _explore_pool)
    return SEAMS[POOL_LOCK].replace(QuietLock())


POOL_LOCK = "concurrent.futures.thread:_global_shutdown_lock"


def _ordered_pool_joins() -> contextlib.AbstractContextManager[None]:
    """Pools join their workers in start order; store ops are switch points and
    recorded accesses (see ``_explore``)."""
    from pytest_flows.langgraph._explore import exploration_seams

    return exploration_seams()


def _is_remote(target: object) -> bool:
    try:
        from langgraph.pregel.remote import RemoteGraph
    except ImportError:  # the SDK is optional
        return False
    return isinstance(target, RemoteGraph)


ADAPTER = LangGraphAdapter()
