"""Schedules: every seeded decision of a run, as a short string that replays it exactly.

A run makes decisions at *choice points*: which ready thread runs at a switch point
of the :mod:`~pytest_flows._internal.runtime.threads` scheduler, and in which order
:meth:`~pytest_flows._internal.runtime.loop.Scheduler.order` starts ``or_`` racers or Agent
Framework deliveries. With a :class:`Chooser` installed, every one of them goes through
:meth:`Chooser.pick`, which takes the next index of its *prefix* and, past the
prefix, index 0. Options are listed with the seed-0 choice first, so index 0
everywhere is the default schedule and a schedule only spells out where it
departs from it.

A schedule string is ``s`` followed by one base-36 digit per choice point
(``s0102``), trailing zeros dropped (``s`` is the default schedule); a choice
point with more than 36 options switches the whole string to dotted decimals
(``s.0.40.2``).

A schedule that starts with ``w`` instead (what the hypothesis strategy
:func:`pytest_flows._internal.state.strategies.schedules` draws) fits any run: each index wraps
around the options of its choice point. ``run.schedule`` is then the exact
``s`` schedule the run followed.
"""

from __future__ import annotations

import dataclasses
import string
import weakref
from collections.abc import Callable
from typing import Any

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.runtime.aliases import Aliases
from pytest_flows._internal.runtime.sleep_sets import CLOCK, SleepSets

__all__ = ["Choice", "Chooser", "Step", "decode", "encode"]

_DIGITS = string.digits + string.ascii_lowercase


def encode(indices: list[int]) -> str:
    """The schedule string of a list of choice indices."""
    trimmed = list(indices)
    while trimmed and trimmed[-1] == 0:
        trimmed.pop()
    if any(i >= len(_DIGITS) for i in trimmed):
        return "s." + ".".join(map(str, trimmed))
    return "s" + "".join(_DIGITS[i] for i in trimmed)


def decode(text: object) -> list[int]:
    """The choice indices of a schedule string (see :func:`encode`)."""
    if not isinstance(text, str) or not text.startswith(("s", "w")):
        raise FlowsUsageError(
            f"a flows schedule is a string like 's0102' (as explore() reports it in "
            f"outcome.schedule), got {text!r}."
        )
    body = text[1:]
    try:
        if body.startswith("."):
            return [int(part) for part in body[1:].split(".") if part]
        return [_DIGITS.index(ch) for ch in body]
    except ValueError:
        raise FlowsUsageError(
            f"schedule {text!r} is damaged: after 's' come base-36 digits (0-9, a-z), or "
            "'.'-separated numbers; copy it exactly as explore() reported it."
        ) from None


@dataclasses.dataclass
class Choice:
    """One choice point of a run: what was decided, among which options, and how."""

    kind: str  # "thread" (who runs) or "order" (racer or delivery order)
    options: tuple[int, ...]  # thread seqs for "thread"; positions for "order"
    index: int
    step: int  # the step the choice started (threads) or the steps so far (orders)
    #: The threads the clock option (seq 0) wakes: those whose wait ends at the moment
    #: the clock would run to.
    woken: tuple[int, ...] = ()


@dataclasses.dataclass
class Step:
    """What one thread did between two switch points: the state fields and sync objects
    it read and wrote (the race detector and the reduction read these)."""

    thread: int
    choice: int  # the latest choice point at or before the step's start (-1: none)
    reads: dict[str, str] = dataclasses.field(default_factory=dict)  # key -> where
    writes: dict[str, str] = dataclasses.field(default_factory=dict)
    method: str = ""
    #: Which piece of work of its thread (a pool thread runs one job after another):
    #: two jobs of one thread are not ordered by the thread, another could run either.
    #: On an event loop's thread, the asyncio task the step ran in (numbered in the
    #: order the run first saw them; 0: the loop's own callbacks): tasks of one loop
    #: are ordered only by what wakes them, not by the loop.
    task: int = 0
    #: Steps that happen before this one although they touch nothing in common (the
    #: step that handed this job to a pool thread or started this thread or task, the
    #: end of the pool job whose result woke this task).
    after: tuple[int, ...] = ()
    #: The virtual clock: its first reading in a step that read it (a wait's deadline),
    #: or where it moved to in a step of the clock (thread 0).
    clock: float | None = None


