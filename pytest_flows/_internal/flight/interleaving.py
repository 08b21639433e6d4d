"""Rebuilding the recorded interleaving: replay attempts under the scheduler's schedules
(a bounded breadth-first search from seed 0's), then under its seeds.

Each attempt answers from the record afresh and records the replay in memory. A
schedule fixes every choice point of a run (each thread switch the scheduler makes),
so the search changes only choices made before the first method event that differs
from the record (a choice made after it cannot have changed it), first those made
before the first LLM reply, tool result or save that came back in another order. Every schedule run
is one the scheduler produced from the runtime's own choice points, so no order the
runtime cannot produce is ever invented.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from pytest_flows._internal.coverage import notes
from pytest_flows._internal.exploration.seeding import reseeded
from pytest_flows._internal.flight.answers import Answers, People, Tools, calls_of
from pytest_flows._internal.flight.capture import FlightRecorder, RunRecording
from pytest_flows._internal.flight.compare import compare, guide_of, order_of
from pytest_flows._internal.flight.feasibility import impossible_start
from pytest_flows._internal.flight.format import Record
from pytest_flows._internal.flight.result import ReplayResult
from pytest_flows._internal.runtime.schedule import Chooser, encode

__all__ = ["Attempts", "by_schedule", "by_seed", "timed"]


class _Guided(Chooser):
    """A schedule's chooser that also notes, at each choice point, how many of the
    replay's method events had happened (a choice made after the first event that
    differs from the record cannot be what changed it)."""

    def __init__(self, prefix: list[int]) -> None:
        super().__init__(prefix, schedule=encode(prefix))
        self.progress: Callable[[], tuple[int, int]] = lambda: (0, 0)
        #: At each choice point: how many method events, and how many guide events.
        self.marks: list[tuple[int, int]] = []

    def pick(self, kind: str, options: tuple[int, ...], woken: tuple[int, ...] = ()) -> int:
        self.marks.append(self.progress())
        return super().pick(kind, options, woken)


class Attempts:
    """Replay attempts of one record: each with fresh answers, recorded in memory."""

    def __init__(self, session: Any, record: Record, target: Any, fake: Any, shadow: Any) -> None:
        self.session, self.record, self.target, self.fake, self.shadow = (
            session,
            record,
            target,
            fake,
            shadow,
        )
        self.answers = Answers(calls_of(record))
        self.people = People(record)
        self.tools = Tools(record)
        self.recorded_order = order_of(record.entries)
        self.recorded_guide = guide_of(record.entries)
        self.memory: FlightRecorder | None = None
        self.count = 0
        self.first: ReplayResult | None = None
        #: Today's code differs in more than the order: searching orders cannot help.
        self.stopped = False
        #: The schedule search stopped having tried every schedule that could change the
        #: order (on the timing it replayed with).
        self.exhausted = False
        #: The first attempt with the recorded order of methods (other results may differ).
        self.same_order: ReplayResult | None = None
        #: Methods overlapped in the recorded run: the interleaving inside them matters.
        self.concurrent = _overlapping(self.recorded_order)
        #: Why today's flow cannot produce the recorded order at all (its graph says so).
        self.impossible: str | None = None
        self.schedules_tried = 0

    def run(
        self, *, seed: int | None = None, chooser: _Guided | None = None
    ) -> tuple[ReplayResult, list[tuple[str, str]], list[tuple[str, str]]]:
        self.count += 1
        answers, session, record = self.answers, self.session, self.record
        answers.install(self.fake, self.count)
        self.people.install(session, self.count, answers.current(self.count))
        self.tools.install(session, answers.current(self.count))
        assert self.memory is not None
        replayed = RunRecording(self.memory, record.framework, "", record.target, record.run_kwargs)
        undo = self.shadow.shadow(replayed, answer_tool=self.tools.answer)
        try:
            with contextlib.ExitStack() as stack:
                if chooser is not None:
                    chooser.progress = lambda: (
                        len(order_of(replayed.entries)),
                        len(guide_of(replayed.entries)),
                    )
                    stack.enter_context(session.scheduler.following(chooser))
                else:
                    stack.enter_context(reseeded(session.scheduler, seed))
                graphs = stack.enter_context(notes.collecting()) if self.count == 1 else []
                run = session.run(self.target, raise_on_error=False, **record.run_kwargs)
            if graphs:
                # Today's flow, as the adapter reads it: is the recorded order possible?
                graph = next((g.graph for g in graphs if g.graph is not None), None)
                self.impossible = impossible_start(record.entries, graph)
        finally:
            undo()
        divergences, recorded_trace, replayed_trace = compare(record, replayed, run)
        divergences += answers.divergences + answers.unused()
        divergences += self.tools.divergences + self.tools.unused()
        divergences.sort(key=lambda d: d.seq)
        result = ReplayResult(
            record,
            run,
            divergences,
            seed=session.seed if seed is None else seed,
            recorded_trace=recorded_trace,
            replayed_trace=replayed_trace,
            notes=self.people.notes(),
        )
        if self.first is None:
            self.first = result
        if any(d.kind not in ("order", "outcome", "output", "state") for d in divergences):
            self.stopped = True
        return result, order_of(replayed.entries), guide_of(replayed.entries)


def _first_difference(now: list[tuple[str, str]], recorded: list[tuple[str, str]]) -> int:
    if now == recorded:
        return len(now)
    return next(
        (k for k, (a, b) in enumerate(zip(now, recorded, strict=False)) if a != b),
        min(len(now), len(recorded)),
    )


def _overlapping(order: list[tuple[str, str]]) -> bool:
    running: set[str] = set()
    for kind, method in order:
        if kind == "method.started":
            if running:
                return True
            running.add(method)
        else:
            running.discard(method)
    return False


def by_schedule(attempts: Attempts, budget: int) -> ReplayResult | None:
    """Search the scheduler's schedules for the recorded order, breadth first from the
    default one ('s', what seed 0 does), changing only choices made before the first
    method event that differs (all of them when the order is the same but the results
    are not); each schedule is one the scheduler produced."""
    recorded = attempts.recorded_order
    pending: list[list[int]] = [[]]
    tried = 0
    while pending and tried < budget:
        prefix = pending.pop(0)
        tried += 1
        chooser = _Guided(prefix)
        result, order, guide = attempts.run(chooser=chooser)
        if order == recorded:
            result.schedule = chooser.schedule
            result.interleaving = (
                f"The recorded order of methods was rebuilt as schedule {chooser.schedule!r} "
                f"(flows.run(..., schedule={chooser.schedule!r}) or --flows-schedule="
                f"{chooser.schedule} replays it; {tried} schedule(s) tried)."
            )
            if not result.divergences or not attempts.concurrent:
                return result
            # The same order of methods, other results, and methods that overlapped: the
            # interleaving inside them may differ (two listeners appending to one list).
            attempts.same_order = attempts.same_order or result
        if attempts.stopped:
            return None
        if attempts.impossible is not None and attempts.same_order is None:
            assert attempts.first is not None
            attempts.first.interleaving = (
                f"The recorded order cannot happen under today's code: {attempts.impossible} "
                "(no schedule or seed can give it, so none was searched)."
            )
            attempts.stopped = True
            return None
        # A choice made after the first method event that differs cannot have changed
        # it: only those before are tried (all of them when only results differ) ...
        differs = _first_difference(order, recorded)
        guide_differs = _first_difference(guide, attempts.recorded_guide)
        taken = chooser.indices
        eligible = [
            at for at in range(len(prefix), len(chooser.choices)) if chooser.marks[at][0] <= differs
        ]
        # ... breadth first, those made before the first LLM reply, tool result or save
        # that came back in another order first, nearest it first; then the others.
        steering = [at for at in eligible if chooser.marks[at][1] <= guide_differs]
        rest = [at for at in eligible if chooser.marks[at][1] > guide_differs]
        for at in [*reversed(steering), *reversed(rest)]:
            options = len(chooser.choices[at].options)
            pending.extend(
                [*taken[:at], other] for other in range(1, options) if other != taken[at]
            )
    if attempts.first is not None and attempts.same_order is None:
        attempts.first.interleaving = (
            "The recorded order cannot happen under today's code: no schedule gives it (every "
            f"one that could change it was tried, {tried} in all)."
            if not pending
            else ""
        )
    if not pending:
        attempts.stopped = attempts.exhausted = True
    attempts.schedules_tried = tried
    return None


def by_seed(attempts: Attempts, seeds: int) -> ReplayResult | None:
    """The fallback when the schedule search ran out of its budget: the seeds."""
    base = attempts.session.seed
    candidates = [base, *(s for s in range(max(1, seeds)) if s != base)][: max(1, seeds)]
    for seed in candidates:
        result, order, _ = attempts.run(seed=seed)
        if order == attempts.recorded_order:
            result.interleaving = (
                f"The recorded order of methods came back at seed {seed} (no schedule within "
                f"the search's budget gave it; flows.run(..., seed) or --flows-seed={seed})."
            )
            if not result.divergences:
                return result
            attempts.same_order = attempts.same_order or result
        if attempts.stopped:
            return None
    assert attempts.first is not None
    if attempts.same_order is not None:
        return None
    attempts.first.interleaving = (
        "The search's budget ran out before the recorded order of method starts and "
        f"finishes came back: {attempts.schedules_tried} schedule(s) and the seeds "
        f"{candidates} were tried. It was not shown impossible: a larger budget "
        "(flows.replay(..., schedules=...)) may find it."
    )
    return None


def timed(attempts: Attempts, schedules: int, seeds: int) -> ReplayResult | None:
    """The search once more, each LLM reply also waiting the time its method spent
    before the request in production (its code ran for a while: a crew being set up, a
    loaded machine), which the harness runs in no virtual time at all. A reply then
    comes back when it did in production, relative to its method's previous step, and
    orders production's timing decided that no schedule reaches on the CPU-free
    timeline come back (a listener's crew finishing after a quick sibling's reply)."""
    if attempts.same_order is not None or (attempts.stopped and not attempts.exhausted):
        return None
    if not any(call.before > 0 for call in attempts.answers.calls):
        return None
    first, tried, exhausted = attempts.first, attempts.schedules_tried, attempts.exhausted
    assert first is not None
    said = first.interleaving
    attempts.stopped = attempts.exhausted = False
    attempts.answers.timed = True
    try:
        found = by_schedule(attempts, schedules) or (
            None if attempts.stopped else by_seed(attempts, seeds)
        )
    finally:
        attempts.answers.timed = False
    result = found or attempts.same_order
    if result is not None:
        result.interleaving = (
            f"{result.interleaving} It came back only with each LLM reply also waiting the "
            "time its method spent before the request in production (work the harness "
            "runs in no virtual time); on the harness's own timing "
            + (
                f"no schedule gives it ({tried} tried)."
                if exhausted
                else f"{tried} schedule(s) and {seeds} seed(s) did not give it."
            )
        )
        return found
    first.interleaving = said
    attempts.stopped, attempts.exhausted = exhausted, exhausted
    attempts.schedules_tried = tried
    return None
