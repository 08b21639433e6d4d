"""The long random-graph check's counterexamples (tests/langgraph/soundness_misses,
its README says what each is): a complete search that missed an outcome a seed reaches
under the check's test id. An open one is a strict expected failure (it passes once its
cause is fixed, and must then become a plain test); a fixed one is a plain test of the
seeds that reached the missed outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from long_mode import LONG
from random_flows import load

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration.explore import outcome_key
from pytest_flows._internal.runtime.schedule import Chooser

MISSES = Path(__file__).parent / "soundness_misses"
INPUT = {"notes": []}


def check_miss(name: str, seeds: tuple[int, ...], cap: int) -> Any:
    build = load((MISSES / name).read_text(), "build")
    with FlowsSession(test_id="tests::random-graphs") as session:
        found = explore(session, build, INPUT, max_schedules=cap)
    assert found.complete, (found.schedules_run, found.caveat)
    for seed in seeds:
        with FlowsSession(seed=seed, test_id="tests::random-graphs") as seeded:
            reached = outcome_key(seeded.run(build(), INPUT, raise_on_error=False))
        assert reached in found.texts, (seed, reached)
    return found


def open_miss(name: str, seed: int, cap: int, why: str, *, long: bool = False) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=f"open (issue 40): {why}")]
    if long:
        marks.append(
            pytest.mark.skipif(not LONG, reason=f"a search of up to {cap} schedules: long mode")
        )
    return pytest.param(name, (seed,), cap, marks=marks, id=name.removesuffix(".txt"))


#: The open ones (none today): ``open_miss(file, seed, cap, why)`` each.
OPEN: list[Any] = []


@pytest.mark.parametrize(("name", "seeds", "cap"), OPEN)
def test_a_complete_search_has_what_the_seed_reaches(
    name: str, seeds: tuple[int, ...], cap: int
) -> None:
    check_miss(name, seeds, cap)


def test_two_interrupts_in_a_send_fan_out_explore_either_last():
    # A Send fan-out: w0 and w1 sleep 0.01 s and write `last`, w2 interrupts at once, w3
    # gets y and interrupts. Seeds 12 and 15 have w2's interrupt last; a search of 138
    # schedules had w3's only. In seed 12 w3 ends before the runner adds its future to
    # its FuturesDict, while w2's commit waits on its worker for the pool's lock (the
    # runner holds it, starting w3's worker): the runner then adds w3's done future,
    # which runs w3's commit on the runner's thread, and puts w3's interrupt first.
    # Which thread commits was decided by the add's order against the end, recorded
    # nowhere. The add now reads the task's commit key, which an interrupting or failing
    # end writes: 208 schedules, both outcomes.
    found = check_miss("two_interrupts_in_a_send_fan_out.txt", (12, 15), 400)
    assert len(found.outcomes) == 2, found.texts


@pytest.mark.skipif(not LONG, reason="a search of 2,684 schedules (45 s CPU): long mode")
def test_a_complete_search_has_what_a_schedule_reaches() -> None:
    # A Send fan-out: w3 fails, w2 interrupts, w0 and w1 write `last`. Seeds 1, 2, 7, 8,
    # 10, 11 and 14 end with nothing saved and no interrupt; a search of 12 schedules had
    # either loss, not both; 236 and three outcomes with the failure ordered against the
    # runner's adding of futures, 1,098 with a task's end ordered against a failure.
    # No seed 0..399 reaches this outcome (w1's write saved, w0's lost, w3's error), but a
    # schedule does, on the real runtime: a complete search must hold it as it holds a
    # seed's. w0 ends before w3 fails, but its commit waits for the pool's lock (w1's
    # commit holds it while the pool starts a worker), and takes it after the runner saw
    # w3 fail and shut the pool down: w0's checkpoint write is refused. The shutdown after
    # a failure now writes the pool's key, which a take of its lock after a wait reads.
    name = "interrupt_lost_after_a_failure.txt"
    build = load((MISSES / name).read_text(), "build")
    with FlowsSession(test_id="tests::random-graphs") as session:
        late = session.run(build(), INPUT, raise_on_error=False, schedule=LATE_COMMIT)
    assert '"last": "w1"' in outcome_key(late)
    found = check_miss(name, (1, 2, 7, 8, 10, 11, 14), 4000)
    assert outcome_key(late) in found.texts
    assert len(found.outcomes) == 4, found.texts


#: The schedule of interrupt_lost_after_a_failure.txt whose w0 commits after the shutdown.
LATE_COMMIT = "s0000000002000204011110000002"


def test_a_commit_that_waits_for_the_pool_lock_reads_what_the_shutdown_writes():
    # The cause of the outcome above, in its schedule: the runner's shutdown after w3's
    # failure takes the pool's lock writing its key; w0's commit, which waited for that
    # lock, takes it later and reads the key; takes of the free lock record nothing.
    build = load((MISSES / "interrupt_lost_after_a_failure.txt").read_text(), "build")
    with FlowsSession(test_id="tests::random-graphs") as session:
        chooser = Chooser([int(c, 36) for c in LATE_COMMIT[1:]])
        with session.scheduler.following(chooser):
            session.run(build(), INPUT, raise_on_error=False)
    pool = [(i, step) for i, step in enumerate(chooser.steps) if "lg:pool:0" in step.reads]
    shut = [i for i, step in enumerate(chooser.steps) if "lg:pool:0" in step.writes]
    assert len(shut) == 1, shut  # the one shutdown, after an error
    late = [step for i, step in pool if i > shut[0]]
    assert len(late) == 1, pool  # w0's commit, after it, on its worker
    assert late[0].thread != chooser.steps[shut[0]].thread


@pytest.mark.skipif(not LONG, reason="a search of 820 schedules (15 s CPU): long mode")
def test_two_interrupts_past_two_sleeps_explore_either_last():
    # w0 and w1 write `last` (InvalidUpdateError), w2 and w3 interrupt, w1 sleeps 0.02 s
    # and w3 0.03 s. Seeds 2, 12, 14 and 15 hold w2's worker at its store read while the
    # clock runs to 0.02 (w3's worker not yet asleep) and to 0.05, so w3 ends first and w2
    # last. A search of 152 schedules had w3 last only: each task's end submits its
    # checkpoint write to the pool, whose submit holds the pool's quiet shutdown lock while
    # it starts a worker (a switch point), and the interrupt's put follows in the same
    # move: once w2's end took the lock, w3's end waited behind it, and reversing the two
    # puts where w2 put was too late. The end of an interrupting task now writes lg:stream
    # where it takes the lock: 304 schedules, both outcomes, seeds 0..15 in them; 820
    # since the runner's add of a future is ordered against an interrupting end.
    found = check_miss("two_interrupts_past_two_sleeps.txt", (2, 12, 14, 15), 1200)
    assert len(found.outcomes) == 2, found.texts
    assert {"w2 at" in t.split("|")[0] for t in found.texts} == {True, False}


def test_an_interrupting_end_writes_the_stream_where_its_commit_takes_the_pool_lock():
    # The cause of two_interrupts_past_two_sleeps (above), in its default schedule: w2's
    # end submits its checkpoint write holding the pool's submit lock while the pool
    # starts a worker (a switch point), and puts its interrupt in the next move. Its end
    # writes lg:stream in the move that took the lock (and its put in its own), so the
    # search reverses w3's end against w2's there, before the lock is held. w3's end
    # puts in the same move as it ends.
    build = load((MISSES / "two_interrupts_past_two_sleeps.txt").read_text(), "build")
    with FlowsSession(test_id="tests::random-graphs") as session:
        chooser = Chooser([])
        with session.scheduler.following(chooser):
            session.run(build(), INPUT, raise_on_error=False)
    stream = [(i, step) for i, step in enumerate(chooser.steps) if "lg:stream" in step.writes]
    ends = [i for i, step in stream if any(k.startswith("lg:task:") for k in step.writes)]
    puts = [i for i, step in stream if i not in ends]
    assert len(ends) == 2, stream  # w2's end and w3's end (with its put)
    assert len(puts) == 1 and ends[0] < puts[0] < ends[1], stream  # w2's put, later
    assert chooser.steps[ends[0]].thread == chooser.steps[puts[0]].thread


@pytest.mark.skipif(not LONG, reason="a search of 861 schedules (12 s CPU): long mode")
def test_a_sibling_cancelled_after_a_failure_is_explored():
    # A Send fan-out: w0 reads twice and fails, w1 reads twice, w2 reads once. Seed 9
    # has the runner submit all three before w0 fails, and see the failure before w2
    # started: w2 is cancelled, w1's writes saved (seed 14 too). At seed 0 (and the search's
    # first schedule) w0 runs at once and fails before the runner adds w1's and w2's
    # futures, and each add clears the event the runner waits on after a failure: it
    # waits for a sibling to end, and one has started. That order was not recorded; a
    # failure and the runner's wait after adding now write lg:superstep: 67 schedules,
    # two outcomes (63 and one before).
    # Since a task's end is ordered against a sibling's failure (the next test but one):
    # 323 schedules and four outcomes, the two more being reached by schedules only.
    # 861 since a commit that waited for the pool's lock is ordered against the
    # shutdown after a failure (test_a_commit_that_waits_for_the_pool_lock_...).
    found = check_miss("sibling_cancelled_after_a_failure.txt", (9, 14), 1200)
    assert len(found.outcomes) == 4, found.texts
    assert any('"w1:0"]}' in text and "w2:0" not in text for text in found.texts)


def test_a_sibling_write_held_past_a_failure_is_explored():
    # w1 sleeps 0.01 s and writes, w0 sleeps 0.08 s and fails. Seed 3 holds w1 back at its
    # wake-up while the clock runs on to w0's failure (within the hold-back window): the
    # runner stops waiting at the failure, and w1's commit then finds the pool shut down,
    # so its write is lost. Each end wakes the runner's wait, so its look after the
    # failure came after w1's end in every order the search knew, and a search of 8
    # schedules had w1's write saved only. A task's end now reads lg:failed, which a
    # failure writes: 13 schedules, both outcomes (the long run's three counterexamples
    # of this kind were of 1,084 graphs; the other two, two failing workers, below);
    # 16 since a waiting commit is ordered against the shutdown.
    found = check_miss("sibling_write_held_past_a_failure.txt", (3,), 150)
    assert len(found.outcomes) == 2, found.texts
    assert any('"notes": []} | state' in text for text in found.texts)


@pytest.mark.parametrize(
    ("name", "seed"),
    [
        ("two_failures_a_start_held_past_a_shared_moment.txt", 2),
        ("two_failures_in_a_send_fan_out.txt", 12),
    ],
)
def test_two_failures_surface_either_error_past_a_shared_moment(name: str, seed: int):
    # w1 sleeps 0.01 s and fails; w0 sleeps 0.09, 0.01 and 0.11 s and fails (the second
    # graph a Send fan-out whose w1 puts x first). The seed holds w1's worker back before
    # its start while the clock runs to 0.09 and to 0.10, and again at its wake-up (0.11)
    # while the clock runs to 0.21: w0 fails first, its error surfaces. The search held
    # w1 back to 0.09 and no further: there w1's sleep (0.01 s) and w0's second one both
    # end at 0.10, and the one move of the clock to 0.10 came after both waits, so w1's
    # start at 0.09 was ordered before it, never a race (14 and 12 schedules, w1's error
    # only). A wait set by a thread the clock option held back is now a move of its own
    # at that moment: 33 and 42 schedules, both errors.
    found = check_miss(name, (seed,), 150)
    assert len(found.outcomes) == 2, found.texts
    assert any("w0 failed" in text for text in found.texts), found.texts


def test_a_held_threads_wait_is_a_move_of_its_own_at_a_shared_moment():
    # The cause above, in the search's schedule that holds w1's worker back to 0.09 (the
    # clock option at choice point 11): w1 then sleeps to 0.10, as w0 does. The clock's
    # move to 0.10 is two steps, each after one of the two waits, so w1's start races
    # with w0's move and the search can hold it back past 0.10 too.
    build = load(
        (MISSES / "two_failures_a_start_held_past_a_shared_moment.txt").read_text(), "build"
    )
    with FlowsSession(test_id="tests::random-graphs") as session:
        chooser = Chooser([0] * 10 + [2])
        with session.scheduler.following(chooser):
            session.run(build(), INPUT, raise_on_error=False)
    steps = chooser.steps
    moves = [s for s in steps if s.thread == 0 and s.clock is not None and 0.099 < s.clock < 0.101]
    assert len(moves) == 2, moves
    waits = [{steps[a].thread for a in move.after} for move in moves]
    assert all(len(threads) == 1 for threads in waits) and waits[0] != waits[1], waits
    w1 = next(s.thread for s in steps if "lg:task:000000000004" in s.writes)
    assert {w1} in waits, (w1, waits)
