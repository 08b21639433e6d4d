"""Where the next schedules go: each race a run showed is reversed at the choice point
where it began, and sleep sets keep a branch from running again what an earlier one
covered (:func:`add_backtracks`, :func:`next_prefix`, :func:`summaries`).

The search (:mod:`~pytest_flows._internal.exploration.explore`) runs the flow again and
again, depth first over the choice points the previous runs recorded. The reduction is
dynamic partial-order reduction in its simplest form (Flanagan and Godefroid): an
alternative at a thread choice point is tried only if some later step of that thread
touched a state field or sync object that a step of another thread, taken from that
point, also touched with a write. Threads that touch nothing another thread touches are
therefore never interleaved. Order choice points (``or_`` racer start order, Agent
Framework delivery order) are always tried in full.

An event loop's steps are told apart by asyncio task (:attr:`Step.task`): a task's
step happens after the step that created the task and after the end of the pool job
or task that woke it, not after the loop's other tasks. A race between two tasks'
steps is reversed where their order was decided, at the pool job that woke the
earlier one (:func:`_woken_by`); a race of a task's step with another thread's step
also where the loop ran the step (:func:`_decided_at`). Tasks the loop's own steps put
in its queue run first in, first out, as asyncio runs them (:func:`_queued_before`):
their order is no race.
The crewAI adapter records an ``or_`` race's decisions as accesses in the racers'
tasks (see ``ordered_races``), so who wins, who fires the ``or_`` listener and who is
cancelled are all explored.

The virtual clock is shared too: each move of it is a step of thread 0 (after the
steps that set the deadlines it reaches), and a step that read the clock (a wait's
deadline, ``time.monotonic()``) races with a move that lands within a seed's hold-back
window after the reading. Reversing such a race holds the reader back while the clock
moves first, as a seed may, so the reader's later waits end later.
"""

from __future__ import annotations

import dataclasses

from pytest_flows._internal.runtime.schedule import Choice, Chooser, Step
from pytest_flows._internal.runtime.sleep_sets import (
    AFTER,
    CLOCK,
    JOBS,
    LOOKED_AT,
    POSTS,
    Summary,
    dependent,
)
from pytest_flows._internal.runtime.threads import MAX_DESCHEDULE, SAME_MOMENT

__all__ = [
    "Node",
    "add_backtracks",
    "next_prefix",
    "ordered_after",
    "sleep_plan",
    "steps_dependent",
    "summaries",
]


@dataclasses.dataclass
class Node:
    choice: Choice
    backtrack: set[int]
    done: set[int]
    #: The options in the order they were explored, each with its step (sleep sets).
    explored: list[int] = dataclasses.field(default_factory=list)
    summaries: dict[int, Summary] = dataclasses.field(default_factory=dict)
    #: The options asleep here (covered by an earlier branch: never tried).
    asleep: frozenset[int] = frozenset()


def summaries(chooser: Chooser) -> list[Summary]:
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


def sleep_plan(tree: list[Node], upto: int) -> list[list[tuple[int, Summary]]]:
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


def steps_dependent(a: Step, b: Step) -> bool:
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


def ordered_after(earlier: Step, later: Step) -> bool:
    """Whether ``later`` reads an ``after:`` key ``earlier`` wrote: it happens after it in
    every order (no race: see schedule_sleep.AFTER)."""
    return any(k.startswith(AFTER) and k in earlier.writes for k in later.reads)


