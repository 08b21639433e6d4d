"""Schedules drawn by hypothesis, and PCT: exploration for flows too large to enumerate."""

from __future__ import annotations

import pytest
from crewai_versions import crewai_114_differs
from explore_flows import CheckThenWrite
from hypothesis import find, settings
from scheduler_flows import LostUpdate

from pytest_flows import FlowsSession, explore, schedules
from pytest_flows._internal.exploration.explore import outcome_key


@crewai_114_differs(
    "hypothesis finds no schedule with one update lost in 60 examples "
    "(flow.state is a locking StateProxy there)"
)
def test_hypothesis_shrinks_a_lost_update_to_a_short_replayable_schedule() -> None:
    with FlowsSession(test_id="tests::explore-hypothesis") as session:
        found = find(
            schedules(),
            lambda s: session.run(LostUpdate, schedule=s).state.n == 2,
            settings=settings(max_examples=60, database=None, derandomize=True, deadline=None),
        )
        run = session.run(LostUpdate, schedule=found)
        assert run.state.n == 2
        exact = run.schedule
        assert exact is not None and exact.startswith("s")
        assert session.run(LostUpdate, schedule=exact).state.n == 2
        # Shrunk: fewer departures from the default than the flow has choice points.
        assert len(found) < len(run.extras["chooser"].choices)


def test_pct_draws_the_same_schedules_from_the_same_seed() -> None:
    def texts() -> list[str]:
        with FlowsSession(seed=5, test_id="tests::pct") as session:
            found = explore(session, LostUpdate, strategy="pct", runs=40, depth=2)
            assert not found.complete and found.schedules_run == 40
            return [f"{o.text} {o.schedule}" for o in found.outcomes]

    first = texts()
    assert first == texts()
    assert len(first) >= 2  # random priorities reach more than the default outcome


def test_pct_outcomes_replay(flows: FlowsSession) -> None:
    found = explore(flows, CheckThenWrite, strategy="pct", runs=30)
    for outcome in found.outcomes:
        assert outcome_key(flows.run(CheckThenWrite, schedule=outcome.schedule)) == outcome.text


def test_an_unknown_strategy_says_which_exist(flows: FlowsSession) -> None:
    from pytest_flows._internal.errors import FlowsUsageError

    with pytest.raises(FlowsUsageError, match=r"'dfs'.*'pct'"):
        explore(flows, CheckThenWrite, strategy="bfs")
