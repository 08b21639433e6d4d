"""Sync flow methods on real threads, one at a time: crewai flows as a real pool runs them.

What was compared with bare crewai 1.15.30 (plugin disabled, telemetry off, 30 kickoffs
in one process, see each test): the outcome a bare run shows (nearly) every time is
the harness's seed-0 outcome, and the other seeds reach the rarer ones.
"""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest
from scheduler_flows import (
    CallsBack,
    Crossed,
    GuardedUpdate,
    Handshake,
    LostUpdate,
    Rendezvous,
    SlowFour,
    TwoStarts,
    lost_update,
)

from pytest_flows import FlowsSession
from pytest_flows._internal.errors import FlowsDeadlockError


def _wall() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def test_seed_zero_loses_updates_as_production_does(flows: FlowsSession) -> None:
    # Bare crewai: n == 1 in 29 of 30 kickoffs (all three listeners read 0 before
    # any of them wrote back).
    assert flows.run(LostUpdate).state.n == 1


def test_seeds_reach_every_outcome_of_the_lost_update_and_repeat_it() -> None:
    outcomes = {seed: lost_update(seed) for seed in range(13)}
    assert outcomes[0] == 1
    assert set(outcomes.values()) == {1, 2, 3}
    for seed in (0, *[s for s in range(1, 13) if outcomes[s] != 1][:2]):
        assert {lost_update(seed) for _ in range(30)} == {outcomes[seed]}


def test_the_guarded_twin_counts_every_update_on_every_seed() -> None:
    for seed in range(13):
        with FlowsSession(seed=seed, test_id="tests::guarded") as session:
            assert session.run(GuardedUpdate).state.n == 3


def test_listeners_meeting_at_a_barrier_both_pass(flows: FlowsSession) -> None:
    run = flows.run(Rendezvous)
    assert run.output == "both passed"
    finished = {e.name: e for e in run.trace.of_kind("method.finished")}
    assert {"left", "right", "done"} <= set(finished)


def test_a_coroutine_polling_for_a_thread_sees_it(flows: FlowsSession) -> None:
    run = flows.run(Handshake)
    assert "poll" in run.trace.names("method.finished")


def test_a_sync_method_may_wait_on_a_coroutine_it_sends_to_the_loop(flows: FlowsSession) -> None:
    assert flows.run(CallsBack).output == 42
    assert flows.clock.monotonic() == 2.0


def test_parallel_sleeps_overlap_and_measure_their_duration(flows: FlowsSession) -> None:
    started = _wall()
    run = flows.run(SlowFour)
    assert _wall() - started < 2.0
    assert flows.clock.monotonic() == 30.0  # four 30 s sleeps side by side, not 120 s
    # each measured its own sleep with time.perf_counter
    measured = [line for line in run.trace.lines() if line.endswith(" output=30.0")]
    assert len(measured) == 4


def test_seed_zero_runs_the_first_start_before_the_second_is_announced(
    flows: FlowsSession,
) -> None:
    # Bare crewai: in 30 of 30 kickoffs the second start's MethodExecutionStartedEvent
    # already carried the first start's write.
    from crewai.events.event_bus import crewai_event_bus
    from crewai.events.types.flow_events import MethodExecutionStartedEvent

    seen: list[Any] = []

    @crewai_event_bus.on(MethodExecutionStartedEvent)
    def started(source: Any, event: MethodExecutionStartedEvent) -> None:
        if event.method_name == "second":
            seen.append(dict(event.state).get("first"))

    flows.run(TwoStarts)
    assert seen == ["wrote"]


def test_a_deadlocked_flow_fails_fast_with_both_stacks(flows: FlowsSession) -> None:
    started = _wall()
    with pytest.raises(FlowsDeadlockError) as caught:
        flows.run(Crossed)
    assert _wall() - started < 5.0
    message = str(caught.value)
    assert "in red_then_blue" in message and "in blue_then_red" in message
    assert "with self.blue:" in message and "with self.red:" in message


def test_a_datetime_of_the_run_survives_agent_frameworks_file_checkpoints(
    flows: FlowsSession, tmp_path: Path
) -> None:
    pytest.importorskip("agent_framework")
    from agent_framework import FileCheckpointStorage, WorkflowCheckpoint

    from pytest_flows._internal.runtime.loop import run

    async def round_trip() -> Any:
        storage = FileCheckpointStorage(str(tmp_path))
        checkpoint = WorkflowCheckpoint(
            workflow_name="w", graph_signature_hash="g", state={"at": datetime.datetime.now()}
        )
        await storage.save(checkpoint)
        return (await storage.load(checkpoint.checkpoint_id)).state["at"]

    loaded = run(round_trip(), flows.scheduler)
    assert loaded == datetime.datetime(2025, 1, 1)
    assert type(loaded) is datetime.datetime
