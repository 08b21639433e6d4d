"""or_ races of real CrewAI flows: who won, who was cancelled, and the outcomes over seeds."""

from __future__ import annotations

import asyncio

import pytest
from crewai.flow.flow import Flow, listen, or_, start
from dispatch_flows import Race, SyncRace, Twelve

from pytest_flows import explore
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.exploration.races import race_of, races


class FailingRacer(Flow):
    """One racer always fails; the other wins after a (virtual) second."""

    @start()
    def kick(self) -> str:
        return "go"

    @listen(kick)
    async def steady(self, _: str) -> str:
        await asyncio.sleep(1)
        return "steady"

    @listen(kick)
    async def flaky(self, _: str) -> str:
        raise ValueError("flaky broke")

    @listen(or_(steady, flaky))
    def done(self, value: str) -> str:
        return f"done:{value}"


def test_the_winner_the_cancelled_and_the_listener_of_a_race(flows):
    run = flows.run(Race)

    race = race_of(run)
    assert race.name == "or(fast_path, slow_path)"
    assert (race.won, race.cancelled, race.fired) == (
        "fast_path",
        ("slow_path",),
        (("finish", "fast_path"),),
    )
    assert races(run) == [race]


def test_a_failed_racer_is_reported_and_the_other_wins(flows):
    race = race_of(flows.run(FailingRacer))
    assert (race.won, race.failed) == ("steady", ("flaky",))
    assert race.render() == "or(flaky, steady): won steady; failed flaky; done via steady"


def test_exploring_seeds_finds_every_possible_winner(flows):
    outcomes = explore(flows, SyncRace, seeds=range(48))

    assert outcomes.winners == {"alpha", "beta", "gamma"}
    assert outcomes.race_names == ["or(alpha, beta, gamma)"]
    assert len(outcomes) > 1 and sum(len(s) for s in outcomes.outcomes.values()) == 48
    for seed in outcomes.seeds_where("gamma"):
        assert race_of(outcomes.runs[seed]).won == "gamma"
    # A seed found by exploring reproduces on its own.
    seed = outcomes.seeds_where("alpha")[0]
    again = explore(flows, SyncRace, seeds=[seed])
    assert list(again.outcomes) == [next(t for t, s in outcomes.outcomes.items() if seed in s)]


@pytest.mark.flows(seed=5)
def test_exploring_leaves_the_tests_own_seed_alone(flows):
    before = flows.run(SyncRace).trace.render()
    explore(flows, SyncRace, seeds=range(4))
    assert flows.seed == 5
    assert flows.run(SyncRace).trace.render() == before


def test_a_race_decided_by_virtual_time_has_one_outcome(flows):
    outcomes = explore(flows, lambda: Race(), seeds=range(6))

    assert outcomes.winners == {"fast_path"}
    assert len(outcomes) == 1
    assert outcomes.render() == (
        "RaceOutcomes (6 seeds)\n"
        "  or(fast_path, slow_path): won fast_path; cancelled slow_path; finish via fast_path"
    )


def test_winners_needs_exactly_one_race(flows):
    outcomes = explore(flows, Twelve, seeds=range(2))
    assert list(outcomes.outcomes) == ["no race"]
    with pytest.raises(FlowsUsageError, match="exactly one race, this one has 0"):
        _ = outcomes.winners
    with pytest.raises(FlowsUsageError, match=r"no race 'or\(a, b\)'"):
        outcomes.winners_of("or(a, b)")


@pytest.mark.parametrize(
    ("target", "seeds", "message"),
    [
        (SyncRace(), range(2), "not an instance"),
        (SyncRace, [], "got no seeds"),
        (SyncRace, [1, -1], "got -1"),
        (SyncRace, [1, 1], "lists a seed twice"),
        (SyncRace, 3, "needs an iterable of seeds"),
        ("SyncRace", range(2), "not an instance"),
    ],
)
def test_explore_bad_input(flows, target, seeds, message):
    with pytest.raises(FlowsUsageError, match=message):
        explore(flows, target, seeds=seeds)


def test_explore_needs_the_flows_fixture():
    with pytest.raises(FlowsUsageError, match="takes the `flows` fixture first"):
        explore(SyncRace, SyncRace)  # type: ignore[arg-type]
