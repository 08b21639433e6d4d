"""Determinism as a tested property: runs, seeds, hash seeds and processes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from dispatch_flows import FanOut, Race, Routing, SyncRace, Twelve
from hash_seed_runs import outputs_under_hash_seeds
from scheduler_flows import lost_update

from pytest_flows import FlowsSession


def _trace_text(flows: FlowsSession, flow: type, **kwargs: object) -> str:
    return flows.run(flow, **kwargs).trace.render()


@pytest.mark.parametrize("flow", [Twelve, FanOut, SyncRace, Race])
def test_thirty_runs_give_byte_identical_traces(flows: FlowsSession, flow: type) -> None:
    traces = {_trace_text(flows, flow) for _ in range(30)}
    assert len(traces) == 1


def test_ids_and_clock_repeat_for_the_same_test_and_seed() -> None:
    def once() -> tuple[str, str, str]:
        with FlowsSession(seed=4, test_id="tests::ids") as session:
            run = session.run(Routing, inputs={"priority": "high"})
            return str(run.state.id), str(run.flow.flow_id), repr(session.clock)

    assert once() == once()
    with FlowsSession(seed=5, test_id="tests::ids") as session:
        other = session.run(Routing, inputs={"priority": "high"}).state.id
    assert other != once()[0]


def _orders(seed: int) -> tuple[list[str], list[str], list[str]]:
    with FlowsSession(seed=seed, test_id="tests::orders") as session:
        run = session.run(FanOut)
        finished = [
            n for n in run.trace.names("method.finished") if n in {"left", "middle", "right"}
        ]
        return finished, list(run.state["log"]), sorted(run.trace.names("method.started"))


def test_seeds_choose_among_the_orders_the_runtime_allows() -> None:
    default = _orders(0)
    assert default[0] == ["left", "middle", "right"]  # seed 0: submission order
    assert default[1] == ["left", "middle", "right"]
    runs = [_orders(seed) for seed in range(1, 9)]
    assert len({tuple(finished) for finished, _, _ in runs}) > 1, "finish orders must vary"
    assert len({tuple(log) for _, log, _ in runs}) > 1, "body execution orders must vary"
    for finished, log, started in runs:
        # the runtime's semantics do not depend on the order:
        assert started == default[2]  # the same methods ran
        assert sorted(log) == sorted(finished) == ["left", "middle", "right"]


def test_seeds_decide_sync_race_winners_deterministically() -> None:
    def winner(seed: int) -> str:
        with FlowsSession(seed=seed, test_id="tests::race") as session:
            return session.run(SyncRace).trace.of_kind("race.won")[0].name

    winners = {seed: winner(seed) for seed in range(8)}
    assert set(winners.values()) <= {"alpha", "beta", "gamma"}
    assert len(set(winners.values())) > 1
    assert all(winner(seed) == w for seed, w in list(winners.items())[:3])


SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    # As the plugin does before any conftest loads: a lock factory crewai binds at
    # import builds managed locks in a flows test (lock_factory.py).
    from pytest_flows._internal.runtime import lock_factory
    lock_factory.install()
    from dispatch_flows import FanOut, Routing, SyncRace, Twelve
    from scheduler_flows import LostUpdate
    from pytest_flows import FlowsSession

    # Three threads racing on one field, under every seed that reaches an outcome.
    for seed in range(13):
        with FlowsSession(seed=seed, test_id="tests::lost-update") as session:
            run = session.run(LostUpdate)
            sys.stdout.write(f"lost-update {{seed}} {{run.state.n}}\\n" + run.trace.render())

    with FlowsSession(seed=0, test_id="subprocess") as session:
        for flow, kwargs in [(Twelve, {{}}), (FanOut, {{}}), (SyncRace, {{}}),
                             (Routing, {{"inputs": {{"priority": "high"}}}})]:
            run = session.run(flow, **kwargs)
            sys.stdout.write(run.trace.render())
            state = run.state
            state_id = state["id"] if isinstance(state, dict) else state.id
            sys.stdout.write(f"{{state_id}}\\n")

    # An exploration's text (its outcomes, schedules and conflicts).
    from explore_flows import CheckThenWrite
    from pytest_flows import explore
    from pytest_flows._internal.snapshot import snapshot_text
    with FlowsSession(test_id="tests::explore-hash") as session:
        sys.stdout.write(snapshot_text(explore(session, CheckThenWrite, max_schedules=300)))
    """
)


def test_subprocesses_with_different_hash_seeds_agree(tmp_path: Path) -> None:
    # One interpreter per hash seed runs every flow of the script (an interpreter's
    # start, crewai's import, is most of the cost).
    script = tmp_path / "trace_flows.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    outputs = outputs_under_hash_seeds(script)
    assert outputs[0].count("flow finished") == 4 + 13
    assert "Exploration (complete)" in outputs[0]
    assert len(set(outputs)) == 1, "another hash seed, another trace"
    # ... and they agree with this process: the seeds' outcomes of the lost update.
    in_process = {seed: lost_update(seed) for seed in range(13)}
    lines = [line.split(" ") for line in outputs[0].splitlines() if line.startswith("lost-update ")]
    assert {int(seed): int(n) for _, seed, n in lines} == in_process


def test_crew_agent_and_task_ids_repeat_for_the_same_test_and_seed() -> None:
    from crewai import Agent, Crew, Task

    def ids(seed: int) -> list[str]:
        with FlowsSession(seed=seed, test_id="tests::crew-ids"):
            agent = Agent(role="analyst", goal="analyse", backstory="careful", llm="gpt-4o-mini")
            task = Task(description="analyse x", expected_output="a note", agent=agent)
            crew = Crew(agents=[agent], tasks=[task])
            return [str(agent.id), str(task.id), str(crew.id)]

    first = ids(0)
    assert ids(0) == first
    assert len(set(first)) == 3
    assert ids(1) != first
