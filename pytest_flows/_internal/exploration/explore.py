"""Systematic exploration: every schedule of a flow up to reduction, each outcome replayable.

:func:`explore_schedules` runs the flow again and again under a
:class:`~pytest_flows._internal.runtime.schedule.Chooser`, depth first over the choice points the
previous runs recorded. The reduction is dynamic partial-order reduction in its
simplest form (Flanagan and Godefroid): an alternative at a thread choice point is
tried only if some later step of that thread touched a state field or sync object
that a step of another thread, taken from that point, also touched with a write.
Threads that touch nothing another thread touches are therefore never
interleaved. Order choice points (``or_`` racer start order, Agent Framework
delivery order) are always tried in full.

An event loop's steps are told apart by asyncio task (:attr:`Step.task`): a task's
step happens after the step that created the task and after the end of the pool job
or task that woke it, not after the loop's other tasks. A race between two tasks'
steps is reversed where their order was decided, at the pool job that woke the
earlier one (:func:`_woken_by`). Tasks the loop's own steps put in its queue run first
in, first out, as asyncio runs them (:func:`_queued_before`): their order is no race.
The crewAI adapter records an ``or_`` race's decisions as accesses in the racers'
tasks (see ``ordered_races``), so who wins, who fires the ``or_`` listener and who is
cancelled are all explored.

The virtual clock is shared too: each move of it is a step of thread 0 (after the
steps that set the deadlines it reaches), and a step that read the clock (a wait's
deadline, ``time.monotonic()``) races with a move that lands within a seed's hold-back
window after the reading. Reversing such a race holds the reader back while the clock
moves first, as a seed may, so the reader's later waits end later.

``strategy="pct"`` instead runs ``runs`` random schedules (probabilistic
concurrency testing: ``depth`` priority change points per run) drawn from the
test's seed, for flows too large to enumerate.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.errors import FlowsError, FlowsUsageError, require_bool
from pytest_flows._internal.exploration.races import RaceResult, _by_seed, _check_seeds, races
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime.conflicts import Conflict, conflicts_in
from pytest_flows._internal.runtime.schedule import Choice, Chooser, Step, decode, encode
from pytest_flows._internal.runtime.sleep_sets import (
    AFTER,
    CLOCK,
    JOBS,
    POSTS,
    SleepSets,
    Summary,
    dependent,
)
from pytest_flows._internal.runtime.threads import MAX_DESCHEDULE, SAME_MOMENT
from pytest_flows._internal.trace import without_addresses

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["Exploration", "Outcome", "explore", "explore_schedules", "outcome_key"]


@dataclasses.dataclass
class Outcome:
    """One distinct outcome: output, final state and error (the race results, if any).

    ``schedule`` replays the first schedule that produced it; ``schedules`` counts them.
    """

    text: str
    schedule: str
    run: FlowRun
    schedules: int = 1

    @property
    def output(self) -> Any:
        """The flow's output in this outcome (``outcome.run.output``)."""
        return self.run.output

    @property
    def state(self) -> Any:
        """The flow's final state in this outcome (``outcome.run.state``)."""
        return self.run.state

    @property
    def error(self) -> BaseException | None:
        """The error the run ended with, or None (``outcome.run.error``)."""
        return self.run.error

    @property
    def races(self) -> list[RaceResult]:
        """How each ``or_`` race of the run ended (``races(outcome.run)``)."""
        return races(self.run)

    def __str__(self) -> str:
        return self.text