class Chooser:
    """Makes every decision of one run from a prefix of choice indices, and records it."""

    def __init__(
        self,
        prefix: list[int] | None = None,
        *,
        schedule: str = "",
        wrap: bool = False,
        passive: bool = False,
        sleep: SleepSets | None = None,
    ) -> None:
        self.prefix = list(prefix or [])
        #: The sleep sets of the search this run belongs to (None: no reduction).
        self.sleep = sleep
        #: The virtual clock's reading at the choice point being made (set by the scheduler).
        self.now: float | None = None
        #: Whether an event loop has a callback queued or a timer due at the choice point
        #: being made (set by the scheduler; see SleepSets.settle).
        self.queued = True
        #: Records what the run accessed while the seed makes every choice (the race
        #: check of a seeded run: it records that run, it does not replace it).
        self.passive = passive
        self.wrap = wrap
        self.schedule_text = schedule
        self.choices: list[Choice] = []
        self.steps: list[Step] = []
        #: The method each (thread, asyncio task or pool job) runs, set by adapters that
        #: know it: a loop runs many in turn, a pool thread one job after another, so a
        #: thread's latest would name a step after another task's method.
        self.methods: dict[tuple[int, int], str] = {}
        #: The threads that run an event loop.
        self.loops: set[int] = set()
        #: Why this run's orders may not all be modelled (an exploration that ran it then
        #: says it is not complete; see Exploration.caveat).
        self.caveats: set[str] = set()
        #: The flow's name and how to run it afresh, when it can be (races="fail").
        self.rerun: tuple[str, Callable[[], Any]] | None = None
        #: Set when the schedule did not fit the run (the run then ends with it, raised to
        #: the caller however the flow's code handled it).
        self.misfit: FlowsUsageError | None = None
        self._jobs: dict[int, int] = {}  # thread -> its current job (see Step.task)
        self._parents: dict[int, int] = {}  # thread -> the step that handed it work
        #: (loop thread, task) -> steps its next step happens after (a job it awaited
        #: ended, the task that created it ran)
        self._wakes: dict[tuple[int, int], list[int]] = {}
        self._latest: dict[int, int] = {}  # thread -> its latest step
        self._latest_task: dict[tuple[int, int], int] = {}  # (thread, task) -> its latest step
        self._task_ids: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._tasks_seen = 0
        self._moves = 0
        self._deadlines: list[tuple[float, int]] = []  # (when, the step that set it)
        #: (loop thread, task) -> the steps that set its timers; a deadline's step -> the
        #: move of the clock that reached it (timer_fired)
        self._timers: dict[tuple[int, int], list[int]] = {}
        self._reached_by: dict[int, int] = {}
        #: Threads (not loops) the clock option held back, until they next set a wait;
        #: the steps where such a thread set its wait (see clock_moved).
        self._held: set[int] = set()
        self._held_waits: set[int] = set()
        #: The choice points after which a pool thread took a job off its queue.
        self.job_choices: set[int] = set()
        #: The choice points after which a pool job ended and woke a loop's task.
        self.post_choices: set[int] = set()
        #: The choice points after which the running thread read the virtual clock.
        self.clock_choices: set[int] = set()
        #: State containers threads hold on to: mutated later, they are written then.
        self.aliases = Aliases()
        self._holder: int | None = None  # the thread that got the baton last

    def task_id(self, task: Any) -> int:
        """The number of an asyncio task in this run (0 for None: no task)."""
        if task is None:
            return 0
        found = self._task_ids.get(task)
        if found is None:
            # A counter, not the table's size: tasks that ended leave the table.
            self._tasks_seen += 1
            found = self._task_ids[task] = self._tasks_seen
        return found

    def name_method(
        self, thread: int, method: str, *, task: Any = None, loop: bool = False
    ) -> None:
        """The code ``thread`` runs now (in asyncio ``task`` when ``loop``) is ``method``'s."""
        self.methods[(thread, self.task_id(task) if loop else self._jobs.get(thread, 0))] = method

    def read_clock(
        self,
        thread: int,
        *,
        task: Any = None,
        loop: bool = False,
        now: float = 0.0,
        deadline: float | None = None,
        fixed: bool = False,
    ) -> int:
        """Thread ``thread`` read the virtual clock (``time.monotonic()``, or to set a
        wait's ``deadline``); the step's index (a wait that ends early: :meth:`waited`)."""
        if fixed:
            # the loop's next timer: its moment was read when the timer was set
            at = self._current(thread, self.task_id(task) if loop else None)
        else:
            self.clock_choices.add(len(self.choices) - 1)
            self.access(thread, CLOCK, write=False, task=task, loop=loop)
            at = len(self.steps) - 1
        step = self.steps[at]
        if step.clock is None and not fixed:
            step.clock = now
        if deadline is not None:
            self._deadlines.append((deadline, at))
            if thread in self._held and not loop:
                self._held.discard(thread)
                self._held_waits.add(at)
            if loop and not fixed:
                self._timers.setdefault((thread, self.task_id(task)), []).append(at)
        return at

    def waited(self, at: int) -> None:
        """The wait whose deadline step ``at`` set is over (woken, or its deadline came)."""
        self._deadlines = [(when, step) for when, step in self._deadlines if step != at]

    def clock_moved(self, to: float, *, reaching: float) -> None:
        """The virtual clock moved to ``to`` (the clock option, or nothing else could run):
        a step of the clock (thread 0), which ends the waits due by ``reaching``."""
        step = self.steps[-1] if self.steps else None
        if step is None or step.thread != 0 or step.writes:
            step = self._step(0, len(self.choices) - 1)
        # The move happens after the steps that set the deadlines it reaches (a move
        # cannot come before the wait it ends exists). A wait set by a thread the clock
        # option held back (see :meth:`pick`) is a move of its own at that moment, after
        # that wait only: the clock runs there for the others' waits all the same, so
        # the thread can be held back past the moment again, and its wait then ends
        # later. One move after every wait of the moment ordered that thread's reading
        # before it, never a race, and a search that held a thread back once could not
        # hold it past a moment its own wait shared (docs/exploration.md, "Waits that end
        # at one moment"). A loop's timers stay with the others' waits: its tasks are
        # held back with the loop, as one.
        reached = [at for when, at in self._deadlines if when <= reaching]
        self._deadlines = [(when, at) for when, at in self._deadlines if when > reaching]
        groups: list[list[int]] = [[at for at in reached if at not in self._held_waits]]
        for at in reached:
            if at in self._held_waits:
                groups.append([at])
        if not groups[0] and len(groups) > 1:
            groups.pop(0)
        for n, ats in enumerate(groups):
            if n:
                step = self._step(0, len(self.choices) - 1)
            # Each move its own task: moves are ordered by what they wait for, not by
            # each other (a thread held back lets the clock skip its own, earlier, wake-up).
            self._moves += 1
            step.task = self._moves
            step.writes[CLOCK] = ""
            step.clock = to
            step.after = tuple(sorted({*step.after, *ats}))
            move = len(self.steps) - 1
            for at in ats:
                self._reached_by.setdefault(at, move)

    def ran(self, thread: int) -> None:
        """Thread ``thread`` got the baton (the scheduler says so, chosen or not)."""
        if thread != self._holder:
            self.settle()
            self._holder = thread
        if self.sleep is not None:
            self.sleep.ran(thread)

    def track(
        self,
        thread: int,
        key: str,
        value: Any,
        snapshot: Callable[[Any], Any],
        *,
        where: str = "",
        task: Any = None,
        loop: bool = False,
    ) -> None:
        """Thread ``thread`` read ``key``, a container it may mutate later: a change of
        ``snapshot(value)`` is a write of ``key`` by the thread holding the baton then."""
        self.aliases.track(thread, key, value, snapshot, where=where, task=task, loop=loop)

    def settle(self) -> None:
        """The thread holding the baton gives it up: the containers it holds that changed
        meanwhile were written in its step."""
        if self._holder is None:
            return
        for key, where, task, loop in self.aliases.changed(self._holder):
            self.access(self._holder, key, write=True, where=where, task=task, loop=loop)

    def _step(self, thread: int, choice: int, task: int | None = None) -> Step:
        task = self._jobs.get(thread, 0) if task is None else task
        parent = self._parents.pop(thread, None)
        after = [] if parent is None else [parent]
        after.extend(self._wakes.pop((thread, task), ()))
        step = Step(thread=thread, choice=choice, task=task, after=tuple(after))
        self._latest[thread] = self._latest_task[(thread, task)] = len(self.steps)
        self.steps.append(step)
        return step

    def _current(self, thread: int, task: int | None) -> int:
        """The index of ``thread``'s step now (in loop task ``task``), started if need be."""
        step = self.steps[-1] if self.steps else None
        wanted = self._jobs.get(thread, 0) if task is None else task
        if step is None or step.thread != thread or step.task != wanted:
            self._step(thread, len(self.choices) - 1, task)
        return len(self.steps) - 1

    def spawned(self, parent: int, child: int, *, task: Any = None, loop: bool = False) -> None:
        """Thread ``parent`` handed work to (or started) thread ``child``: what ``child``
        does next happens after what ``parent`` did so far (on a loop: in asyncio
        ``task``)."""
        self._parents[child] = self._current(parent, self.task_id(task) if loop else None)

    def task_created(self, loop: int, parent: Any, child: Any) -> None:
        """Asyncio task ``parent`` on loop thread ``loop`` created task ``child``."""
        at = self._current(loop, self.task_id(parent))
        self._wakes.setdefault((loop, self.task_id(child)), []).append(at)

    def task_done(self, loop: int, task: Any, waiters: list[Any]) -> None:
        """Asyncio ``task`` on ``loop`` ended, and ``waiters`` (tasks awaiting it) wake:
        what they do next happens after what it did (and what woke it last)."""
        number = self.task_id(task)
        ends = self._wakes.pop((loop, number), [])
        last = self._latest_task.get((loop, number))
        if last is not None:
            ends.append(last)
        for waiter in waiters:
            self._wakes.setdefault((loop, self.task_id(waiter)), []).extend(ends)

    def task_requeued(self, loop: int, task: Any) -> Callable[[], None]:
        """Asyncio ``task`` on ``loop`` put itself back in the loop's queue (a bare yield,
        ``await asyncio.sleep(0)``): its next step runs after what the loop queued
        before, first in, first out, so its place is decided by the step running now, as
        a created task's is by its creator's (the loop's own wake: see Step.after)."""
        number = self.task_id(task)
        at = self._current(loop, number)
        self._wakes.setdefault((loop, number), []).append(at)

        def resumed() -> None:
            # Nothing ran in between: the task's next step is this one, and the wake
            # would wait for a step it no longer begins.
            if len(self.steps) - 1 == at:
                waits = self._wakes.get((loop, number), [])
                if at in waits:
                    waits.remove(at)
                if not waits:
                    self._wakes.pop((loop, number), None)

        return resumed

    def timer_fired(self, loop: int, task: Any) -> None:
        """A timer asyncio ``task`` on ``loop`` set fires in the loop's own turn (task 0):
        what the task does next happens after that turn, whose order against the
        threads' steps decided when the task ran (a thread's job that ends first gets its
        awaiter into the loop's queue before the timer's)."""
        at = self._current(loop, 0)
        key = (loop, self.task_id(task))
        self._wakes.setdefault(key, []).append(at)
        # The timer is due only once the clock reached it: the task's next step also
        # happens after that move (the earliest move that reached a timer the task set,
        # when it set several), so a race of that step is reversed through the clock
        # option (holding back what ran before the move), not only through the loop.
        moves = [self._reached_by[s] for s in self._timers.get(key, ()) if s in self._reached_by]
        if moves:
            move = min(moves)
            self._timers[key] = [s for s in self._timers[key] if self._reached_by.get(s) != move]
            self._wakes[key].append(move)

    def woke(self, thread: int, loop: int, task: Any) -> None:
        """Thread ``thread`` ended a job whose result wakes asyncio ``task`` on ``loop``:
        what the task does next happens after what the job did."""
        self.post_choices.add(len(self.choices) - 1)
        at = self._latest.get(thread)
        if at is None:
            at = self._current(thread, None)
        self._wakes.setdefault((loop, self.task_id(task)), []).append(at)

    def job_started(self, thread: int) -> None:
        """Pool thread ``thread`` starts its next piece of work (a new :attr:`Step.task`)."""
        self.settle()  # what its last job did to containers it holds was that job's
        self._jobs[thread] = self._jobs.get(thread, 0) + 1
        if self.sleep is not None:
            self.sleep.job_taken()
        self.job_choices.add(len(self.choices) - 1)
        step = self.steps[-1] if self.steps else None
        if step is not None and step.thread == thread and not (step.reads or step.writes):
            step.task = self._jobs[thread]  # the step that handed it over is the job's
        else:
            self._step(thread, len(self.choices) - 1)

    def pick(self, kind: str, options: tuple[int, ...], woken: tuple[int, ...] = ()) -> int:
        """The index among ``options`` (seed-0 choice first) this schedule takes here
        (``woken``: the threads option 0, the clock, would wake)."""
        self.settle()  # what the running thread did to containers it holds ends here
        at = len(self.choices)
        index = self.prefix[at] if at < len(self.prefix) else 0
        if self.wrap:
            index %= len(options)
        if self.sleep is not None and kind == "thread" and index < len(options):
            self.sleep.settle(self.steps, options, self.now, self.loops, quiet=self._quiet())
            index = self.sleep.choose(
                at, options, index if at < len(self.prefix) else None, self.loops
            )
        elif self.sleep is not None:
            self.sleep.asleep.append(frozenset())
        if index >= len(options):
            self.misfit = FlowsUsageError(
                f"schedule {self.schedule_text or encode(self.prefix)!r} does not fit this run: "
                f"choice point {at + 1} has {len(options)} option(s), the schedule takes option "
                f"{index + 1}. A schedule replays only the flow, inputs and fakes it was "
                "explored with; explore again after changing them."
            )
            raise self.misfit
        self.choices.append(Choice(kind, options, index, len(self.steps), woken))
        if kind == "thread" and options[index] == 0:
            self._held.update(seq for seq in options if seq != 0 and seq not in self.loops)
        if kind == "thread":
            self._step(options[index], at)
        return index

    def _quiet(self) -> bool:
        """Whether the loops' turns since the last choice point left nothing behind: no
        callback queued or timer due, no woken task waiting for its turn, and no task
        woken and run within those steps (a turn that queued something another turn
        then ran). See :meth:`SleepSets.settle`."""
        if self.queued:
            return False
        if any(waits for key, waits in self._wakes.items() if key[0] in self.loops):
            return False
        start = self.sleep.checked if self.sleep is not None else 0
        return not any(
            a >= start
            for step in self.steps[start:]
            if step.thread in self.loops and step.task != 0
            for a in step.after
        )

    def access(
        self,
        thread: int,
        key: str,
        *,
        write: bool,
        where: str = "",
        method: str = "",
        task: Any = None,
        loop: bool = False,
    ) -> None:
        """Thread ``thread`` read (or wrote) ``key`` (``state.n``, ``sync:lock``); ``method``
        names the code doing it when one thread runs several in turn (an event loop),
        ``task`` the asyncio task it ran in when ``loop``."""
        number = self.task_id(task) if loop else self._jobs.get(thread, 0)
        step = self.steps[-1] if self.steps else None
        if (
            step is None
            or step.thread != thread
            or step.task != number
            or (method and step.method != method)
        ):
            step = self._step(thread, len(self.choices) - 1, number)
        step.method = step.method or method or self.methods.get((thread, number), "")
        (step.writes if write else step.reads).setdefault(key, where)

    @property
    def indices(self) -> list[int]:
        return [c.index for c in self.choices]

    @property
    def schedule(self) -> str:
        """The string that replays this run."""
        return encode(self.indices)
