"""Hypothesis strategies and property helpers for flow state: crash, resume, fork, time travel.

The strategies are plain values (compose them in your own ``@given`` tests):

* :func:`scheduler_seeds` - seeds for the deterministic scheduler (0 keeps the
  runtime's own order; others pick among the orders the runtime allows);
* :func:`crash_points` - where to stop a run: after (or just before) its
  k-th persisted save.

The property helpers run *your* flow on the harness and shrink a failure to
the smallest crash point (or checkpoint) with a reproducer:

* :func:`check_crash_resume` - stop the run after any persisted step, resume
  from the store in a fresh flow instance, reach the same final state and
  output as the uninterrupted run;
* :func:`check_fork_isolation` - a Hypothesis state machine of kickoffs,
  resumes and forks: forking never changes the source's history, and the fork
  starts from the source's latest snapshot;
* :func:`check_time_travel` - restore any checkpoint and continue: the same
  final state, output and trace as the rest of the uninterrupted run.

Each has a single-case twin (:func:`assert_crash_resume`,
:func:`assert_fork_isolated`, :func:`assert_time_travel`) that a failure's
reproducer calls. Hypothesis's stateful testing is synchronous; every step
runs the flow with ``flows.run`` on the harness's deterministic loop.

This module is framework-neutral: the framework work (building instances,
kicking off, restoring) comes from the store backend of the flow's framework
(``flow_store.backend_for(flow).operations(flows)``).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import difflib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    rule,
    run_state_machine_as_test,
)

from pytest_flows.codec import diff_snapshots, differences
from pytest_flows.errors import FlowsUsageError
from pytest_flows.store import CheckpointRecord, CrashPoint, FlowStore
from pytest_flows.trace import Trace, render_value

if TYPE_CHECKING:
    from pytest_flows.loop import Scheduler
    from pytest_flows.session import FlowsSession

__all__ = [
    "CrashPoint",
    "Outcome",
    "assert_crash_resume",
    "assert_fork_isolated",
    "assert_time_travel",
    "check_crash_resume",
    "check_fork_isolation",
    "check_time_travel",
    "crash_points",
    "default_settings",
    "reseeded",
    "runtime_view",
    "scheduler_seeds",
    "schedules",
]

Compare = Sequence[Literal["state", "output", "trace"]]


# -- strategies --------------------------------------------------------------------
def scheduler_seeds(max_seed: int = 2**16 - 1) -> st.SearchStrategy[int]:
    """Scheduler seeds; shrinks towards 0 (the runtime's own submission order)."""
    if max_seed < 0:
        raise FlowsUsageError(f"scheduler_seeds(max_seed={max_seed}): pass a number >= 0.")
    return st.integers(min_value=0, max_value=max_seed)


def schedules(max_length: int = 64, max_choice: int = 3) -> st.SearchStrategy[str]:
    """Schedules to pass to ``flows.run(F, schedule=...)``; shrink towards ``"w"`` (the
    default schedule: what seed 0 does) and fewer departures from it.

    A drawn schedule fits any run (its indices wrap around each choice point's
    options, see :mod:`pytest_flows.schedule`); the run's ``run.schedule`` is the
    exact schedule to replay a failure with.
    """
    from pytest_flows.schedule import encode

    if max_length < 0 or max_choice < 1:
        raise FlowsUsageError(
            f"schedules(max_length={max_length}, max_choice={max_choice}): pass "
            "max_length >= 0 and max_choice >= 1."
        )
    choices = st.lists(st.integers(0, max_choice), max_size=max_length)
    return choices.map(lambda indices: "w" + encode(indices)[1:])


def crash_points(
    saves: int, *, when: Sequence[Literal["after", "before"]] = ("after", "before")
) -> st.SearchStrategy[CrashPoint]:
    """Crash points of a run with ``saves`` persisted saves; shrinks to ``after save 1``.

    ``after`` stops the run right after the save landed (the process died
    before the next step); ``before`` stops it with the method done but its
    state not yet saved.
    """
    if saves < 1:
        raise FlowsUsageError(
            f"crash_points({saves}): the run saved nothing, so there is no persisted step to "
            "crash after. Decorate the flow (or its methods) with @persist."
        )
    if not when:
        raise FlowsUsageError("crash_points(when=()): pass 'after', 'before' or both.")
    return st.builds(
        CrashPoint,
        save=st.integers(min_value=1, max_value=saves),
        when=st.sampled_from(list(when)),
    )


def default_settings(max_examples: int = 20) -> settings:
    """Settings for the property helpers: few examples, no deadline, reproducible.

    ``derandomize`` keeps them as deterministic as the harness (same test,
    same examples); ``database=None`` keeps them off the disk.
    """
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        # No "explain" phase: it would list pytest-flows' own lines, not yours.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    )


@contextlib.contextmanager
def reseeded(scheduler: Scheduler, seed: int | None) -> Iterator[None]:
    """Run the block with ``scheduler`` reseeded to ``seed`` (None: leave it as is)."""
    if seed is None:
        yield
        return
    previous = scheduler.seed
    scheduler.seed = seed
    scheduler.__post_init__()  # a fresh random stream for the new seed
    try:
        yield
    finally:
        scheduler.seed = previous
        scheduler.__post_init__()


# -- what a framework backend provides ---------------------------------------------------
@dataclasses.dataclass
class Outcome:
    """What one run did, in comparable form."""

    state: dict[str, Any] | None  # the final state, JSON-encoded
    output: Any
    trace: Trace
    state_id: str | None
    error: BaseException | None = None
    checkpoints: list[CheckpointRecord] = dataclasses.field(default_factory=list)
    start_state: Any = None  # the state as the run started (after any restore)
    start_id: str | None = None
    #: The final state as the flow held it (a copy): compared with its types, since
    #: the JSON form cannot tell an int key from a str key or a tuple from a list.
    typed_state: Any = None


class Operations(Protocol):
    """Framework work the property helpers need (``backend.operations(flows)``)."""

    def describe(self, flow: Any) -> str: ...
    def run(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome: ...
    def crash(self, flow: Any, inputs: dict[str, Any] | None, point: CrashPoint) -> str | None: ...
    def resume(self, flow: Any, inputs: dict[str, Any] | None, state_id: str) -> Outcome: ...
    def fork(
        self, flow: Any, inputs: dict[str, Any] | None, source: str, pin: str | None
    ) -> Outcome: ...
    def run_with_checkpoints(self, flow: Any, inputs: dict[str, Any] | None) -> Outcome: ...
    def restore(self, flow: Any, checkpoint: CheckpointRecord) -> Outcome: ...
    def new_id(self) -> str: ...


def _operations(flows: FlowsSession, store: FlowStore, flow: Any) -> Operations:
    if not isinstance(store, FlowStore):
        raise FlowsUsageError(
            f"expected the flow_store fixture, got {type(store).__qualname__}: request "
            "flow_store in your test and pass it on."
        )
    # A factory (lambda: MyFlow(checkpoint=...)) says its framework once called.
    # (Built in a throwaway context: a framework may attach it to context state.)
    is_factory = callable(flow) and not isinstance(flow, type)
    sample = contextvars.copy_context().run(flow) if is_factory else flow
    backend = store.backend_for(sample)
    ops: Operations = backend.operations(flows)
    return ops


# -- comparing runs -------------------------------------------------------------------
_RUNTIME_PREFIXES = ("method.", "router.", "race.", "flow.")


def runtime_view(trace: Trace) -> list[str]:
    """The lines of ``trace`` that say what the flow did, for run-to-run comparison.

    Store and checkpoint events (the harness's bookkeeping), ``flow.started``
    (its inputs differ between a run and its resume) and the ``trigger`` of a
    started method (crewai re-triggers restored listeners without an event)
    are left out.
    """
    lines = []
    for event in trace:
        if not event.kind.startswith(_RUNTIME_PREFIXES) or event.kind == "flow.started":
            continue
        if event.kind == "method.started":
            event = event.model_copy(
                update={"fields": tuple(f for f in event.fields if f[0] != "trigger")}
            )
        lines.append(event.render())
    return lines


def _typed_changes(before: Any, after: Any, *, root: str = "", ignore: str = "") -> str:
    """Each path where ``after`` differs from ``before`` in value or type, one a line."""
    from pytest_flows.codec import differences

    changes = [c for c in differences(before, after, root=root) if c.path != ignore]
    return _clip("\n".join(c.describe() for c in changes))


def _compare(expected: Outcome, actual: Outcome, compare: Compare, *, suffix_of: int = 0) -> str:
    """'' if ``actual`` matches ``expected`` on ``compare``; else what differs."""
    problems = []
    if actual.error is not None:
        problems.append(f"the continued run failed: {type(actual.error).__name__}: {actual.error}")
    if "state" in compare:
        changed = _clip(diff_snapshots(expected.state or {}, actual.state or {}, ignore=("id",)))
        if changed:
            problems.append(
                "final state differs (uninterrupted -> continued):\n" + _indent(changed)
            )
        elif expected.typed_state is not None and actual.typed_state is not None:
            typed = _typed_changes(expected.typed_state, actual.typed_state, ignore="id")
            if typed:
                problems.append(
                    "final state differs in its types (uninterrupted -> continued):\n"
                    + _indent(typed)
                )
    if "output" in compare:
        typed = _typed_changes(expected.output, actual.output, root="output")
        if typed:
            problems.append(
                f"final output differs: uninterrupted {render_value(expected.output)}, "
                f"continued {render_value(actual.output)}:\n" + _indent(typed)
            )
    if "trace" in compare:
        want = runtime_view(expected.trace)[suffix_of:]
        got = runtime_view(actual.trace)
        if want != got:
            diff = "".join(
                difflib.unified_diff(
                    [line + "\n" for line in want],
                    [line + "\n" for line in got],
                    fromfile="uninterrupted",
                    tofile="continued",
                    n=2,
                )
            )
            problems.append("trace differs:\n" + _indent(diff))
    return "\n".join(problems)


def _clip(text: str, limit: int = 20) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) <= limit:
        return text
    return "".join(lines[:limit]) + f"... and {len(lines) - limit} more changed field(s)\n"


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def _call(name: str, flow_text: str, **kwargs: Any) -> str:
    args = ", ".join(f"{k}={v}" for k, v in kwargs.items() if v is not None)
    return f"    {name}(flows, flow_store, {flow_text}{', ' if args else ''}{args})"


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
    ops = _operations(flows, flow_store, flow)
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
    problems = _compare(baseline, resumed, compare)
    if problems:
        raise AssertionError(
            f"crash-resume equivalence fails for {ops.describe(flow)}: crashed {crash}, then "
            f"resumed with inputs={{'id': ...}} in a fresh instance.\n{problems}\n"
            "A step that is not safe to re-run after a resume (it repeats work whose result "
            "is already in the restored state) is the usual cause: make each step skip work "
            "the state says is done.\nReproduce:\n"
            + _call(
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
    ops = _operations(flows, flow_store, flow)

    @given(data=st.data())
    @(hypothesis_settings or default_settings(max_examples))
    def crash_resume(data: st.DataObject) -> None:
        seed = data.draw(seeds, label="seed") if seeds is not None else None
        with reseeded(flows.scheduler, seed):
            baseline = ops.run(flow, inputs)
        saves = len(flow_store.history(baseline.state_id)) if baseline.state_id else 0
        point = data.draw(crash_points(saves, when=when), label="crash")
        note(f"uninterrupted run saved {saves} time(s); crashing {point}")
        assert_crash_resume(
            flows, flow_store, flow, point, inputs=inputs, seed=seed, compare=compare
        )

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
    ops = _operations(flows, flow_store, flow)
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
            + _call(
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
    ops = _operations(flows, flow_store, flow)
    base = hypothesis_settings or default_settings(max_examples)

    class ForkIsolation(RuleBasedStateMachine):
        ids = Bundle("ids")

        @initialize(target=ids)
        def kickoff(self) -> str:
            outcome = ops.run(flow, inputs)
            if outcome.state_id is None or not flow_store.history(outcome.state_id):
                raise FlowsUsageError(
                    f"{ops.describe(flow)} saved nothing, so there is nothing to fork: "
                    "decorate the flow with @persist."
                )
            return outcome.state_id

        @rule(source=ids)
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
        def fork(self, source: str, pinned: bool) -> str:
            pin = ops.new_id() if pinned else None
            return assert_fork_isolated(flows, flow_store, flow, source, inputs=inputs, pin=pin)

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
    ops = _operations(flows, flow_store, flow)
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
    problems = _compare(baseline, restored, compare, suffix_of=position)
    if problems:
        completed = ", ".join(record.completed) or "nothing"
        raise AssertionError(
            f"checkpoint time travel fails for {ops.describe(flow)}: restored checkpoint "
            f"{checkpoint} (written on {record.trigger}, completed: {completed}) and continued.\n"
            f"{problems}\nState kept outside the flow's state (instance attributes, module "
            "globals) is the usual cause: a restored flow only has what the checkpoint holds."
            "\nReproduce:\n"
            + _call(
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
        if event.kind.startswith(_RUNTIME_PREFIXES) and event.kind != "flow.started":
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
    ops = _operations(flows, flow_store, flow)

    @given(data=st.data())
    @(hypothesis_settings or default_settings(max_examples))
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

    time_travel()