def add_backtracks(chooser: Chooser, tree: list[Node], reduction: bool) -> None:
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
    # a loop's turn that fired timers -> the first steps of the tasks they woke
    fired: dict[int, list[int]] = {}
    for j, later in enumerate(steps):
        task = (later.thread, later.task)
        clock: dict[tuple[int, int], int] = {}
        for before in [last[task]] if task in last else []:
            _join(clock, clocks[before])
        # What each step ``later`` follows brings along (a timer's move: see _move_for).
        brought = [
            _move_for(steps, clocks, b, task)
            if steps[b].thread == 0 and later.thread != 0
            else clocks[b]
            for b in later.after
        ]
        for other_clock in brought:
            _join(clock, other_clock)
        if later.thread in chooser.loops and later.task != 0 and later.after:
            for i in _queued_before(steps, clocks, woken.get(later.thread, []), later, brought):
                _join(clock, clocks[i])
            if all(steps[a].thread == later.thread for a in later.after):
                woken.setdefault(later.thread, []).append(j)
            turn = _timer_turn(steps, later)
            if turn is not None:
                for i in fired.get(turn, []):
                    _join(clock, clocks[i])
                fired.setdefault(turn, []).append(j)
        race = -1
        earlier_races: list[int] = []  # the other steps racing with this one (see below)
        base = clock  # what happens before step j by program order and hand-offs alone
        if later.reads or later.writes:
            merged = dict(clock)
            for i in range(j - 1, -1, -1):
                earlier = steps[i]
                if not earlier.reads and not earlier.writes:
                    continue  # touches nothing: depends on no step, ordered after none
                other = (earlier.thread, earlier.task)
                if other == task:
                    continue
                if not steps_dependent(earlier, later):
                    if ordered_after(earlier, later):
                        _join(merged, clocks[i])
                        merged[other] = max(merged.get(other, -1), i)
                    continue
                if race < 0 and clock.get(other, -1) < i:
                    race = i  # the latest step racing with this one
                elif merged.get(other, -1) < i:
                    # A race too: no later step that j depends on comes after it.
                    earlier_races.append(i)
                _join(merged, clocks[i])
                merged[other] = max(merged.get(other, -1), i)
            clock = merged
        clock[task] = j
        clocks.append(clock)
        last[task] = j
        covered = False
        forks = len(tree)  # the earliest choice point the latest race is reversed at
        if race >= 0:
            for at in _decided_at(steps, chooser.loops, base, race, j):
                covered = _reverse(tree, steps, clocks, at, j, chooser.loops) or covered
                forks = min(forks, _point_index(tree, steps, at))
        # A look no recorded wake led to (the racing task of an or_ race, woken through
        # asyncio.as_completed): the run that reverses its latest race need not keep its
        # earlier ones, since where that task runs follows no recorded step
        # (docs/exploration.md, "A job's end placed by its races").
        unwoken = _unwoken_look(later, chooser.loops)
        for i in earlier_races:
            # An earlier race is reversed by the run that reverses the latest one, where
            # it becomes the latest, unless that run is not made or need not keep this
            # race: a sleep set keeps it from being made (the latest race's reversal is
            # covered by a sleeping option, or j's thread sleeps where this race began:
            # docs/exploration.md, "A race behind a sleeping thread"), or it branches
            # off before this race began (a loop task's race is reversed where the job
            # that woke it ran, which can be long before: that run need not put this
            # race's first step before j again; docs/exploration.md, "An earlier race
            # decided after the latest one's fork").
            for at in _decided_at(steps, chooser.loops, base, i, j):
                if (
                    covered
                    or unwoken
                    or _sleeps_at(tree, steps, at, j)
                    or _point_index(tree, steps, at) > forks
                ):
                    _reverse_by_initials(tree, steps, clocks, at, j)


def _timer_turn(steps: list[Step], step: Step) -> int | None:
    """The loop's turn whose timer woke ``step``'s task, when that is all that woke it (its
    ``after``: the turn and the clock's move that reached the timer). Timers one turn
    fires wake their tasks in the order it fires them, and each task runs a turn later,
    first in, first out, so the tasks one turn woke by timers run in the order they
    first ran: the order the timers left the heap in, decided where they were set (two
    sets for one moment race: ``runtime.participants.TIMER_MOMENT``; timers due at
    different moments fire in the order of their moments, which the clock's races
    decide). docs/exploration.md, "Two sleeps that end at one moment"."""
    if len(step.after) != 2:
        return None
    turn, move = sorted(step.after, key=lambda a: steps[a].thread != step.thread)
    if steps[turn].thread != step.thread or steps[turn].task != 0 or steps[move].thread != 0:
        return None
    return turn


