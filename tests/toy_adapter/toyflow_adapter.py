"""The toyflow adapter: what a third framework's adapter needs, and nothing more.

It subclasses ``AdapterBase`` and implements ``accepts``, ``run``, the bind
hooks for every fake (``bind_llm``, ``bind_human``, ``bind_store``,
``bind_tools``, ``bind_crews``), ``resume_human``, ``golden`` (golden record and
replay), ``graph`` (``--flows-cov``) and ``seams``; its ``SPEC`` names its flight
recorder part (``toyflow_recorder.py``: the recorder and ``flows.replay``).
Registered by the tests with ``register_adapter``; no file of pytest_flows names
it, and it imports only ``pytest_flows.adapters``.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import itertools
import json
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import toyflow

from pytest_flows.adapters import (
    PAUSE,
    RUN_FOR_REAL,
    AdapterBase,
    AdapterSpec,
    Binding,
    FlowGraph,
    FlowRun,
    FlowsUsageError,
    GoldenBreak,
    Item,
    Link,
    Node,
    Outcome,
    RecorderPart,
    Registry,
    Request,
    Seam,
    SimulatedCrash,
    TraceEvent,
    check_offered,
    differences,
    is_pause,
    llm_call_event,
    note_started,
    plain,
    tool_calls_of,
    tools_summary,
)

SPEC = AdapterSpec(
    framework="toyflow",
    module="toyflow_adapter",
    extra="toyflow",
    describe="a toyflow Flow class or instance",
    recorder=RecorderPart(module="toyflow_recorder"),
)


@contextlib.contextmanager
def _configured(name: str, value: Any) -> Iterator[None]:
    previous = getattr(toyflow.config, name)
    setattr(toyflow.config, name, value)
    try:
        yield
    finally:
        setattr(toyflow.config, name, previous)


def _is_toy(target: object) -> bool:
    if isinstance(target, FlowRun):
        target = target.flow
    return isinstance(target, toyflow.Flow) or (
        isinstance(target, type) and issubclass(target, toyflow.Flow)
    )


class ToyAdapter(AdapterBase):
    name = "toyflow"

    def accepts(self, target: object) -> bool:
        return _is_toy(target) and not isinstance(target, FlowRun)

    async def run(
        self, session: Any, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> FlowRun:
        flow = target() if isinstance(target, type) else target
        note_started(self, type(flow).__name__, flow)
        return _traced(
            self.trace_sink(session),
            flow,
            lambda listen: flow.kickoff(kwargs.get("inputs"), listener=listen),
        )

    def golden(self) -> ToyGolden:
        return GOLDEN

    def graph(self, flow: Any) -> FlowGraph:
        cls = flow if isinstance(flow, type) else type(flow)
        steps = cls.steps()
        graph = FlowGraph(
            key=f"{cls.__module__}.{cls.__qualname__}", name=cls.__name__, framework="toyflow"
        )
        for n, step in enumerate(steps):
            graph.items.append(Item(f"method:{step}", "method", step))
            graph.nodes.append(Node(step, "start" if n == 0 else "listen", f"method:{step}"))
        graph.links.extend(Link(a, b) for a, b in itertools.pairwise(steps))
        return graph

    def seams(self) -> Sequence[object]:
        return tuple(SEAMS)

    def resume_human(
        self, session: Any, human: Any, paused: Any, feedback: str, outcome: str | None
    ) -> FlowRun:
        if not isinstance(paused, FlowRun) or not isinstance(
            paused.output, toyflow.PendingQuestion
        ):
            raise FlowsUsageError("human.resume(run): pass a toyflow run that paused.")
        flow = paused.flow
        human.trace("human.resumed", flow.current, paused.output.question, feedback, outcome)
        return _traced(self.trace_sink(session), flow, lambda _listen: flow.resume(feedback))

    # -- the fakes ---------------------------------------------------------------
    def bind_llm(self, session: Any, fake: Any) -> Binding:
        sink = self.trace_sink(session)

        def answer(flow: toyflow.Flow, prompt: str, tools: list[str]) -> Any:
            request = Request(
                caller={
                    "flow": type(flow).__name__,
                    "method": flow.current,
                    "purpose": "call",
                    "model": "toy-model",
                },
                prompt=prompt,
                messages=[{"role": "user", "content": prompt}],
                tools=tools,
                purpose="call",
            )
            exchange = fake.script.take(request)
            value = exchange.resolve()
            calls = tool_calls_of(value)
            if calls is not None:
                check_offered(exchange, calls, tools)
                request.data["tool_calls"] = calls
                exchange.reply = value
                sink(llm_call_event(request, (("tools", tools_summary(calls)),)))
                return {"tool": calls[0].name, "args": dict(calls[0].arguments)}
            exchange.reply = value
            sink(llm_call_event(request, (("reply", plain(value)),)))
            return str(value)

        fake.handles["toyflow"] = lambda model: types.SimpleNamespace(model=model, answer=answer)
        return _configured("llm", answer)

    def bind_human(self, session: Any, fake: Any) -> Binding:
        def ask(flow: toyflow.Flow, question: str) -> str:
            request = fake.request(type(flow).__name__, "ask", flow.current, question, {})
            exchange = fake.take(request)
            value = fake.resolve(exchange)
            if is_pause(value):
                exchange.reply = PAUSE
                fake.trace("human.ask", flow.current, question, None, None, paused=True)
                raise toyflow.Paused(question)
            fake.wait(value.after)
            exchange.reply = value.text
            fake.trace("human.ask", flow.current, question, value.text, None)
            return str(value.text)

        return _configured("human", ask)

    def bind_store(self, session: Any, store: Any) -> Binding:
        backend = ToyStoreBackend(store, session)
        store.register_backend(backend)
        return _configured("persistence", backend)

    def bind_tools(self, session: Any, fake: Any) -> Binding:
        def run_tool(flow: toyflow.Flow, name: str, function: Any, args: dict[str, Any]) -> Any:
            where = {"flow": type(flow).__name__, "method": flow.current}
            tool = types.SimpleNamespace(name=name)
            return fake.call(tool, (), dict(args), lambda: function(**args), where)

        return _configured("tool_runner", run_tool)

    def bind_crews(self, session: Any, fake: Any) -> Binding:
        def run_crew(flow: toyflow.Flow, crew: toyflow.Crew, inputs: dict[str, Any]) -> str:
            request = Request(
                caller={
                    "flow": type(flow).__name__,
                    "method": flow.current,
                    "kind": "crew",
                    "crew": crew.name,
                    "agent": list(crew.roles),
                    "inputs": dict(inputs),
                },
                prompt=json.dumps(inputs, sort_keys=True),
                purpose="crew",
                data={"inputs": dict(inputs)},
            )
            exchange, value = fake.take(request)
            if value is RUN_FOR_REAL:
                value = crew.work(inputs)
            fake.wait(exchange)
            exchange.reply = value
            fake.record(request, (("output", plain(value)),))
            return str(value)

        return _configured("crew_runner", run_crew)


def _traced(sink: Any, flow: toyflow.Flow, go: Any) -> FlowRun:
    name = type(flow).__name__

    def listen(what: str, step: str, value: Any) -> None:
        fields = () if what == "started" else (("value", plain(value)),)
        sink(TraceEvent(kind=f"method.{what}", name=step, fields=fields))

    run = FlowRun(flow=flow)
    sink(TraceEvent(kind="flow.started", name=name))
    try:
        run.output = go(listen)
    except Exception as exc:
        run.error = exc
    run.state = copy.deepcopy(flow.state)
    run.method_outputs = list(flow.outputs)
    sink(TraceEvent(kind="flow.finished", name=name))
    return run


class ToyStoreBackend:
    """toyflow's persistence, routed into flow_store (JSON, as the framework's own)."""

    framework = "toyflow"

    def __init__(self, store: Any, session: Any) -> None:
        self.store = store
        self.session = session

    def save(self, state_id: str, step: str, state: dict[str, Any]) -> None:
        raw = json.dumps(state)
        self.store.append_save(
            state_id,
            step,
            raw,
            framework="toyflow",
            value=copy.deepcopy(state),
            lossy=differences(state, json.loads(raw)),
        )

    def load(self, state_id: str) -> dict[str, Any] | None:
        latest = self.store.latest(state_id)
        return None if latest is None else latest.snapshot

    def accepts(self, target: object) -> bool:
        return _is_toy(target)

    def round_trip(self, state: Any) -> list[Any]:
        return differences(state, json.loads(json.dumps(state)))

    def state_id(self, state: Any) -> str | None:
        return state.get("id") if isinstance(state, dict) else None

    def operations(self, flows: Any) -> ToyOperations:
        return ToyOperations(flows, self.store)


class ToyOperations:
    """Crash and resume for the state properties (no checkpoints or forks in toyflow)."""

    def __init__(self, flows: Any, store: Any) -> None:
        self.flows = flows
        self.store = store

    def describe(self, flow: Any) -> str:
        return str(getattr(flow, "__qualname__", flow))

    def _run(self, flow: Any, inputs: dict[str, Any] | None) -> FlowRun:
        run: FlowRun = contextvars.copy_context().run(
            self.flows.run, flow, inputs=copy.deepcopy(inputs), raise_on_error=False
        )
        return run

    def _outcome(self, run: FlowRun) -> Outcome:
        return Outcome(
            state=dict(run.state),
            typed_state=copy.deepcopy(run.state),
            output=run.output,
            trace=run.trace,
            state_id=run.state.get("id"),
            error=run.error,
        )

    def run(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome:
        return self._outcome(self._run(flow, inputs))

    def crash(self, flow: Any, inputs: dict[str, Any] | None, point: Any) -> str | None:
        with self.store.crash_at(point):
            try:
                self._run(flow, inputs)
            except SimulatedCrash as crash:
                return crash.state_id
        return None

    def resume(self, flow: Any, inputs: dict[str, Any] | None, state_id: str) -> Outcome:
        return self._outcome(self._run(flow, {**(inputs or {}), "id": state_id}))

    def _unsupported(self, *_: Any) -> Any:
        raise FlowsUsageError("toyflow has no forks or checkpoints")

    fork = run_with_checkpoints = restore = new_id = _unsupported


class ToyGolden:
    """Golden record and replay of toyflow runs: the run's steps are its topology (the
    core compares trace and output; toyflow keeps no state to restore and resume)."""

    framework = "toyflow"
    run_keys: ClassVar[Mapping[str, type]] = {"steps": list}
    #: toyflow's fields with a secret-looking name that hold no credential: none
    framework_fields: Mapping[str, str] = {}

    def accepts(self, run: FlowRun) -> bool:
        return _is_toy(run.flow)

    def capture(
        self, session: Any, run: FlowRun, kwargs: dict[str, Any], seen: set[str]
    ) -> dict[str, Any]:
        return {"flow": type(run.flow).__qualname__, "steps": type(run.flow).steps()}

    def replay(
        self, session: Any, recorded: dict[str, Any], scripted: Any, today: Any
    ) -> list[dict[str, Any]]:
        return []

    def check(
        self, session: Any, recorded: dict[str, Any], where: str, today: Any
    ) -> list[GoldenBreak]:
        if today is None or recorded["steps"] == type(today).steps():
            return []
        return [
            GoldenBreak(
                "topology",
                where,
                "the flow's steps changed",
                f"- {recorded['steps']}\n+ {type(today).steps()}",
            )
        ]


GOLDEN = ToyGolden()

#: What the recorder part (toyflow_recorder.py) replaces: declared, so a toyflow release
#: that moved one fails the seam check instead of a recording.
SEAMS = Registry(
    "toyflow",
    __name__,
    Seam("toyflow:Flow.kickoff", "patch", "records a run: its start, steps and end"),
    Seam("toyflow:Flow.llm", "patch", "records each model request and its reply"),
    Seam("toyflow:Flow.ask", "patch", "records each human answer"),
    Seam("toyflow:Flow.tool", "patch", "records each tool call"),
)

ADAPTER = ToyAdapter()
