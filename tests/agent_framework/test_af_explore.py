"""explore() over an Agent Framework fan-in: every delivery order, and the key they race on."""

from __future__ import annotations

import af_workflows as wf

from pytest_flows import FlowsSession, explore


def test_a_last_writer_wins_fan_in_reaches_every_winner(flows: FlowsSession) -> None:
    found = explore(flows, lambda: wf.build_race(racy=True), "go", max_schedules=100)
    assert found.complete
    winners = {str(o.run.output).split()[0] for o in found.outcomes}
    assert winners == {"winner=a", "winner=b", "winner=c"}
    conflicts = {(c.field, c.first, c.second) for c in found.conflicts}
    assert ("state.winner", "a", "b") in conflicts
    for outcome in found.outcomes:
        again = flows.run(wf.build_race(racy=True), "go", schedule=outcome.schedule)
        assert again.output == outcome.run.output


def test_the_correct_twin_has_one_outcome_and_no_conflict(flows: FlowsSession) -> None:
    found = explore(flows, lambda: wf.build_race(racy=False), "go", max_schedules=100)
    assert found.complete
    assert len(found.outcomes) == 1
    assert found.conflicts == []