def _unwoken_look(step: Step, loops: set[int]) -> bool:
    """Whether ``step`` is an asyncio task's look at what a job's end wants
    (``sleep_sets.LOOKED_AT``) with no recorded wake before it."""
    return (
        step.thread in loops
        and step.task != 0
        and not step.after
        and any(k.startswith(LOOKED_AT) for k in step.writes)
    )


def _decided_at(
    steps: list[Step], loops: set[int], clock: dict[tuple[int, int], int], i: int, j: int
) -> list[int]:
    """The steps where the order of racing steps ``i`` and ``j`` was decided, each
    reversed where it began: where ``i``'s task was woken (:func:`_woken_by`), and, when
    that is an earlier step and ``j`` runs on another thread than ``i``'s loop, ``i``
    itself. A task does not run the moment the job that woke it ends: the loop may be
    held back at a choice point in between (while the clock runs to another thread's
    wake-up, say), and ``j``'s thread can go first there (docs/exploration.md, "A loop
    step's race, where the step ran")."""
    woken = _woken_by(steps, loops, clock, i)
    if woken != i and steps[i].thread != steps[j].thread:
        return [woken, i]
    return [woken]


def _move_for(
    steps: list[Step], clocks: list[dict[tuple[int, int], int]], move: int, task: tuple[int, int]
) -> dict[tuple[int, int], int]:
    """What a timer's task inherits from the move of the clock that reached its timer: the
    move itself and what led to the timer's own deadline, not what led to the other
    deadlines the move reached at the same moment (another thread's sleep set after the
    race): in an order without them a move reaches the timer all the same
    (docs/exploration.md, "A sync start held past an async start's timer")."""
    found: dict[tuple[int, int], int] = {(0, steps[move].task): move}
    for at in steps[move].after:
        if (steps[at].thread, steps[at].task) == task:
            _join(found, clocks[at])
    return found


def _queued_before(
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    earlier: list[int],
    later: Step,
    brought: list[dict[tuple[int, int], int]],
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
        if all(_covered(steps, a, later.after, brought) for a in step.after):
            found.append(i)
            tasks.add(step.task)
    return found


def _covered(
    steps: list[Step], a: int, by: tuple[int, ...], brought: list[dict[tuple[int, int], int]]
) -> bool:
    """Whether step ``a`` is one of ``by`` or happens before one of them (``brought``:
    what each of ``by`` brings along)."""
    key = (steps[a].thread, steps[a].task)
    return any(a == w or seen.get(key, -1) >= a for w, seen in zip(by, brought, strict=True))


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
    tree: list[Node],
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    at: int,
    j: int,
    loops: set[int],
) -> bool:
    """Make a later schedule run step ``j`` (or what leads to it) before step ``at``;
    True when a sleep set covers it instead (no branch runs it: see add_backtracks).

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

    A step of an asyncio task (``j`` on one of ``loops``) always goes by its initials:
    running the loop there runs that task only if what woke it already ran, and a job's
    end that wakes it is held rather than run by default past the loop's turns
    (docs/exploration.md, "A job's end placed by its races").
    """
    thread = steps[j].thread
    node = _thread_point(tree, steps, at)
    if node is None:
        return False
    if thread in loops and steps[j].task != 0:
        return _add_initial(node, _initial_options(node.choice, steps, clocks, at, j))
    options = node.choice.options
    ran = options[node.choice.index]
    if thread in options and thread != ran and options.index(thread) in node.asleep:
        # ``j``'s thread sleeps there (an earlier branch ran its step first from an
        # earlier point): adding it tries nothing, and the orders that reverse the
        # race but begin with another thread's move are not covered by that branch.
        return _reverse_by_initials(tree, steps, clocks, at, j)
    if thread in options and thread != ran:
        node.backtrack.add(options.index(thread))
    elif thread in node.choice.woken and ran != 0:
        # ``j``'s thread was asleep there, and its wait ended at the moment the clock
        # option runs to: that option is the first step of every order running ``j``
        # first (source sets, Abdulla et al.); the others only put it off.
        node.backtrack.add(options.index(0))
    else:
        return _add_initial(node, _initial_options(node.choice, steps, clocks, at, j))
    return False


