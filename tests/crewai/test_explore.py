"""explore(): every schedule of a flow up to reduction, each outcome replayable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from crewai.flow.flow import Flow
from explore_flows import (
    CheckThenWrite,
    CheckThenWriteSafe,
    LateLoser,
    OwnFields,
    OwnTaskFactory,
    QuietLoser,
    Three,
    ThreeAsync,
)
from hash_seed_runs import HASH_SEEDS
from scheduler_flows import GuardedUpdate, LostUpdate

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.exploration.explore import Exploration, outcome_key
from pytest_flows._internal.exploration.races import race_of

#: crewai 1.15 persists each method's completion on a pool thread (to_thread);
#: 1.14 does it on the loop.
HANDS_COMPLETIONS_TO_THE_POOL = hasattr(Flow, "_persist_method_completion")


def _replays(flows: FlowsSession, target: type, found: Exploration) -> None:
    for outcome in found.outcomes:
        again = flows.run(target, schedule=outcome.schedule, raise_on_error=False)
        assert outcome_key(again) == outcome.text
        assert again.schedule == outcome.schedule


def test_check_then_write_finds_both_outcomes_and_the_conflict(flows: FlowsSession) -> None:
    found = explore(flows, CheckThenWrite, max_schedules=300)
    assert found.complete
    items = sorted(o.run.state.items for o in found.outcomes)
    # Both got the slot (in either order), or one of them did: either may, since the
    # loop can start the second listener's thread before the first one's runs.
    assert items == [["left"], ["left", "right"], ["right"], ["right", "left"]]
    fields = {(c.field, c.first, c.second) for c in found.conflicts}
    assert ("state.items", "left", "right") in fields
    _replays(flows, CheckThenWrite, found)


def test_three_listeners_losing_updates_reach_every_count(flows: FlowsSession) -> None:
    found = explore(flows, LostUpdate, max_schedules=1000)
    assert found.complete
    assert sorted(o.run.state.n for o in found.outcomes) == [1, 2, 3]
    assert {(c.field, c.first, c.second) for c in found.conflicts} == {
        ("state.n", "a", "b"),
        ("state.n", "a", "c"),
        ("state.n", "b", "c"),
    }
    _replays(flows, LostUpdate, found)


def test_the_guarded_twin_has_one_outcome_and_no_conflict(flows: FlowsSession) -> None:
    # Sleep sets: a thread's turn covered by an earlier branch is not tried again (128
    # schedules; the reduction without them ran past 1,000).
    found = explore(flows, GuardedUpdate, max_schedules=300)
    assert found.complete
    assert [o.run.state.n for o in found.outcomes] == [3]
    assert found.conflicts == []


def test_independent_fields_explore_in_one_schedule(flows: FlowsSession) -> None:
    reduced = explore(flows, OwnFields, max_schedules=50)
    assert reduced.complete and reduced.schedules_run == 1
    assert [o.run.state.model_dump(exclude={"id"}) for o in reduced] == [{"a": 1, "b": 1, "c": 1}]
    assert reduced.conflicts == []
    full = explore(flows, OwnFields, max_schedules=50, reduction=False)
    assert full.schedules_run > reduced.schedules_run


def test_three_equal_async_racers_each_win(flows: FlowsSession) -> None:
    # Which racer's chain ends first depends on when crewAI's pool-thread work (each
    # method's completion record) ends: the racers' tasks are ordered by what wakes
    # them, so the search tries those orders. Each winner and firer comes within 200
    # schedules (the last, crown via c, at the 155th since an earlier race that began
    # after the latest race's fork is reversed where it began: docs/exploration.md;
    # within 150 before); the whole search (4,356; 5,508 before a job's end past a loop
    # turn was held rather than the default: a racer's job ends against the racing
    # task's look) is the long mode's (test_explore_soundness.py).
    found = explore(flows, ThreeAsync, max_schedules=200)
    assert {race_of(o.run).won for o in found.outcomes} == {"a", "b", "c"}
    assert {race_of(o.run).fired for o in found.outcomes} == {
        (("crown", "a"),),
        (("crown", "b"),),
        (("crown", "c"),),
    }
    _replays(flows, ThreeAsync, found)


def test_three_racers_beside_sync_methods_stop_honestly(flows: FlowsSession) -> None:
    found = explore(flows, Three, max_schedules=50)
    assert {race_of(o.run).won for o in found.outcomes} == {"a", "b", "c"}
    if HANDS_COMPLETIONS_TO_THE_POOL:
        # Sync begin and crown add pool-thread work to every racer's chain, beside the
        # pool hop each method's completion takes: every winner shows within 50
        # schedules, and the search says it stopped before it was complete.
        assert not found.complete and not found.caveat
        assert "stopped before it was complete" in str(found)
    else:
        # crewai 1.14 persists a completion on the loop: only begin and crown use the pool.
        assert found.complete and not found.caveat


def test_late_loser_race_reaches_both_readings_of_the_note(flows: FlowsSession) -> None:
    # 705 schedules to complete, 11 outcomes (1,192 before a job's end past a loop turn
    # was held rather than the default, "A job's end placed by its races"; 772 before an
    # earlier race that began after the latest race's fork was reversed where it began:
    # docs/exploration.md).
    found = explore(flows, LateLoser, max_schedules=1000)
    assert found.complete and not found.caveat
    assert {race_of(o.run).won for o in found.outcomes} == {"fast", "slow"}
    # The bug: crown read the note before or after the losing racer wrote it.
    assert {o.run.state.seen for o in found.outcomes} == {"nothing", "slow was here"}
    # Either racer wins with either reading (seeds need 10 and 27 to see all four).
    assert {(race_of(o.run).won, o.run.state.seen) for o in found.outcomes} == {
        (won, seen) for won in ("fast", "slow") for seen in ("nothing", "slow was here")
    }
    assert ("state.note", "crown", "slow") in {
        (c.field, c.first, c.second) for c in found.conflicts
    }
    _replays(flows, LateLoser, found)


def test_a_race_under_the_flows_own_task_factory_says_it_is_not_complete(
    flows: FlowsSession,
) -> None:
    # The racers' tasks come from the flow's factory: the racing task's look at them
    # (whom it cancels) is not recorded, and the search says so instead of claiming it.
    found = explore(flows, OwnTaskFactory, max_schedules=200)
    assert not found.complete and "task factory" in found.caveat
    assert {race_of(o.run).won for o in found.outcomes} == {"left", "right"}


def test_a_schedule_that_does_not_fit_says_so(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError, match="does not fit this run"):
        flows.run(OwnFields, schedule="szzzz")
    with pytest.raises(FlowsUsageError, match="a string like 's0102'"):
        flows.run(OwnFields, schedule="0102")


@pytest.mark.timeout(60)
def test_a_schedule_that_stops_fitting_anywhere_ends_the_run(flows: FlowsSession) -> None:
    # The misfit lands at every kind of choice point in turn (the loop's turn, a state
    # read on a worker, a worker going idle, a thread leaving): each ends the run with
    # the error, none leaves the baton with a thread that is gone (this hung at k=5).
    points = len(flows.run(CheckThenWrite, schedule="s").extras["chooser"].choices)
    assert points > 10
    # Each run after a misfit follows its own schedule again (none runs as a plain loop).
    for k in range(points):
        with pytest.raises(FlowsUsageError, match=f"choice point {k + 1} has"):
            flows.run(CheckThenWrite, schedule="s" + "0" * k + "z")


def test_the_default_schedule_is_seed_zero(flows: FlowsSession) -> None:
    plain = flows.run(CheckThenWrite)
    replayed = flows.run(CheckThenWrite, schedule="s")
    assert outcome_key(plain) == outcome_key(replayed)


def test_exploration_text_is_stable(flows: FlowsSession) -> None:
    first = explore(flows, CheckThenWriteSafe, max_schedules=50).render()
    assert first == explore(flows, CheckThenWriteSafe, max_schedules=50).render()
    assert first.startswith("Exploration (complete)")


def test_the_locked_check_then_write_gives_the_slot_to_one(flows: FlowsSession) -> None:
    found = explore(flows, CheckThenWriteSafe, max_schedules=1000)
    assert found.complete
    # Either listener may get the slot, never both: the lock keeps the invariant.
    assert sorted(o.run.state.items for o in found.outcomes) == [["left"], ["right"]]
    assert found.conflicts == []


def test_the_quiet_loser_ends_in_one_state_with_no_conflict(flows: FlowsSession) -> None:
    # 608 schedules to complete (1,144 before held job ends, 740 before the earlier-race
    # reversal, as above).
    found = explore(flows, QuietLoser, max_schedules=1000)
    assert found.complete and not found.caveat
    assert {race_of(o.run).won for o in found.outcomes} == {"fast", "slow"}
    assert len({o.run.state.model_dump_json(exclude={"id"}) for o in found.outcomes}) == 1
    assert found.conflicts == []


def test_the_snapshot_of_an_exploration(flows: FlowsSession, snapshot: object) -> None:
    assert explore(flows, CheckThenWrite, max_schedules=300) == snapshot


SCRIPT = """
import sys
sys.path.insert(0, {here!r})
from explore_flows import CheckThenWrite
from pytest_flows import FlowsSession, explore
from pytest_flows._internal.snapshot import snapshot_text

with FlowsSession(test_id="tests::explore-hash") as session:
    sys.stdout.write(snapshot_text(explore(session, CheckThenWrite, max_schedules=300)))
"""


# CI: test_determinism's script explores the same flow under two hash seeds.
@pytest.mark.long
def test_the_exploration_text_is_the_same_under_other_hash_seeds(
    flows: FlowsSession, tmp_path: Path
) -> None:
    script = tmp_path / "explore_hash.py"
    script.write_text(SCRIPT.format(here=str(Path(__file__).parent)))
    texts = {
        subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=300,
        ).stdout
        for seed in HASH_SEEDS
    }
    assert len(texts) == 1
    assert next(iter(texts)).startswith("Exploration (complete)")
