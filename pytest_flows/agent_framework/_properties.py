"""Properties of a workflow that one test can check across many runs.

* :func:`check_restore_equivalence` - restoring from any checkpoint of a run and
  continuing gives the same supersteps, outputs, state and final status as the
  uninterrupted run (time travel is safe; executors save what they need). Values
  are compared with their types, not as rendered text: ``{1: ...}`` restored as
  ``{'1': ...}`` (JSON object keys are strings) is a difference.
* :func:`explore_seeds` - run the workflow under many scheduler seeds: a
  workflow whose concurrent executors race (last writer wins on shared state,
  a sibling reading another's uncommitted write) gives different runs for
  different seeds; a correct one gives one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pytest_flows.adapters import (
    FlowsUsageError,
    Normalizer,
    differences,
    render_value,
    reseeded,
    runs_by_seed,
)
from pytest_flows.agent_framework._adapter import WorkflowRun
from pytest_flows.agent_framework._checkpoints import FlowsCheckpointStorage

if TYPE_CHECKING:
    from pytest_flows.adapters import FlowsSession

__all__ = [
    "RestoreCheck",
    "SeedExploration",
    "check_restore_equivalence",
    "explore_seeds",
    "seeded",
    "supersteps_after",
]

WorkflowFactory = Callable[[], Any]

_PLACEHOLDER = re.compile(r"<(uuid|call):\d+>")


def _renumber(lines: Sequence[str]) -> list[str]:
    """Renumber ``<uuid:N>`` (as ``<id:N>``) and ``<call:N>`` placeholders by first
    appearance within ``lines``: a slice of a run numbers its ids from 1."""
    seen: dict[str, str] = {}
    counts = {"uuid": 0, "call": 0}

    def sub(match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in seen:
            kind = match.group(1)
            counts[kind] += 1
            seen[token] = f"<{'id' if kind == 'uuid' else kind}:{counts[kind]}>"
        return seen[token]

    return [_PLACEHOLDER.sub(sub, line) for line in lines]


def supersteps_after(run: WorkflowRun, superstep: int) -> list[str]:
    """The trace lines of ``run`` from the superstep after ``superstep`` to its end.

    Ids are renumbered within the slice, so slices of different runs compare
    equal when they did the same thing.
    """
    return _renumber(_slice_after(run, superstep))


def _slice_after(run: WorkflowRun, superstep: int) -> list[str]:
    """:func:`supersteps_after` before its ids are renumbered."""
    lines = run.trace.lines()
    start = len(lines)
    for index, event in enumerate(run.trace):
        if event.kind == "superstep.started" and not event.depth and int(event.name) > superstep:
            start = index
            break
    else:
        # nothing ran after the checkpoint: compare the closing line only
        for index, event in enumerate(run.trace):
            if (
                event.kind.startswith("workflow.")
                and event.kind != "workflow.started"
                and not event.depth
            ):
                start = index
    return _without_empty_supersteps(run, start)


#: Kinds of the trace events that belong to a superstep (the rest are workflow-level).
_IN_SUPERSTEP = (
    "executor.",
    "message.",
    "state.",
    "checkpoint.",
    "request.info",
    "workflow.output",
    "workflow.intermediate",
    "workflow.warning",
    "workflow.error",
)


def _without_empty_supersteps(run: WorkflowRun, start: int) -> list[str]:
    """Lines from ``start``, leaving out supersteps in which no executor ran.

    Restoring the last checkpoint of a finished run makes the runtime run one
    empty superstep (nothing is in flight); it changes nothing.
    """
    events = list(run.trace)[start:]
    kept: list[str] = []
    section: list[str] = []
    invoked = False
    for event in events:
        # (a sub-workflow's lines, nested, belong to the superstep of its executor)
        outer_step = event.kind == "superstep.started" and not event.depth
        if outer_step or not (event.depth or event.kind.startswith(_IN_SUPERSTEP)):
            if section and invoked:
                kept.extend(section)
            section, invoked = [], False
            if not outer_step:
                kept.append(event.render())
                continue
        section.append(event.render())
        invoked = invoked or event.kind == "executor.invoked"
    if section and invoked:
        kept.extend(section)
    return kept


@dataclasses.dataclass
class RestoreCheck:
    """One checkpoint restored and compared with the uninterrupted run.

    ``checkpoint_id`` is the checkpoint restored (an id in the storage),
    ``superstep`` the superstep it was saved after, ``run`` the restored
    :class:`~pytest_flows.agent_framework.WorkflowRun`; ``diff`` is the trace
    diff (what ran; '' when the same), ``changes`` the values that differ, one
    ``path: what`` line each (``outputs[0][1] (key): int ... str``);
    ``equivalent`` is true when both are empty.
    """

    checkpoint_id: str
    superstep: int
    run: WorkflowRun
    diff: str
    changes: list[str] = dataclasses.field(default_factory=list)

    @property
    def equivalent(self) -> bool:
        return not self.diff and not self.changes


# -- typed comparison -------------------------------------------------------------------


def _typed_outcome(run: WorkflowRun, superstep: int) -> dict[str, Any]:
    """What the run produced after ``superstep``, as comparable values."""
    ids = Normalizer()
    after = [o for o in run.output_records if o.superstep > superstep]
    # concurrent executors of one superstep yield in the order they happened to run
    after.sort(key=lambda o: (o.superstep, o.executor))
    pending = sorted(
        ((p.executor, type(p.data).__qualname__, ids.value(p.data)) for p in run.pending),
        key=lambda item: (item[0], item[1]),
    )
    return {
        "outputs": [ids.value(o.data) for o in after],
        "state": ids.value(run.state),
        "status": run.status,
        "pending": pending,
        "error": type(run.error).__name__ if run.error else None,
    }


def _value_changes(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    changes: list[str] = []
    for key in expected:
        for change in differences(expected[key], actual[key], root=key):
            changes.append(change.describe())
    return changes


def _outcome(run: WorkflowRun) -> list[str]:
    """How the run ended, normalized as its trace is (a uuid the state holds is the
    trace's ``<uuid:N>``)."""
    return run._normalizer().lines(
        [
            f"status: {run.status}",
            f"state: {render_value(run.state, limit=10_000)}",
            f"pending: {sorted(type(p.data).__name__ for p in run.pending)!r}",
            f"error: {type(run.error).__name__ if run.error else None}",
        ]
    )


def check_restore_equivalence(
    flows: FlowsSession,
    build: WorkflowFactory,
    *args: Any,
    storage: FlowsCheckpointStorage | None = None,
    checkpoints: Iterable[str] | None = None,
    after_superstep: int | Iterable[int] | None = None,
    **kwargs: Any,
) -> list[RestoreCheck]:
    """Assert that restoring from each checkpoint and continuing equals the full run.

    ``build()`` returns a fresh workflow (the same definition every time);
    ``args``/``kwargs`` are the first run's (``flows.run(build(), *args,
    **kwargs)``). Every checkpoint that run wrote is restored on a fresh
    workflow and run to the end; the supersteps after the checkpoint, the
    outputs they yield, the final state and status must be the same - values
    compared with their types, so a dict whose int keys come back as str keys
    differs, and run-specific values (uuids, the fake model's call ids,
    timestamps) in their normal form. Raises ``AssertionError`` naming the
    checkpoint, its superstep and the differing paths (and a trace diff) for
    the first checkpoint that differs; returns one :class:`RestoreCheck` per
    checkpoint restored otherwise, in save order.

    Restore fewer: ``after_superstep=N`` (or a list of them) restores only the
    checkpoints this call's run saved after those supersteps (``0`` is the one
    saved before the first superstep); ``checkpoints=[ids]`` restores those
    ids, which must already be in ``storage`` (saved by an earlier run of the
    same workflow into the same storage: this call's own run draws new ids).

    ``storage`` decides the codec: by default a :class:`FlowsCheckpointStorage`
    with ``FileCheckpointStorage``'s rules (JSON, restricted unpickling: what a
    checkpoint that outlives the process goes through); pass
    ``FlowsCheckpointStorage(rules="memory", ...)`` to check restores from
    ``InMemoryCheckpointStorage`` only.
    """
    if not callable(build):
        raise FlowsUsageError(
            "check_restore_equivalence(flows, build, message) needs build, a function that "
            f"returns a fresh workflow each call (e.g. a build_workflow() factory), got {build!r}."
        )
    store = storage if storage is not None else FlowsCheckpointStorage()
    full = flows.run(build(), *args, checkpoint_storage=store, **kwargs)
    if not isinstance(full, WorkflowRun):
        raise FlowsUsageError("check_restore_equivalence() works on Agent Framework workflows")
    if checkpoints is not None and after_superstep is not None:
        raise FlowsUsageError(
            "check_restore_equivalence(): pass checkpoints=[ids] or after_superstep=N, not both."
        )
    targets = list(checkpoints) if checkpoints is not None else list(full.checkpoints)
    if not targets:
        raise FlowsUsageError(
            "check_restore_equivalence(): the run wrote no checkpoint to restore from; "
            "does the workflow run at all (see the trace)?"
        )
    known = set(store.ids())
    unknown = [c for c in targets if c not in known]
    if unknown:
        raise FlowsUsageError(
            f"check_restore_equivalence(checkpoints=...): {unknown[0]!r} is not in the "
            "storage. This call's run saves checkpoints with ids of its own: restore by "
            "superstep with after_superstep=N, or pass the storage an earlier run saved "
            "into (storage=...) with that run's ids."
        )
    if after_superstep is not None:
        targets = _after_supersteps(store, targets, after_superstep)
    checks: list[RestoreCheck] = []
    for checkpoint_id in targets:
        superstep = store.info(checkpoint_id).superstep
        resumed = flows.run(
            build(),
            checkpoint_id=checkpoint_id,
            checkpoint_storage=store,
            raise_on_error=False,
        )
        assert isinstance(resumed, WorkflowRun)
        expected = _renumber(_slice_after(full, superstep) + _outcome(full))
        actual = _renumber(_slice_after(resumed, superstep) + _outcome(resumed))
        diff = "".join(
            difflib.unified_diff(
                [line + "\n" for line in expected],
                [line + "\n" for line in actual],
                fromfile="uninterrupted run",
                tofile=f"restored from checkpoint after superstep {superstep}",
            )
        )
        changes = _value_changes(
            _typed_outcome(full, superstep), _typed_outcome(resumed, superstep)
        )
        check = RestoreCheck(checkpoint_id, superstep, resumed, diff, changes)
        checks.append(check)
        if not check.equivalent:
            raise AssertionError(_restore_failure(full, store, check))
    return checks


_MAX_CHANGES = 20


def _after_supersteps(
    store: FlowsCheckpointStorage, targets: list[str], wanted: int | Iterable[int]
) -> list[str]:
    steps = {wanted} if isinstance(wanted, int) else set(wanted)
    if not steps or not all(isinstance(n, int) and not isinstance(n, bool) for n in steps):
        raise FlowsUsageError(
            f"check_restore_equivalence(after_superstep={wanted!r}): pass a superstep number "
            "(0 is the checkpoint before the first superstep) or a list of them."
        )
    by_step = {cid: store.info(cid).superstep for cid in targets}
    chosen = [cid for cid in targets if by_step[cid] in steps]
    missing = sorted(steps - set(by_step.values()))
    if missing:
        saved = ", ".join(map(str, sorted(set(by_step.values()))))
        raise FlowsUsageError(
            f"check_restore_equivalence(after_superstep={wanted!r}): the run saved no "
            f"checkpoint after superstep {missing[0]}; it saved after supersteps {saved}."
        )
    return chosen


def _restore_failure(full: WorkflowRun, store: FlowsCheckpointStorage, check: RestoreCheck) -> str:
    name = full.flow.name or "the workflow"
    lines = [
        f"restoring {name!r} from checkpoint {check.checkpoint_id} (saved after superstep "
        f"{check.superstep}; {store.rules} storage rules) and running on differs from the "
        "uninterrupted run."
    ]
    if check.changes:
        shown = check.changes[:_MAX_CHANGES]
        lines.append("Values that differ (uninterrupted run -> restored run):")
        lines.extend(f"  {change}" for change in shown)
        if len(check.changes) > len(shown):
            lines.append(f"  ... and {len(check.changes) - len(shown)} more")
    lines.append(
        "An executor keeps state it does not save in on_checkpoint_save(), or restores it "
        "changed in on_checkpoint_restore() (the checkpoint codec gives JSON object keys "
        "back as str); or the workflow reads something outside itself."
    )
    if check.diff:
        lines.append("What ran differs too:")
        lines.append(check.diff.rstrip("\n"))
    return "\n".join(lines)


# -- seeds ---------------------------------------------------------------------------


@contextlib.contextmanager
def seeded(flows: FlowsSession, seed: int) -> Iterator[None]:
    """Run the block's ``flows.run`` calls under scheduler ``seed`` (same clock, same ids)."""
    with reseeded(flows.scheduler, seed):  # the one reseed every helper uses
        yield


@dataclasses.dataclass
class SeedExploration:
    """The distinct runs seen across seeds.

    ``outcomes`` maps each distinct run's text (its normalized trace, final
    state, status, pending requests and error) to the seeds that gave it;
    ``runs`` maps each seed to its :class:`~pytest_flows.agent_framework.WorkflowRun`
    (raw values: ``runs[3].state`` is what seed 3's run holds).
    """

    outcomes: dict[str, list[int]]
    runs: dict[int, WorkflowRun]

    @property
    def distinct(self) -> int:
        return len(self.outcomes)

    @property
    def deterministic(self) -> bool:
        return self.distinct == 1

    def seeds_of(self, predicate: Callable[[WorkflowRun], bool]) -> list[int]:
        return [seed for seed, run in self.runs.items() if predicate(run)]

    def assert_deterministic(self) -> None:
        """Raise ``AssertionError`` showing how two seeds' runs differ, if they do."""
        if self.deterministic:
            return
        (first, seeds_a), (second, seeds_b) = list(self.outcomes.items())[:2]
        diff = "".join(
            difflib.unified_diff(
                first.splitlines(keepends=True),
                second.splitlines(keepends=True),
                fromfile=f"seed {seeds_a[0]}",
                tofile=f"seed {seeds_b[0]}",
            )
        )
        summary = "; ".join(f"seeds {seeds}" for seeds in self.outcomes.values())
        raise AssertionError(
            f"the run depends on the order concurrent executors run in: {self.distinct} "
            f"different runs across seeds ({summary}). Executors of one superstep race; "
            "look for shared state several of them write (last writer wins) or read while a "
            "sibling writes. Reproduce one with --flows-seed="
            f"{seeds_b[0]} or @pytest.mark.flows(seed={seeds_b[0]}).\n" + diff
        )


def _outcome_text(run: WorkflowRun) -> str:
    return run.trace.render() + "\n".join(_outcome(run)) + "\n"


def explore_seeds(
    flows: FlowsSession,
    build: WorkflowFactory,
    *args: Any,
    seeds: Iterable[int] = range(16),
    **kwargs: Any,
) -> SeedExploration:
    """Run ``flows.run(build(), *args, **kwargs)`` once per seed and group equal runs.

    Two runs are equal when their traces (which list each superstep in a
    canonical order), final state, status and pending requests are. Failed runs
    are kept (``raise_on_error=False``), so a seed that crashes shows up too.
    """
    if not callable(build):
        raise FlowsUsageError(
            "explore_seeds(flows, build, message) needs build, a function that returns a "
            f"fresh workflow each call, got {build!r}."
        )

    def outcome(run: Any) -> str:
        if not isinstance(run, WorkflowRun):
            raise FlowsUsageError("explore_seeds() works on Agent Framework workflows")
        return _outcome_text(run)

    found, outcomes = runs_by_seed(flows, build, seeds, outcome, args, kwargs)
    runs = {seed: run for seed, run in found.items() if isinstance(run, WorkflowRun)}
    if not runs:
        raise FlowsUsageError("explore_seeds(..., seeds=...) got no seeds; pass e.g. range(16)")
    return SeedExploration(outcomes, runs)
