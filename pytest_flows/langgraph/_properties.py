"""Persistence properties of a LangGraph graph, checked on the flows checkpointer.

* crash and resume: crash a run right after (or just before) its k-th durable write
  (a ``put`` or a ``put_writes``), restart (``stream(None, {thread_id})``, or the
  inputs again when nothing was durable) and answer the interrupts it still asks:
  the thread ends as the uninterrupted run did;
* time travel: run from any checkpoint of a finished thread
  (``stream(None, {thread_id, checkpoint_id})``): the new branch ends as the run
  did, and runs the same nodes as the run did after that checkpoint;
* fork isolation: ``update_state(checkpoint, values, as_node=...)`` starts a branch
  whose parent is that checkpoint and which keeps every other value; running the
  branch changes no stored record of the original branch or of another thread.

Each runs under a ``durability`` (``"sync"``, ``"async"``, ``"exit"``). A
``check_*`` draws its case with Hypothesis (a failure shrinks to the first crash
point or checkpoint that breaks and prints the ``assert_*`` call that reproduces
it). A failure a known LangGraph bug explains names the upstream issue.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, get_args

from hypothesis import given, note, settings
from hypothesis import strategies as st
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command

from pytest_flows.adapters import (
    CrashPoint,
    FlowStore,
    FlowsUsageError,
    SimulatedCrash,
    StateSave,
    differences,
)
from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver, state_key
from pytest_flows.langgraph._persistence import store_saver

__all__ = [
    "UPSTREAM_BUGS",
    "Durability",
    "GraphCase",
    "ThreadRun",
    "assert_crash_resume",
    "assert_fork_isolated",
    "assert_time_travel",
    "check_crash_resume",
    "check_fork_isolation",
    "check_time_travel",
    "crash_points",
    "flows_runner",
]

Durability = Literal["sync", "async", "exit"]
DURABILITIES: tuple[str, ...] = get_args(Durability)

#: LangGraph issues a property can hit, with what they look like here.
UPSTREAM_BUGS: dict[str, str] = {
    "langgraph#8039": (
        "durability='sync' does not order put_writes before the next put: after a crash a "
        "node re-runs or not depending on which write landed"
    ),
    "langgraph#8458": (
        "time travel to a checkpoint inside a subgraph re-runs the subgraph from __start__"
    ),
    "langgraph#7361": (
        "resuming an interrupt from a given checkpoint_id replays the node instead of resuming"
    ),
}

Answers = Sequence[Any] | Mapping[str, Any] | Callable[[Any], Any] | None
Graph = Pregel[Any, Any, Any, Any]
Runner = Callable[[Graph, Any, RunnableConfig, str], Any]


def _invoke(graph: Graph, value: Any, config: RunnableConfig, durability: str) -> Any:
    return graph.invoke(value, config, durability=durability)  # type: ignore[call-overload]


def flows_runner(flows: Any) -> Runner:
    """A :class:`GraphCase` runner driving each call through ``flows.run`` (the harness's
    scheduler and trace; with ``flow_store``, its saver is the case's)."""

    def run(graph: Graph, value: Any, config: RunnableConfig, durability: str) -> Any:
        result = flows.run(graph, value, config=config, durability=durability)
        if result.error is not None:
            raise result.error
        return result.result

    return run


@dataclasses.dataclass
class ThreadRun:
    """How one thread ended: its values, next nodes, pending interrupts' values."""

    thread_id: str
    values: Any
    next: tuple[str, ...]
    interrupts: list[Any]
    output: Any = None
    error: BaseException | None = None
    crashed: SimulatedCrash | None = None
    #: the durable writes this run made (saves in ``flow_store.history(thread)``)
    saves: list[StateSave] = dataclasses.field(default_factory=list)

    def comparable(self) -> dict[str, Any]:
        return {"values": self.values, "next": list(self.next), "interrupts": self.interrupts}


class GraphCase:
    """One graph, its inputs and answers, run on fresh threads of one flows saver.

    ``graph`` is a compiled graph (copied with the saver, never changed), a
    ``StateGraph`` builder (compiled with it) or a zero-argument factory of either.
    ``answers`` answer ``interrupt()``s: a list (in the order interrupts are first
    seen on a thread), a mapping node name -> answer, or a callable of the
    ``Interrupt``. ``store`` is ``flow_store`` (its saver is the one ``flows.run``
    uses) or None (a private store); ``flows`` drives each call through ``flows.run``
    (the harness's scheduler), else ``run(graph, input, config, durability)`` does
    (``graph.invoke`` by default).
    """

    def __init__(
        self,
        graph: Any,
        inputs: Any,
        *,
        store: FlowStore | None = None,
        saver: FlowsCheckpointSaver | None = None,
        answers: Answers = None,
        durability: str = "async",
        config: Mapping[str, Any] | None = None,
        run: Runner | None = None,
        flows: Any = None,
        max_answers: int = 50,
    ) -> None:
        if durability not in DURABILITIES:
            raise FlowsUsageError(
                f"durability={durability!r}: LangGraph knows 'sync', 'async' (its default) "
                "and 'exit'."
            )
        if saver is None:
            saver = store_saver(store) if store is not None else FlowsCheckpointSaver()
        self.saver = saver
        self.store = saver.store
        self.inputs = inputs
        self.answers = answers
        self.durability = durability
        self.extra = dict(config or {})
        self.run = run or (flows_runner(flows) if flows is not None else _invoke)
        self.max_answers = max_answers
        self.graph = _prepared(graph, saver)
        self._threads = itertools.count(1)
        #: thread -> interrupt id -> the answer given (kept across a crash)
        self._given: dict[str, dict[str, Any]] = {}
        #: repr of an interrupt's value -> the answer the first run gave it
        self._by_value: dict[str, Any] = {}

    def describe(self) -> str:
        return f"{self.graph.name} (durability={self.durability!r})"

    def new_thread(self, prefix: str) -> str:
        return f"{prefix}-{next(self._threads)}"

    def config(self, thread_id: str, checkpoint_id: str | None = None) -> RunnableConfig:
        configurable = {**self.extra.get("configurable", {}), "thread_id": thread_id}
        if checkpoint_id is not None:
            configurable["checkpoint_id"] = checkpoint_id
        config: RunnableConfig = {**self.extra, "configurable": configurable}  # type: ignore[typeddict-item]
        return config

    # -- driving a thread ----------------------------------------------------------------
    def _answer(self, thread_id: str, interrupt: Any, node: str) -> tuple[bool, Any]:
        given = self._given.setdefault(thread_id, {})
        if interrupt.id in given:
            return True, given[interrupt.id]
        key = repr(interrupt.value)
        answers = self.answers
        if callable(answers):
            value = answers(interrupt)
        elif isinstance(answers, Mapping):
            if node not in answers:
                return False, None
            value = answers[node]
        elif key in self._by_value:
            value = self._by_value[key]
        else:
            used = sum(len(g) for g in self._given.values() if g is given)
            if answers is None or used >= len(answers):
                return False, None
            value = answers[used]
        self._by_value.setdefault(key, value)
        given[interrupt.id] = value
        return True, value

    def drive(
        self, thread_id: str, first: Any, *, start: RunnableConfig | None = None
    ) -> ThreadRun:
        """Run ``first`` on the thread, then answer its interrupts while answers last."""
        key = state_key(thread_id)
        mark = len(self.store.history(key))
        output: Any = None
        error: BaseException | None = None
        crashed: SimulatedCrash | None = None
        try:
            output = self.run(self.graph, first, start or self.config(thread_id), self.durability)
            for _ in range(self.max_answers):
                state = self.graph.get_state(self.config(thread_id))
                resume = {}
                for task in state.tasks:
                    for interrupt in task.interrupts:
                        known, value = self._answer(thread_id, interrupt, task.name)
                        if known:
                            resume[interrupt.id] = value
                if not resume:
                    break
                output = self.run(
                    self.graph, Command(resume=resume), self.config(thread_id), self.durability
                )
        except SimulatedCrash as crash:
            crashed = crash
        except Exception as exc:  # the run's own failure is part of its outcome
            error = exc
        if crashed is None and self.saver.crashed is not None:
            crashed = self.saver.crashed  # raised on a pool thread, swallowed there
        self.saver.revive()
        state = self.graph.get_state(self.config(thread_id))
        return ThreadRun(
            thread_id=thread_id,
            values=copy.deepcopy(state.values),
            next=tuple(state.next),
            interrupts=[i.value for i in state.interrupts],
            output=output,
            error=error,
            crashed=crashed,
            saves=self.store.history(key)[mark:],
        )

    def baseline(self) -> ThreadRun:
        run = self.drive(self.new_thread("run"), copy.deepcopy(self.inputs))
        if run.error is not None:
            raise AssertionError(
                f"the uninterrupted run of {self.describe()} failed: "
                f"{type(run.error).__name__}: {run.error}"
            ) from run.error
        return run

    def crash(self, point: CrashPoint) -> tuple[str, ThreadRun] | None:
        """Run on a fresh thread crashing at ``point``; None if the run never got there."""
        thread_id = self.new_thread("crash")
        with self.store.crash_at(point):
            crashed = self.drive(thread_id, copy.deepcopy(self.inputs))
        if crashed.crashed is None:
            return None
        return thread_id, crashed

    def resume(self, thread_id: str) -> ThreadRun:
        """Restart a crashed thread: from its latest checkpoint, or from the inputs."""
        if self.saver.get_tuple(self.config(thread_id)) is None:
            return self.drive(thread_id, copy.deepcopy(self.inputs))
        return self.drive(thread_id, None)

    def history(self, thread_id: str, *, subgraphs: bool = False) -> list[Any]:
        """The thread's root checkpoints (state snapshots), oldest first; with
        ``subgraphs``, its subgraphs' checkpoints too, in the order they were written."""
        snapshots = list(self.graph.get_state_history(self.config(thread_id)))
        if subgraphs:
            listed = self.saver.list(self.config(thread_id))
            for ns in sorted({t.config["configurable"]["checkpoint_ns"] for t in listed} - {""}):
                config = self.config(thread_id)
                config["configurable"]["checkpoint_ns"] = ns
                snapshots.extend(self.graph.get_state_history(config))
        return sorted(snapshots, key=lambda s: str(s.config["configurable"]["checkpoint_id"]))


def _prepared(graph: Any, saver: FlowsCheckpointSaver) -> Graph:
    made = graph() if callable(graph) and not isinstance(graph, Pregel | StateGraph) else graph
    if isinstance(made, StateGraph):
        return made.compile(checkpointer=saver)
    if isinstance(made, Pregel):
        return made.copy(update={"checkpointer": saver.serving(made.checkpointer)})
    raise FlowsUsageError(
        f"the persistence properties run a LangGraph graph: pass a compiled graph, a "
        f"StateGraph builder or a factory of one, not {type(made).__qualname__}."
    )


def _problems(expected: ThreadRun, got: ThreadRun) -> list[str]:
    problems = []
    if got.error is not None:
        problems.append(f"the run failed: {type(got.error).__name__}: {got.error}")
    for change in differences(expected.comparable(), got.comparable()):
        problems.append(change.describe())
    return problems


def _reproducer(function: str, case: GraphCase, **arguments: str) -> str:
    given = [f"{k}={v}" for k, v in arguments.items()]
    args = ", ".join(["graph", "inputs", *given, f"durability={case.durability!r}"])
    return f"    {function}(flow_store, {args})"


def _settings(max_examples: int) -> settings:
    return settings(max_examples=max_examples, deadline=None, database=None, derandomize=True)


# -- crash and resume ----------------------------------------------------------------------
def assert_crash_resume(case: GraphCase, point: CrashPoint) -> None:
    """Crash a run at ``point``, restart the thread, compare with an uninterrupted run."""
    baseline = case.baseline()
    crashed = case.crash(point)
    if crashed is None:
        raise AssertionError(
            f"{case.describe()} finished without reaching {point}: the uninterrupted run made "
            f"{len(baseline.saves)} durable write(s)."
        )
    thread_id, _ = crashed
    resumed = case.resume(thread_id)
    problems = _problems(baseline, resumed)
    if problems:
        raise AssertionError(
            f"crash-resume equivalence fails for {case.describe()}: crashed {point} "
            f"(thread {thread_id!r}), restarted with stream(None, {{thread_id}}).\n  "
            + "\n  ".join(problems)
            + "\nA node that is not safe to run again is the usual cause: on a restart LangGraph "
            "re-runs every task of the step whose writes were not durable (work outside the "
            "state, such as a sent mail or a counter, happens twice)."
            + "\nReproduce:\n"
            + _reproducer("assert_crash_resume", case, crash=repr(point))
        )


def check_crash_resume(
    case: GraphCase,
    *,
    when: Sequence[Literal["after", "before"]] = ("after", "before"),
    max_examples: int = 20,
    hypothesis_settings: settings | None = None,
) -> None:
    """Property: wherever the run crashes, restarting the thread ends as the run did."""
    saves = len(case.baseline().saves)
    if saves == 0:
        raise FlowsUsageError(
            f"{case.describe()} wrote nothing durable: compile it with a checkpointer "
            "(the properties use the flows saver) and give it a thread."
        )

    @given(save=st.integers(min_value=1, max_value=saves), where=st.sampled_from(list(when)))
    @(hypothesis_settings or _settings(max_examples))
    def crash_resume(save: int, where: Literal["after", "before"]) -> None:
        point = CrashPoint(save, where)
        note(f"the uninterrupted run made {saves} durable write(s); crashing {point}")
        assert_crash_resume(case, point)

    crash_resume()


def crash_points(
    case: GraphCase, when: Sequence[str] = ("after", "before")
) -> Iterator[CrashPoint]:
    """Every crash point of the case's uninterrupted run (for an exhaustive check)."""
    saves = len(case.baseline().saves)
    for save in range(1, saves + 1):
        for where in when:
            yield CrashPoint(save, where)  # type: ignore[arg-type]


# -- time travel ---------------------------------------------------------------------------
def _nodes_after(
    saves: Sequence[StateSave], root: str | None = None, inner: str | None = None
) -> dict[str, Any]:
    """What ran, from the durable writes: the root's per checkpoint they were written
    against (in checkpoint order), the subgraphs' as one sorted list. Writes land in
    completion order (and under ``"async"`` a step's writes may land before its
    checkpoint): grouping by the checkpoint each names is what is stable.

    ``root``/``inner``: only writes against root checkpoints from ``root`` on and
    subgraph checkpoints from ``inner`` on (ids grow with time)."""
    steps: dict[str, list[str]] = {}
    nested: list[str] = []
    for save in saves:
        note = json.loads(save.raw)
        if "put" in note:
            continue
        checkpoint_id = str(note.get("checkpoint_id", ""))
        if note.get("checkpoint_ns"):
            if inner is None or checkpoint_id >= inner:
                nested.append(save.method)
        elif root is None or checkpoint_id >= root:
            steps.setdefault(checkpoint_id, []).append(save.method)
    return {
        "root": [sorted(steps[key]) for key in sorted(steps)],
        "subgraphs": sorted(nested),
    }


def assert_time_travel(case: GraphCase, checkpoint: int, *, subgraphs: bool = False) -> None:
    """Run to the end, then again from its ``checkpoint``-th checkpoint (0-based, in write
    order; with ``subgraphs``, subgraphs' checkpoints count too)."""
    baseline = case.baseline()
    history = case.history(baseline.thread_id, subgraphs=subgraphs)
    if not 0 <= checkpoint < len(history):
        raise FlowsUsageError(
            f"assert_time_travel(checkpoint={checkpoint}): the run wrote {len(history)} "
            f"checkpoint(s); pass 0..{len(history) - 1}."
        )
    chosen = history[checkpoint]
    checkpoint_id = chosen.config["configurable"]["checkpoint_id"]
    namespace = chosen.config["configurable"].get("checkpoint_ns", "")
    replay = case.drive(baseline.thread_id, None, start=chosen.config)
    problems = _problems(baseline, replay)
    expected: dict[str, Any] = {}
    got: dict[str, Any] = {}
    if case.durability != "exit":
        if namespace:
            parent = chosen.metadata.get("parents", {}).get("", "")
            expected = _nodes_after(baseline.saves, parent, checkpoint_id)
        else:
            expected = _nodes_after(baseline.saves, checkpoint_id, checkpoint_id)
        got = _nodes_after(replay.saves)
        if expected != got:
            problems.append(f"ran {got} after the checkpoint; the run ran {expected}")
    if problems:
        where = f" in subgraph {namespace.split(':')[0]!r}" if namespace else ""
        raise AssertionError(
            f"checkpoint time travel fails for {case.describe()}: ran again from checkpoint "
            f"{checkpoint}{where} (step {chosen.metadata.get('step')}, "
            f"next={list(chosen.next)}).\n  "
            + "\n  ".join(problems)
            + _upstream_hint_travel(namespace, expected, got)
            + "\nReproduce:\n"
            + _reproducer(
                "assert_time_travel",
                case,
                checkpoint=str(checkpoint),
                **({"subgraphs": "True"} if subgraphs else {}),
            )
        )


def _upstream_hint_travel(namespace: str, expected: dict[str, Any], got: dict[str, Any]) -> str:
    """langgraph#8458 when a replay from inside a subgraph ran that subgraph's start."""
    if not namespace:
        return ""
    sub = namespace.split(":")[0]
    start = f"put_writes {sub}/__start__"
    reran = any(m.startswith(start) for m in got.get("subgraphs", ()))
    if reran and not any(m.startswith(start) for m in expected.get("subgraphs", ())):
        bug = UPSTREAM_BUGS["langgraph#8458"]
        return (
            f"\nThis is LangGraph's bug langgraph#8458 ({bug}), not your graph's: expect it "
            '(pytest.mark.xfail(reason="langgraph#8458", strict=True)) until a release fixes it.'
        )
    return ""


def check_time_travel(
    case: GraphCase,
    *,
    subgraphs: bool = False,
    max_examples: int = 20,
    hypothesis_settings: settings | None = None,
) -> None:
    """Property: running again from any checkpoint of a run ends as the run did."""
    count = len(case.history(case.baseline().thread_id, subgraphs=subgraphs))

    @given(index=st.integers(min_value=0, max_value=count - 1))
    @(hypothesis_settings or _settings(max_examples))
    def time_travel(index: int) -> None:
        note(f"the run wrote {count} checkpoint(s); running again from checkpoint {index}")
        assert_time_travel(case, index, subgraphs=subgraphs)

    time_travel()


# -- fork isolation ------------------------------------------------------------------------
def _raws(store: FlowStore) -> dict[str, str]:
    return {record.location: record.raw for record in store.checkpoints()}


def assert_fork_isolated(
    case: GraphCase, checkpoint: int, values: Mapping[str, Any], as_node: str | None = None
) -> str:
    """Fork a finished run at its ``checkpoint``-th checkpoint with ``update_state(...,
    values, as_node=...)``, run the fork to its end, check isolation; returns the fork's
    checkpoint id."""
    baseline = case.baseline()
    history = case.history(baseline.thread_id)
    if not 0 <= checkpoint < len(history):
        raise FlowsUsageError(
            f"assert_fork_isolated(checkpoint={checkpoint}): the run wrote {len(history)} "
            f"checkpoint(s); pass 0..{len(history) - 1}."
        )
    source = history[checkpoint]
    source_id = source.config["configurable"]["checkpoint_id"]
    before = _raws(case.store)
    forked = case.graph.update_state(source.config, dict(values), as_node=as_node)
    fork_id = forked["configurable"]["checkpoint_id"]
    fork_state = case.graph.get_state(forked)
    problems = []
    parent = fork_state.parent_config or {}
    if parent.get("configurable", {}).get("checkpoint_id") != source_id:
        problems.append(f"the fork's parent is {parent!r}, not checkpoint {checkpoint}")
    for name, value in source.values.items():
        if name not in values and fork_state.values.get(name) != value:
            problems.append(
                f"the fork changed {name!r}, which the update does not name: {value!r} -> "
                f"{fork_state.values.get(name)!r}"
            )
    case.drive(baseline.thread_id, None, start=forked)
    after = _raws(case.store)
    for location, raw in before.items():
        if after.get(location) != raw:
            what = "removed" if location not in after else "rewritten"
            problems.append(f"the stored checkpoint {location} was {what} by the fork")
    original = case.graph.get_state(history[-1].config)
    if copy.deepcopy(original.values) != baseline.values:
        problems.append("the original branch's last checkpoint no longer holds the run's values")
    if problems:
        raise AssertionError(
            f"fork isolation fails for {case.describe()} (update_state at checkpoint "
            f"{checkpoint}, as_node={as_node!r}):\n  "
            + "\n  ".join(problems)
            + "\nReproduce:\n"
            + _reproducer(
                "assert_fork_isolated",
                case,
                checkpoint=str(checkpoint),
                values=repr(dict(values)),
                as_node=repr(as_node),
            )
        )
    return str(fork_id)


def check_fork_isolation(
    case: GraphCase,
    values: st.SearchStrategy[Mapping[str, Any]] | Mapping[str, Any],
    *,
    as_nodes: Sequence[str | None] = (None,),
    checkpoints: Sequence[int] | None = None,
    max_examples: int = 10,
    hypothesis_settings: settings | None = None,
) -> None:
    """Property: a fork at any checkpoint, with any update, leaves the rest as it was.

    ``checkpoints`` are the indexes to fork at; by default every one after the input
    checkpoint (before it the state holds no values yet, so a node's routing would fail
    on the update alone).
    """
    count = len(case.history(case.baseline().thread_id))
    indexes = list(checkpoints) if checkpoints is not None else list(range(1, count))
    if not indexes:
        raise FlowsUsageError(
            f"{case.describe()} wrote {count} checkpoint(s): nothing to fork after the input; "
            "pass checkpoints=[...] to fork the ones you mean."
        )
    updates = values if isinstance(values, st.SearchStrategy) else st.just(values)

    @given(
        index=st.sampled_from(indexes),
        update=updates,
        as_node=st.sampled_from(list(as_nodes)),
    )
    @(hypothesis_settings or _settings(max_examples))
    def fork(index: int, update: Mapping[str, Any], as_node: str | None) -> None:
        note(f"forking checkpoint {index} of {count} with {dict(update)!r} as {as_node!r}")
        assert_fork_isolated(case, index, update, as_node)

    fork()