@dataclasses.dataclass
class Exploration:
    """What :func:`~pytest_flows.explore` found. ``assert exploration == snapshot``
    stores the outcome texts and conflicts (not schedule strings or counts, which
    depend on the reduction), so the snapshot says what the flow *can* do."""

    complete: bool
    outcomes: list[Outcome]
    schedules_run: int
    conflicts: list[Conflict]
    strategy: str = "dfs"
    #: Each schedule's record (what it chose and accessed), for the race check.
    choosers: list[Chooser] = dataclasses.field(default_factory=list, repr=False, compare=False)
    #: Why a search that ran out of schedules to try is still not complete ("" if it is):
    #: a run did something the reduction does not model (the adapter said so).
    caveat: str = ""

    def __len__(self) -> int:
        return len(self.outcomes)

    def __iter__(self) -> Any:
        return iter(self.outcomes)

    @property
    def texts(self) -> list[str]:
        return [o.text for o in self.outcomes]

    def snapshot_lines(self) -> tuple[str, list[str]]:
        """The snapshot's header and lines (the syrupy extension indents them)."""
        status = "complete" if self.complete else "incomplete"
        lines = [f"outcome: {o.text}" for o in self.outcomes]
        lines.extend(f"conflict: {c.render()}" for c in self.conflicts)
        return f"Exploration ({status})", lines

    def render(self) -> str:
        """The snapshot text: whether it is complete, each outcome, each conflict."""
        header, lines = self.snapshot_lines()
        return "\n".join([header, *(f"  {line}" for line in lines)])

    def __str__(self) -> str:
        status = "complete" if self.complete else "stopped before it was complete"
        if self.caveat:
            status = f"not complete: {self.caveat}"
        lines = [
            f"{len(self.outcomes)} outcome(s) over {self.schedules_run} schedule(s), {status}:"
        ]
        lines.extend(f"  {o.text}  <- schedule {o.schedule!r}" for o in self.outcomes)
        lines.extend(f"  conflict {c.render()}" for c in self.conflicts)
        return "\n".join(lines)


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    if isinstance(value, dict):
        # crewai's state id is a fresh uuid per run: not part of what the run did.
        return {str(k): _plain(v) for k, v in value.items() if k != "id"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return without_addresses(repr(value))


def outcome_key(run: FlowRun) -> str:
    """What distinguishes one outcome from another: output, final state, error, races."""
    parts = [f"output={json.dumps(_plain(run.output), sort_keys=True, default=str)}"]
    if run.state is not None:
        parts.append(f"state={json.dumps(_plain(run.state), sort_keys=True, default=str)}")
    parts.extend(race.render() for race in races(run))
    if run.error is not None:
        message = without_addresses(f"{type(run.error).__name__}: {run.error}")
        parts.append("error " + message.replace("\n", "\\n"))
    # normalized as the run's trace is: a uuid or timestamp the run drew is no new outcome
    return run._normalizer().text(" | ".join(parts))


@dataclasses.dataclass
class _Node:
    choice: Choice
    backtrack: set[int]
    done: set[int]
    #: The options in the order they were explored, each with its step (sleep sets).
    explored: list[int] = dataclasses.field(default_factory=list)
    summaries: dict[int, Summary] = dataclasses.field(default_factory=dict)
    #: The options asleep here (covered by an earlier branch: never tried).
    asleep: frozenset[int] = frozenset()


def _summaries(chooser: Chooser) -> list[Summary]:
    """What the chosen thread's step did at each choice point of a run (for sleep sets):
    the accesses of the steps until the next choice point, ``pool:jobs`` if a pool thread
    took a job there, and the sync objects of the thread's step before (a blocked
    acquire records its access before it waits)."""
    reads: list[set[str]] = [set() for _ in chooser.choices]
    writes: list[set[str]] = [set() for _ in chooser.choices]
    latest: dict[int, int] = {}
    pending: list[set[str]] = [set() for _ in chooser.choices]
    first: dict[int, int] = {}
    for k, choice in enumerate(chooser.choices):
        if choice.kind == "thread":
            first.setdefault(choice.step, k)
    for i, step in enumerate(chooser.steps):
        at = first.get(i)
        if at is not None and step.thread in latest:
            before = chooser.steps[latest[step.thread]]
            pending[at].update(
                key for key in (*before.reads, *before.writes) if key.startswith("sync:")
            )
        latest[step.thread] = i
        if 0 <= step.choice < len(reads):
            reads[step.choice].update(step.reads)
            writes[step.choice].update(step.writes)
    for k in chooser.job_choices:
        if 0 <= k < len(writes):
            writes[k].add(JOBS)
    for k in chooser.post_choices:
        if 0 <= k < len(writes):
            writes[k].add(POSTS)
    for k in chooser.clock_choices:
        if 0 <= k < len(reads):
            reads[k].add(CLOCK)
    return [
        Summary(frozenset(reads[k] | pending[k]), frozenset(writes[k] | pending[k]))
        for k in range(len(chooser.choices))
    ]


def _plan(tree: list[_Node], upto: int) -> list[list[tuple[int, Summary]]]:
    """For each of the first ``upto`` choice points: the options explored there before
    the one taken now, with their steps (they sleep in the branch taken now)."""
    plan: list[list[tuple[int, Summary]]] = []
    for node in tree[:upto]:
        taken = node.choice.index
        before = node.explored[: node.explored.index(taken)] if taken in node.explored else []
        plan.append([(i, node.summaries[i]) for i in before if i in node.summaries])
    return plan


#: How far ahead of a thread's step the clock may run while the thread is held back
#: (as with seeds: threads._soon).
_HOLD_BACK = MAX_DESCHEDULE + SAME_MOMENT


def _dependent(a: Step, b: Step) -> bool:
    if CLOCK not in a.reads and CLOCK not in b.reads and a.thread != 0 and b.thread != 0:
        return dependent(a.reads, a.writes, b.reads, b.writes)
    if dependent(
        [k for k in a.reads if k != CLOCK],
        [k for k in a.writes if k != CLOCK],
        [k for k in b.reads if k != CLOCK],
        [k for k in b.writes if k != CLOCK],
    ):
        return True
    # A read of the clock (a wait's deadline, time.monotonic()) against a move of the
    # clock: the other order holds the reader back while the clock moves first, which
    # one hold can do only for a move within the hold-back window (a longer delay is
    # several holds, each against a move in between, each a race of its own).
    return any(
        move.thread == 0
        and CLOCK in move.writes
        and CLOCK in read.reads
        and read.clock is not None
        and move.clock is not None
        and read.clock < move.clock <= read.clock + _HOLD_BACK
        for read, move in ((a, b), (b, a))
    )


def _ordered(earlier: Step, later: Step) -> bool:
    """Whether ``later`` reads an ``after:`` key ``earlier`` wrote: it happens after it in
    every order (no race: see schedule_sleep.AFTER)."""
    return any(k.startswith(AFTER) and k in earlier.writes for k in later.reads)


def _add_backtracks(chooser: Chooser, tree: list[_Node], reduction: bool) -> None:
    for node in tree:
        if node.choice.kind != "thread" or not reduction:
            node.backtrack.update(range(len(node.choice.options)))
    if not reduction:
        return
    steps = chooser.steps
    # Happens-before as vector clocks (Flanagan and Godefroid): clocks[j][task] is the
    # latest step of ``task`` that happens before step j (program order, a hand-off
    # of work, or a dependent access).
    clocks: list[dict[tuple[int, int], int]] = []
    last: dict[tuple[int, int], int] = {}
    # loop thread -> its tasks' steps that began a wake the loop's own steps made
    woken: dict[int, list[int]] = {}
    for j, later in enumerate(steps):
        task = (later.thread, later.task)
        clock: dict[tuple[int, int], int] = {}
        for before in ([last[task]] if task in last else []) + list(later.after):
            _join(clock, clocks[before])
        if later.thread in chooser.loops and later.task != 0 and later.after:
            for i in _queued_before(steps, clocks, woken.get(later.thread, []), later):
                _join(clock, clocks[i])
            if all(steps[a].thread == later.thread for a in later.after):
                woken.setdefault(later.thread, []).append(j)
        race = -1
        base = clock  # what happens before step j by program order and hand-offs alone
        if later.reads or later.writes:
            merged = dict(clock)
            for i in range(j - 1, -1, -1):
                earlier = steps[i]
                other = (earlier.thread, earlier.task)
                if other == task:
                    continue
                if not _dependent(earlier, later):
                    if _ordered(earlier, later):
                        _join(merged, clocks[i])
                        merged[other] = max(merged.get(other, -1), i)
                    continue
                if race < 0 and clock.get(other, -1) < i:
                    race = i  # the latest step racing with this one
                _join(merged, clocks[i])
                merged[other] = max(merged.get(other, -1), i)
            clock = merged
        clock[task] = j
        clocks.append(clock)
        last[task] = j
        if race >= 0:
            _reverse(tree, steps, clocks, _woken_by(steps, chooser.loops, base, race), j)


def _queued_before(
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    earlier: list[int],
    later: Step,
) -> list[int]:
    """The steps of ``earlier`` (other tasks of ``later``'s loop, each the first step after
    a wake) that run before ``later`` in every order of what woke them: asyncio runs its
    ready tasks first in, first out, so a task put in the queue by loop steps that all
    happen before (or are) a step ``later`` waits for runs first. Without this a race
    between the two (the loop cannot reverse it) hid an earlier race of ``later`` that a
    schedule can reverse (a sync start's append against a listener's, the start held
    back past a timer: ``tests/crewai/test_explore_shapes.py``).

    The caller keeps in ``earlier`` only wakes the loop's own steps made (creating a
    task, a task's end, a timer's turn): a pool job's end reaches the queue through a
    callback of its own, a turn later.
    """
    found: list[int] = []
    tasks: set[int] = set()  # a task's latest such step holds its earlier ones
    for i in reversed(earlier):
        step = steps[i]
        if step.task == later.task or step.task in tasks:
            continue
        if all(_covered(steps, clocks, a, later.after) for a in step.after):
            found.append(i)
            tasks.add(step.task)
    return found


def _covered(
    steps: list[Step], clocks: list[dict[tuple[int, int], int]], a: int, by: tuple[int, ...]
) -> bool:
    """Whether step ``a`` is one of ``by`` or happens before one of them."""
    key = (steps[a].thread, steps[a].task)
    return any(a == w or clocks[w].get(key, -1) >= a for w in by)


def _woken_by(
    steps: list[Step], loops: set[int], clock: dict[tuple[int, int], int], at: int
) -> int:
    """The step whose ordering decides when step ``at`` ran: ``at`` itself, or for a step of
    an asyncio task the pool job that woke it (the loop runs the task once the job's
    result arrives, so the two orders of the race are the two orders of that job's end
    and what leads to step ``j``; ``clock`` is ``j``'s: a waker ``j`` also follows
    decides nothing between them)."""
    current = at
    while steps[current].thread in loops and steps[current].task != 0:
        wakers = [
            k for k in steps[current].after if clock.get((steps[k].thread, steps[k].task), -1) < k
        ]
        if not wakers:
            break
        current = max(wakers)  # a pool job; or a task that ended, and woke this one
    return current


def _join(into: dict[tuple[int, int], int], other: dict[tuple[int, int], int]) -> None:
    for key, value in other.items():
        if into.get(key, -1) < value:
            into[key] = value


def _reverse(
    tree: list[_Node],
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    at: int,
    j: int,
) -> None:
    """Make a later schedule run step ``j`` (or what leads to it) before step ``at``.

    At the choice point where ``at`` began (Flanagan and Godefroid): ``j``'s thread
    when it was ready there (and did not run ``at``); the clock option if ``j``'s thread
    slept there and its wait ends at the moment the clock runs to. Otherwise one of the
    *initials* of what leads to ``j`` (source sets, Abdulla et al.): the first steps after
    ``at``, not after it, that happen before ``j`` with nothing of that chain before them
    (the loop's task that hands ``j``'s thread its job, the job that wakes it). Every
    order running ``j`` before ``at`` begins with one of them, so one is enough. Only
    when none of them can be run there (its thread ran ``at``, or it is neither ready nor
    woken by the clock: a thread that a release not recorded as an access lets go) is
    every option of the point tried; trying only the likeliest guess (the clock) once
    missed orders seeds reach (three listeners appending to one list: the last started
    first).
    """
    thread = steps[j].thread
    for k in range(steps[at].choice, -1, -1):
        node = tree[k]
        if node.choice.kind != "thread":
            continue  # order choices are explored in full anyway
        options = node.choice.options
        ran = options[node.choice.index]
        if thread in options and thread != ran:
            node.backtrack.add(options.index(thread))
        elif thread in node.choice.woken and ran != 0:
            # ``j``'s thread was asleep there, and its wait ended at the moment the clock
            # option runs to: that option is the first step of every order running ``j``
            # first (source sets, Abdulla et al.); the others only put it off.
            node.backtrack.add(options.index(0))
        else:
            found = _initial_options(node.choice, steps, clocks, at, j)
            if found is None:
                node.backtrack.update(range(len(options)))
            elif not found & (node.backtrack | node.asleep):
                node.backtrack.add(min(found))
        return


def _initial_options(
    choice: Choice,
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    at: int,
    j: int,
) -> set[int] | None:
    """The options of ``choice`` (where ``at`` began) that run an initial of the chain
    leading to ``j`` first (see :func:`_reverse`); None if some initial cannot be run
    there (then only every option is safe)."""
    first = (steps[at].thread, steps[at].task)
    target = clocks[j]
    chain: list[int] = []
    for e in range(at + 1, j + 1):
        task = (steps[e].thread, steps[e].task)
        if e != j and target.get(task, -1) < e:
            continue  # not on the way to j
        if clocks[e].get(first, -1) >= at:
            continue  # after ``at``: runs after it in every order
        chain.append(e)
    initials = [
        e
        for e in chain
        if not any(clocks[e].get((steps[d].thread, steps[d].task), -1) >= d for d in chain if d < e)
    ]
    options = choice.options
    ran = options[choice.index]
    found: set[int] = set()
    for e in initials:
        seq = steps[e].thread
        if seq in options and seq != ran:
            found.add(options.index(seq))
        elif seq in choice.woken and ran != 0:
            found.add(options.index(0))
        else:
            return None
    return found or None


def _next_prefix(tree: list[_Node], fixed: int = 0) -> list[int] | None:
    for k in range(len(tree) - 1, fixed - 1, -1):
        node = tree[k]
        pending = sorted(node.backtrack - node.done - node.asleep)
        if pending:
            choice = pending[0]
            node.done.add(choice)
            node.explored.append(choice)
            node.choice = dataclasses.replace(node.choice, index=choice)
            del tree[k + 1 :]
            return [n.choice.index for n in tree]
    return None


class _PctChooser(Chooser):
    """PCT: thread options get random priorities; ``depth`` times the running thread's
    priority drops below everyone's. Order choice points pick uniformly."""

    def __init__(self, rng: random.Random, depth: int, length: int) -> None:
        super().__init__([])
        self._rng = rng
        self._priority: dict[int, float] = {}
        self._changes = set(rng.sample(range(max(length, depth)), depth)) if depth else set()
        self._low = 0.0

    def pick(self, kind: str, options: tuple[int, ...], woken: tuple[int, ...] = ()) -> int:
        at = len(self.choices)
        if kind == "thread":
            for seq in options:
                self._priority.setdefault(seq, self._rng.random() + 1)
            index = max(range(len(options)), key=lambda i: self._priority[options[i]])
            if at in self._changes:
                self._low -= 1
                self._priority[options[index]] = self._low
                index = max(range(len(options)), key=lambda i: self._priority[options[i]])
        else:
            index = self._rng.randrange(len(options))
        self.prefix.append(index)
        return super().pick(kind, options, woken)


def explore_schedules(
    flows: FlowsSession,
    make_run: Callable[[], FlowRun],
    *,
    max_schedules: int,
    reduction: bool = True,
    strategy: str = "dfs",
    depth: int = 3,
    runs: int = 100,
    prefix: str = "s",
) -> Exploration:
    """Run ``make_run`` under schedule after schedule (see the module docstring);
    ``prefix`` (a schedule string) fixes the first choices: one part of a split search."""
    by_text: dict[str, Outcome] = {}
    choosers: list[Chooser] = []
    caveats: set[str] = set()

    def one(chooser: Chooser) -> None:
        try:
            with flows.scheduler.following(chooser):
                run = make_run()
        except FlowsUsageError:
            if chooser.misfit is None or not choosers:
                raise  # the first run follows the caller's prefix: theirs to fix
        if chooser.misfit is not None and not choosers:
            raise chooser.misfit
        if chooser.misfit is not None:
            raise FlowsError(
                f"explore(): schedule {chooser.schedule_text or encode(chooser.prefix)!r} "
                f"ran differently from the run it was derived from ({chooser.misfit}). "
                "The flow made a choice the harness does not control: real time, a thread "
                "or loop the harness does not run, or state kept between runs (a module "
                "global, a class attribute). Make the flow deterministic under a seed "
                "(two runs with --flows-seed=N give the same trace) and explore again."
            ) from None
        choosers.append(chooser)
        text = outcome_key(run)
        # Something the run did that the reduction does not model (the adapter says).
        caveats.update(chooser.caveats)
        seen = by_text.get(text)
        if seen is None:
            by_text[text] = Outcome(text, chooser.schedule, run)
        else:
            seen.schedules += 1

    complete = False
    caveat = ""
    if strategy == "pct":
        rng = random.Random(f"pytest-flows-pct:{flows.seed}:{flows.test_id}")
        length = 0
        for _ in range(min(runs, max_schedules)):
            drawn = _PctChooser(rng, depth, length)
            one(drawn)
            length = max(length, len(drawn.choices))
    elif strategy == "dfs":
        tree: list[_Node] = []
        fixed = decode(prefix)
        following: list[int] | None = fixed
        while following is not None and len(choosers) < max_schedules:
            sleep = SleepSets(_plan(tree, len(following))) if reduction else None
            chooser = Chooser(following, schedule=prefix if not choosers else "", sleep=sleep)
            one(chooser)
            summaries = _summaries(chooser)
            for node, choice in zip(tree, chooser.choices, strict=False):
                # The same choice point, but this run's threads: their numbers (seqs) are
                # new each run, and the reduction matches them against this run's steps.
                node.choice = choice
            fresh = [
                _Node(c, {c.index}, {c.index}, [c.index]) for c in chooser.choices[len(tree) :]
            ]
            tree.extend(fresh)
            for k, node in enumerate(tree[: len(chooser.choices)]):
                node.summaries.setdefault(node.choice.index, summaries[k])
                if sleep is not None and k < len(sleep.asleep):
                    node.asleep = sleep.asleep[k]
            _add_backtracks(chooser, tree, reduction)
            following = _next_prefix(tree, len(fixed))
        complete = following is None and not caveats
        caveat = " ".join(sorted(caveats)) if following is None else ""
    else:
        raise FlowsUsageError(
            f"explore(..., strategy={strategy!r}): the strategies are 'dfs' (the default: "
            "every schedule up to reduction) and 'pct' (random schedules, for large flows)."
        )
    outcomes = sorted(by_text.values(), key=lambda o: o.text)
    return Exploration(
        complete=complete,
        caveat=caveat,
        outcomes=outcomes,
        schedules_run=len(choosers),
        conflicts=conflicts_in(choosers),
        strategy=strategy,
        choosers=choosers,
    )


def explore(
    flows: FlowsSession,
    target: Any,
    *args: Any,
    seeds: Iterable[int] | None = None,
    max_schedules: int = 1000,
    strategy: str = "dfs",
    depth: int = 3,
    runs: int = 100,
    reduction: bool = True,
    prefix: str = "s",
    **kwargs: Any,
) -> Any:
    """Every outcome of ``target``, one run per schedule (see
    :mod:`pytest_flows._internal.exploration.explore`).

    Without ``seeds`` the schedules are enumerated (``strategy="dfs"``, up to
    ``max_schedules``) or drawn (``strategy="pct"``) and an
    :class:`~pytest_flows._internal.exploration.explore.Exploration` comes back. With ``seeds`` the
    flow runs once per seed and the races are collected into :class:`RaceOutcomes`.

    ``prefix`` (a schedule string, ``"s1"``) fixes the first choices: the parts
    ``"s0"``, ``"s1"``, ... of the first choice point's options split one search
    across tests (and xdist workers); their outcomes together are the whole's.

    ``target`` is a flow class or a zero-argument factory: every run needs a
    fresh instance. Runs that fail are kept (their error is part of the
    outcome). Scripted fakes are shared by all runs, so script replies every
    run can use (``fake_llm.on(...)`` rules rather than a one-off queue).
    """
    if not hasattr(flows, "scheduler") or not callable(getattr(flows, "run", None)):
        raise FlowsUsageError(
            f"explore(flows, MyFlow, ...) takes the `flows` fixture first, got "
            f"{type(flows).__qualname__}."
        )
    require_bool(reduction, "explore(reduction=...)")
    if isinstance(target, type):
        build = None
    elif callable(target):
        build = target
    else:
        raise FlowsUsageError(
            f"explore() runs the flow once per seed, so it needs the flow class or a "
            f"zero-argument factory (lambda: MyFlow(...)), not an instance; got {target!r} "
            f"({type(target).__qualname__}). An instance keeps what it completed and cannot "
            "run again."
        )

    def fresh() -> Any:
        return target if build is None else build()

    if seeds is None:
        found = _systematic(
            flows, fresh, args, kwargs, max_schedules, strategy, depth, runs, reduction, prefix
        )
        if getattr(flows, "races", "off") not in (None, "off"):
            # races="fail" counts the explored runs too (their conflicts are the test's).
            name = target.__name__ if build is None else type(fresh()).__name__

            def again() -> FlowRun:
                return flows.run(fresh(), *args, raise_on_error=False, **kwargs)

            for chooser in found.choosers:
                chooser.rerun = (name, again)
            flows.recorded_schedules.extend(found.choosers)
        return found
    chosen = _check_seeds(seeds)
    return _by_seed(flows, fresh, args, kwargs, chosen)


def _systematic(
    flows: FlowsSession,
    fresh: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    max_schedules: int,
    strategy: str,
    depth: int,
    runs: int,
    reduction: bool,
    prefix: str,
) -> Any:
    for name, value, least in (
        ("max_schedules", max_schedules, 1),
        ("runs", runs, 1),
        ("depth", depth, 0),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            raise FlowsUsageError(
                f"explore(..., {name}={value!r}): pass a whole number >= {least}, "
                f"e.g. {name}={max(least, 3)}."
            )
    return explore_schedules(
        flows,
        lambda: flows.run(fresh(), *args, raise_on_error=False, **kwargs),
        max_schedules=max_schedules,
        reduction=reduction,
        strategy=strategy,
        depth=depth,
        runs=runs,
        prefix=prefix,
    )
