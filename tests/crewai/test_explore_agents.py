"""explore() on a flow whose parallel listeners run real agents (``fake_llm`` answering
them): crewAI's own bookkeeping is no race between the listeners.

Each agent runs an ``AgentExecutor`` (a crewAI ``Flow``) and every event goes into the
run's ``EventRecord`` under one read-write lock; before, both looked like races between
the two listeners' threads, and a search of two agents' crews ran past 600 schedules for
2 outcomes (``pytest_flows/crewai/_own_work.py``). Compared here: the complete search
against what seeds 0..15 reach (soundness), and the keys a run records.
"""

from __future__ import annotations

import sys
from pathlib import Path

from crewai.flow.flow import Flow, start

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration.outcomes import outcome_key
from pytest_flows._internal.runtime.schedule import Chooser, decode

sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "exploration"))
from crew_flow import TwoCrews


def _script(fake_llm) -> None:
    fake_llm.on(agent="market analyst").reply("demand grows")
    fake_llm.on(agent="tech analyst").reply("chips are cheap")


def test_two_agents_crews_explore_complete_with_every_seeds_outcome(
    flows: FlowsSession, fake_llm
) -> None:
    _script(fake_llm)
    found = explore(flows, TwoCrews, max_schedules=300)
    assert found.complete, found.schedules_run
    # On crewai 1.15.30: 140 to 177 in a pytest process with the plugin loaded, 12 in a
    # plain script's session (docs/exploration.md, "Flows whose parallel listeners run
    # agents"). Past 600 before an agent's executor had its own name and the event
    # record's lock was quiet.
    assert found.schedules_run <= 200
    assert sorted(o.run.output for o in found.outcomes) == [
        "chips are cheap + demand grows",
        "demand grows + chips are cheap",
    ]
    seeds = explore(flows, TwoCrews, seeds=range(16))
    reached = {outcome_key(run) for run in seeds.runs.values()}
    assert reached <= {o.text for o in found.outcomes}


def test_each_agents_executor_records_its_firings_under_its_own_name(
    flows: FlowsSession, fake_llm
) -> None:
    _script(fake_llm)
    chooser = Chooser(decode("s"), schedule="s")
    with flows.scheduler.following(chooser):
        flows.run(TwoCrews)
    keys = {k for step in chooser.steps for k in (*step.reads, *step.writes)}
    executors = {k for k in keys if k.startswith("fires:AgentExecutor[")}
    assert {k.split("/")[0] for k in executors} == {
        "fires:AgentExecutor[market analyst]",
        "fires:AgentExecutor[tech analyst]",
    }
    assert "fires:finalize" not in keys  # the executors' method names alone: one object
    # The user's own flow keeps its plain keys.
    assert any(k.startswith("after:summarize/") for k in keys)


class Peek(Flow):  # type: ignore[type-arg]
    """Reports the lock of the event record its run's events went into."""

    @start()
    def look(self) -> str:
        from crewai.events.event_bus import crewai_event_bus

        record = crewai_event_bus._runtime_state.event_record
        return type(record._lock._cond).__name__


def test_the_event_records_lock_is_quiet_only_while_a_schedule_is_followed(
    flows: FlowsSession,
) -> None:
    assert flows.run(Peek).output == "Condition"  # a plain run: crewAI's own lock
    with flows.scheduler.following(Chooser(decode("s"), schedule="s")):
        assert flows.run(Peek).output == "_QuietCondition"
