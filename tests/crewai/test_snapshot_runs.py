"""Snapshots of real CrewAI runs: trace, run, persisted history, pending feedback,
checkpoints, a checkpoint round trip and race outcomes (files in __snapshots__/)."""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import persist
from crewai_versions import crewai_114_differs, needs_json_default, needs_trace_context
from dispatch_flows import SyncRace
from pydantic import BaseModel
from store_flows import EVERY_STEP, ReviewFlow, StepsFlow

from pytest_flows import explore
from pytest_flows._internal.snapshot import checkpoint_round_trip, normalized, snapshot_text


class LedgerState(BaseModel):
    entries: list[str] = []
    tags: set[str] = set()
    total: int = 0


@persist()
class LedgerFlow(Flow[LedgerState]):
    """Three persisted steps; a set field (stored as a JSON list)."""

    @start()
    def open(self) -> str:
        self.state.entries.append("open")
        self.state.tags |= {"zeta", "alpha", "mu", "beta"}
        return "opened"

    @listen(open)
    def add(self, _: str) -> int:
        self.state.entries.append("add 5")
        self.state.total += 5
        return self.state.total

    @listen(add)
    def close(self, total: int) -> str:
        self.state.entries.append("close")
        return f"total={total}"


@needs_json_default
def test_the_trace(flows, snapshot):
    assert flows.run(LedgerFlow).trace == snapshot


@needs_json_default
def test_the_whole_run(flows, snapshot):
    assert flows.run(LedgerFlow) == snapshot


@needs_json_default
def test_the_persisted_history(flows, flow_store, snapshot):
    run = flows.run(LedgerFlow)
    history = flow_store.history(run.state.id)

    assert [save.method for save in history] == ["open", "add", "close"]
    assert history == snapshot
    # The set field is listed sorted, whatever order the JSON list was stored in.
    assert '  tags: ["alpha", "beta", "mu", "zeta"]' in snapshot_text(history)


@needs_trace_context
def test_pending_feedback(flows, flow_store, snapshot):
    paused = flows.run(ReviewFlow)
    assert flow_store.pending(paused.state.id) == snapshot


def test_checkpoints(flows, flow_store, snapshot):
    # Checkpoints hold crewai's JSON dump: no set fields here (see docs/snapshots.md).
    flows.run(StepsFlow(checkpoint=EVERY_STEP))
    assert flow_store.checkpoints() == snapshot


@needs_json_default
def test_a_checkpoint_round_trip(flows, flow_store, snapshot):
    round_trip = checkpoint_round_trip(flows, flow_store, LedgerFlow, checkpoint=1)

    assert set(round_trip.checkpoint.completed) == {"open", "add"}
    # crewai hands a restored listener None for a method completed before the
    # checkpoint: close() reads `total` from its argument, so the output differs.
    assert round_trip.same_state
    assert (round_trip.same_output, round_trip.restored_output) == (False, "total=None")
    assert round_trip == snapshot


@crewai_114_differs(
    "or_ races have another possible outcome there (the snapshot holds crewai 1.15's)"
)
def test_the_possible_winners_of_a_race(flows, snapshot):
    outcomes = explore(flows, SyncRace, seeds=range(48))

    assert outcomes.winners == {"alpha", "beta", "gamma"}
    assert outcomes == snapshot


def test_normalized_data(flows, flow_store, snapshot):
    flows.run(StepsFlow(checkpoint=EVERY_STEP))
    payload = flow_store.checkpoints()[0].payload
    assert normalized(payload["entities"][0]["checkpoint_state"]) == snapshot