def _thread_point(tree: list[Node], steps: list[Step], at: int) -> Node | None:
    """The thread choice point where step ``at`` began (order choices before it are
    explored in full anyway, so they are passed over)."""
    for k in range(steps[at].choice, -1, -1):
        if tree[k].choice.kind == "thread":
            return tree[k]
    return None


def _point_index(tree: list[Node], steps: list[Step], at: int) -> int:
    """The index of the thread choice point where step ``at`` began (-1: none)."""
    for k in range(steps[at].choice, -1, -1):
        if tree[k].choice.kind == "thread":
            return k
    return -1


def _sleeps_at(tree: list[Node], steps: list[Step], at: int, j: int) -> bool:
    """Whether ``j``'s thread sleeps at the choice point where step ``at`` began."""
    thread = steps[j].thread
    node = _thread_point(tree, steps, at)
    if node is None:
        return False
    options = node.choice.options
    return thread in options and options.index(thread) in node.asleep


def _reverse_by_initials(
    tree: list[Node],
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    at: int,
    j: int,
) -> bool:
    """The source-set rule for the race of steps ``at`` and ``j`` (Abdulla et al.): at the
    choice point where ``at`` began, an option that runs an initial of what leads to ``j``
    (not after ``at``) is tried, unless one already is or sleeps there (an option asleep
    there was explored first from an earlier point, its step the same: the orders that
    begin with it are covered). When some initial cannot be run there, every option.
    True when a sleeping option covers it (no branch runs it)."""
    node = _thread_point(tree, steps, at)
    if node is None:
        return False
    return _add_initial(node, _initial_options(node.choice, steps, clocks, at, j))


def _add_initial(node: Node, found: set[int] | None) -> bool:
    """Try one of the options ``found`` at ``node`` unless one is tried or asleep there
    (every option when ``found`` is None); True when only a sleeping one covers them."""
    if found is None:
        node.backtrack.update(range(len(node.choice.options)))
        return False
    if found & node.backtrack:
        return False
    if found & node.asleep:
        return True
    node.backtrack.add(min(found))
    return False


def _initial_options(
    choice: Choice,
    steps: list[Step],
    clocks: list[dict[tuple[int, int], int]],
    at: int,
    j: int,
) -> set[int] | None:
    """The options of ``choice`` (where ``at`` began) that run an initial of the chain
    leading to ``j`` first (see :func:`_reverse`); None if some initial cannot be run
    there (then only every option is safe).

    What a thread runs between two choice points is one move, however many steps it
    was recorded as (an empty step at the switch point, then the node's access): the
    move is an initial only if none of its steps comes after another thread's step of
    the chain. Looking at its first step alone took a thread whose access waits for
    another's for an initial (a store put after a get it depends on)."""
    first = (steps[at].thread, steps[at].task)
    target = clocks[j]
    chain: list[int] = []
    for e in range(at + 1, j + 1):
        task = (steps[e].thread, steps[e].task)
        if e != j and target.get(task, -1) < e:
            continue  # not on the way to j
        if e != j and clocks[e].get(first, -1) >= at:
            continue  # after ``at``: runs after it in every order (``j`` only by the race)
        chain.append(e)

    def move(e: int) -> tuple[int, int]:
        return (steps[e].thread, steps[e].choice)

    def after(e: int, d: int) -> bool:
        return clocks[e].get((steps[d].thread, steps[d].task), -1) >= d

    waits = {
        move(e) for e in chain if any(d < e and move(d) != move(e) and after(e, d) for d in chain)
    }
    initials: list[int] = []
    seen: set[tuple[int, int]] = set()
    for e in chain:
        task = (steps[e].thread, steps[e].task)
        if task in seen:
            continue  # a task's later moves come after its first
        seen.add(task)
        if move(e) not in waits:
            initials.append(e)
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


def next_prefix(tree: list[Node], fixed: int = 0) -> list[int] | None:
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
