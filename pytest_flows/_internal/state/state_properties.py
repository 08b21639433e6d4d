"""The state property helpers: crash and resume, fork isolation, checkpoint time travel.

Each runs *your* flow on the harness and shrinks a failure to the smallest
crash point (or checkpoint) with a reproducer; each has a single-case twin
(:func:`assert_crash_resume`, :func:`assert_fork_isolated`,
:func:`assert_time_travel`) that a failure's reproducer calls. Hypothesis's
stateful testing is synchronous; every step runs the flow with ``flows.run``
on the harness's deterministic loop. The framework work comes from the store
backend of the flow's framework (:mod:`pytest_flows._internal.state.property_runs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    rule,
    run_state_machine_as_test,
)

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.exploration.seeding import reseeded
from pytest_flows._internal.state.codec import differences
from pytest_flows._internal.state.property_runs import (
    RUNTIME_PREFIXES,
    Compare,
    Outcome,
    compare_outcomes,
    operations_for,
    reproducer,
)
from pytest_flows._internal.state.property_timeouts import timeouts_escape
from pytest_flows._internal.state.store_records import CheckpointRecord, CrashPoint
from pytest_flows._internal.state.strategies import crash_points, default_settings, private_storage
from pytest_flows._internal.trace import Trace

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession
    from pytest_flows._internal.state.store import FlowStore

__all__ = [
    "assert_crash_resume",
    "assert_fork_isolated",
    "assert_time_travel",
    "check_crash_resume",
    "check_fork_isolation",
    "check_time_travel",
]


# -- (a) crash and resume ---------------------------------------------------------------
def assert_crash_resume(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    crash: CrashPoint,
    *,
    inputs: dict[str, Any] | None = None,
    seed: int | None = None,
    compare: Compare = ("state", "output"),
) -> None:
    """Crash a run at ``crash``, resume it from the store in a fresh instance, compare.

    The resumed run (``inputs={"id": <crashed id>, **inputs}``) must reach the
    same final state (ids aside) and output as an uninterrupted run.
    """
    ops = operations_for(flows, flow_store, flow)
    with reseeded(flows.scheduler, seed):
        baseline = ops.run(flow, inputs)
        if baseline.error is not None:
            raise AssertionError(
                f"the uninterrupted run of {ops.describe(flow)} failed: "
                f"{type(baseline.error).__name__}: {baseline.error}"
            ) from baseline.error
        crashed = ops.crash(flow, inputs, crash)
        if crashed is None:
            raise AssertionError(
                f"{ops.describe(flow)} finished without reaching {crash}: the run saved fewer "
                "times than the uninterrupted one, so it is not deterministic (seed "
                f"{seed if seed is not None else flows.seed})."
            )
        resumed = ops.resume(flow, inputs, crashed)
    problems = compare_outcomes(baseline, resumed, compare)
    if problems:
        raise AssertionError(
            f"crash-resume equivalence fails for {ops.describe(flow)}: crashed {crash}, then "
            f"resumed with inputs={{'id': ...}} in a fresh instance.\n{problems}\n"
            "A step that is not safe to re-run after a resume (it repeats work whose result "
            "is already in the restored state) is the usual cause: make each step skip work "
            "the state says is done.\nReproduce:\n"
            + reproducer(
                "assert_crash_resume",
                ops.describe(flow),
                crash=repr(crash),
                inputs=repr(inputs) if inputs else None,
                seed=repr(seed) if seed is not None else None,
            )
        )


def check_crash_resume(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    *,
    inputs: dict[str, Any] | None = None,
    seeds: st.SearchStrategy[int] | None = None,
    when: Sequence[Literal["after", "before"]] = ("after", "before"),
    compare: Compare = ("state", "output"),
    max_examples: int = 20,
    hypothesis_settings: settings | None = None,
) -> None:
    """Property: whatever persisted step the run crashes at, resuming gives the same result.

    Hypothesis draws a crash point (and, with ``seeds``, a scheduler seed),
    runs the flow uninterrupted, runs it again crashing there, resumes it in a
    fresh instance and compares. A failure shrinks to the smallest crash point
    and prints an :func:`assert_crash_resume` reproducer.
    """
    ops = operations_for(flows, flow_store, flow)

    @given(data=st.data())
    @(hypothesis_settings or default_settings(max_examples))
    @timeouts_escape
    def crash_resume(data: st.DataObject) -> None:
        seed = data.draw(seeds, label="seed") if seeds is not None else None
        with reseeded(flows.scheduler, seed):
            baseline = ops.run(flow, inputs)
        saves = baseline.save_count(flow_store)
        point = data.draw(crash_points(saves, when=when), label="crash")
        note(f"uninterrupted run saved {saves} time(s); crashing {point}")
        assert_crash_resume(
            flows, flow_store, flow, point, inputs=inputs, seed=seed, compare=compare
        )

    with private_storage():
        crash_resume()


# -- (b) fork isolation ---------------------------------------------------------------
def assert_fork_isolated(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    source: str | None = None,
    *,
    inputs: dict[str, Any] | None = None,
    pin: str | None = None,
) -> str:
    """Fork ``source`` (a fresh run's id if None) and check isolation; returns the fork's id.

    Checks: the fork gets a new id (``pin`` if given), the history of every
    other id (the source's included) is unchanged, and the fork started from
    the source's latest snapshot (fields given in ``inputs`` aside).
    """
    ops = operations_for(flows, flow_store, flow)
    if source is None:
        first = ops.run(flow, inputs)
        if first.state_id is None or not flow_store.history(first.state_id):
            raise FlowsUsageError(
                f"{ops.describe(flow)} saved nothing, so there is nothing to fork: decorate the "
                "flow with @persist (or pass persistence=flow_store.persistence)."
            )
        source = first.state_id
    latest = flow_store.latest(source)
    before = {key: [s.raw for s in flow_store.history(key)] for key in flow_store.ids}
    fork = ops.fork(flow, inputs, source, pin)
    problems = []
    if fork.error is not None:
        problems.append(f"the fork failed: {type(fork.error).__name__}: {fork.error}")
    fork_id = fork.start_id or fork.state_id or ""
    if pin is not None and fork_id != pin:
        problems.append(f"the fork runs under id {fork_id!r}, not the pinned {pin!r}")
    if pin is None and fork_id == source:
        problems.append(f"the fork kept the source's id {source!r}")
    for key, raws in before.items():
        if key == fork_id:
            continue
        now = [s.raw for s in flow_store.history(key)]
        if now != raws:
            added = [s.method for s in flow_store.history(key)[len(raws) :]]
            what = "the source" if key == source else "another flow"
            problems.append(
                f"forking changed the history of {what} ({key!r}): {len(raws)} save(s) before, "
                f"{len(now)} after (new: {added})"
            )
    if latest is not None and latest.value is not None and fork.start_state is not None:
        skip = ("id", *(inputs or {}))
        changes = differences(_fields(latest.value, skip), _fields(fork.start_state, skip))
        if changes:
            problems.append(
                "the fork did not start from the source's latest snapshot "
                f"(save {latest.index}, after {latest.method!r}):\n"
                + "".join(f"    {c.describe()}\n" for c in changes)
            )
    if problems:
        raise AssertionError(
            f"fork isolation fails for {ops.describe(flow)} (forking {source!r}):\n  "
            + "\n  ".join(problems)
            + "\nReproduce: run the source, then\n"
            + reproducer(
                "assert_fork_isolated",
                ops.describe(flow),
                source="<source id>",
                inputs=repr(inputs) if inputs else None,
                pin=repr(pin) if pin is not None else None,
            )
        )
    return fork_id


def _fields(state: Any, skip: Sequence[str]) -> dict[str, Any]:
    if hasattr(state, "model_fields"):
        values = {name: getattr(state, name, None) for name in type(state).model_fields}
    elif isinstance(state, dict):
        values = dict(state)
    else:
        return {}
    return {k: v for k, v in values.items() if k not in skip}


def check_fork_isolation(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    *,
    inputs: dict[str, Any] | None = None,
    max_examples: int = 10,
    steps: int = 6,
    hypothesis_settings: settings | None = None,
) -> None:
    """Property (stateful): across any sequence of kickoffs, resumes and forks,
    forking never changes another id's history and always starts from the
    source's latest snapshot. A failure shrinks to the shortest sequence."""
    ops = operations_for(flows, flow_store, flow)
    base = hypothesis_settings or default_settings(max_examples)

    class ForkIsolation(RuleBasedStateMachine):
        ids = Bundle("ids")

        @initialize(target=ids)
        @timeouts_escape
        def kickoff(self) -> str:
            outcome = ops.run(flow, inputs)
            if outcome.state_id is None or not flow_store.history(outcome.state_id):
                raise FlowsUsageError(
                    f"{ops.describe(flow)} saved nothing, so there is nothing to fork: "
                    "decorate the flow with @persist."
                )
            return outcome.state_id

        @rule(source=ids)
        @timeouts_escape
        def resume(self, source: str) -> None:
            others = {
                key: [s.raw for s in flow_store.history(key)]
                for key in flow_store.ids
                if key != source
            }
            ops.resume(flow, inputs, source)
            for key, raws in others.items():
                assert [s.raw for s in flow_store.history(key)] == raws, (
                    f"resuming {source!r} changed the history of {key!r}"
                )

        @rule(target=ids, source=ids, pinned=st.booleans())
        @timeouts_escape
        def fork(self, source: str, pinned: bool) -> str:
            pin = ops.new_id() if pinned else None
            return assert_fork_isolated(flows, flow_store, flow, source, inputs=inputs, pin=pin)

    with private_storage():
        run_state_machine_as_test(ForkIsolation, settings=settings(base, stateful_step_count=steps))


# -- (c) checkpoint time travel ------------------------------------------------------------
def assert_time_travel(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    checkpoint: int,
    *,
    inputs: dict[str, Any] | None = None,
    seed: int | None = None,
    compare: Compare = ("state", "output", "trace"),
) -> None:
    """Run uninterrupted, restore its ``checkpoint``-th checkpoint (0-based), continue, compare.

    The continued run must end in the same state and output, and do what the
    uninterrupted run did after that checkpoint (:func:`runtime_view`).
    """
    ops = operations_for(flows, flow_store, flow)
    with reseeded(flows.scheduler, seed):
        mark = flow_store._failure_mark()
        baseline = ops.run_with_checkpoints(flow, inputs)
        if not baseline.checkpoints:
            raise _no_checkpoint(ops.describe(flow), baseline, flow_store._failures_since(mark))
        count = len(baseline.checkpoints)
        if not 0 <= checkpoint < count:
            raise FlowsUsageError(
                f"assert_time_travel(checkpoint={checkpoint}): the run wrote {count} "
                f"checkpoint(s); pass 0..{count - 1}."
            )
        record = baseline.checkpoints[checkpoint]
        restored = ops.restore(flow, record)
    # The suffix: what the uninterrupted run did after this checkpoint was written.
    position = _position_after(baseline.trace, record)
    problems = compare_outcomes(baseline, restored, compare, suffix_of=position)
    if problems:
        completed = ", ".join(record.completed) or "nothing"
        raise AssertionError(
            f"checkpoint time travel fails for {ops.describe(flow)}: restored checkpoint "
            f"{checkpoint} (written on {record.trigger}, completed: {completed}) and continued.\n"
            f"{problems}\nState kept outside the flow's state (instance attributes, module "
            "globals) is the usual cause: a restored flow only has what the checkpoint holds."
            "\nReproduce:\n"
            + reproducer(
                "assert_time_travel",
                ops.describe(flow),
                checkpoint=str(checkpoint),
                inputs=repr(inputs) if inputs else None,
                seed=repr(seed) if seed is not None else None,
            )
        )


def _no_checkpoint(name: str, baseline: Outcome, failures: list[str]) -> FlowsUsageError:
    """Why a run meant to checkpoint after every method wrote none: the real cause."""
    if failures:
        reasons = list(dict.fromkeys(failures))  # every attempt fails the same way, usually
        return FlowsUsageError(
            f"{name} wrote no checkpoint: checkpointing is on, but every write failed "
            f"({len(failures)} attempt(s); the framework only logs them): "
            + "; ".join(reasons[:3])
            + ". Make what the checkpoint holds JSON-serializable (the flow state, the "
            "flow's own fields, method outputs)."
        )
    if baseline.error is not None:
        return FlowsUsageError(
            f"{name} wrote no checkpoint: the uninterrupted run failed before the first one "
            f"({type(baseline.error).__name__}: {baseline.error}). Fix the run first: "
            f"flows.run({name}, ...) shows the failure with its trace."
        )
    return FlowsUsageError(
        f"{name} wrote no checkpoint: its checkpoint config never fired during the run. "
        "Checkpoint on an event the run emits, e.g. checkpoint=CheckpointConfig("
        "on_events=['method_execution_finished']) (or pass a factory that does)."
    )


def _position_after(trace: Trace, record: CheckpointRecord) -> int:
    """How many runtime-view lines precede the trace event of ``record``'s write."""
    kept = 0
    for event in trace:
        if event.kind == "checkpoint.saved" and event.get("n") == str(record.n):
            return kept
        if event.kind.startswith(RUNTIME_PREFIXES) and event.kind != "flow.started":
            kept += 1
    return kept


def check_time_travel(
    flows: FlowsSession,
    flow_store: FlowStore,
    flow: Any,
    *,
    inputs: dict[str, Any] | None = None,
    seeds: st.SearchStrategy[int] | None = None,
    compare: Compare = ("state", "output", "trace"),
    max_examples: int = 20,
    hypothesis_settings: settings | None = None,
) -> None:
    """Property: restoring any checkpoint and continuing equals the uninterrupted suffix.

    A failure shrinks to the earliest checkpoint that breaks and prints an
    :func:`assert_time_travel` reproducer.
    """
    ops = operations_for(flows, flow_store, flow)

    @given(data=st.data())
    @(hypothesis_settings or default_settings(max_examples))
    @timeouts_escape
    def time_travel(data: st.DataObject) -> None:
        seed = data.draw(seeds, label="seed") if seeds is not None else None
        with reseeded(flows.scheduler, seed):
            mark = flow_store._failure_mark()
            baseline = ops.run_with_checkpoints(flow, inputs)
        count = len(baseline.checkpoints)
        if count == 0:
            raise _no_checkpoint(ops.describe(flow), baseline, flow_store._failures_since(mark))
        index = data.draw(st.integers(min_value=0, max_value=count - 1), label="checkpoint")
        note(f"uninterrupted run wrote {count} checkpoint(s); restoring checkpoint {index}")
        assert_time_travel(
            flows, flow_store, flow, index, inputs=inputs, seed=seed, compare=compare
        )

    with private_storage():
        time_travel()
