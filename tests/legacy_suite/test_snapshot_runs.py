"""Copied unchanged from tests/crewai/test_snapshot_runs.py at 9da8b68 (the first round),
with its snapshots, less one test (below).

Snapshots of real CrewAI runs: trace, run, persisted history, pending feedback,
checkpoints, a checkpoint round trip and race outcomes (files in __snapshots__/)."""

from __future__ import annotations

from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import persist
from dispatch_flows import SyncRace  # noqa: F401 (the left-out test used it)
from pydantic import BaseModel
from store_flows import EVERY_STEP, ReviewFlow, StepsFlow

from pytest_flows.races import explore  # noqa: F401
from pytest_flows.snapshot import checkpoint_round_trip, normalized, snapshot_text


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


def test_the_trace(flows, snapshot):
    assert flows.run(LedgerFlow).trace == snapshot


def test_the_whole_run(flows, snapshot):
    assert flows.run(LedgerFlow) == snapshot


def test_the_persisted_history(flows, flow_store, snapshot):
    run = flows.run(LedgerFlow)
    history = flow_store.history(run.state.id)

    assert [save.method for save in history] == ["open", "add", "close"]
    assert history == snapshot
    # The set field is listed sorted, whatever order the JSON list was stored in.
    assert '  tags: ["alpha", "beta", "mu", "zeta"]' in snapshot_text(history)


def test_pending_feedback(flows, flow_store, snapshot):
    paused = flows.run(ReviewFlow)
    assert flow_store.pending(paused.state.id) == snapshot


def test_checkpoints(flows, flow_store, snapshot):
    # Checkpoints hold crewai's JSON dump: no set fields here (see docs/snapshots.md).
    flows.run(StepsFlow(checkpoint=EVERY_STEP))
    assert flow_store.checkpoints() == snapshot


def test_a_checkpoint_round_trip(flows, flow_store, snapshot):
    round_trip = checkpoint_round_trip(flows, flow_store, LedgerFlow, checkpoint=1)

    assert set(round_trip.checkpoint.completed) == {"open", "add"}
    # crewai hands a restored listener None for a method completed before the
    # checkpoint: close() reads `total` from its argument, so the output differs.
    assert round_trip.same_state
    assert (round_trip.same_output, round_trip.restored_output) == (False, "total=None")
    assert round_trip == snapshot


# test_the_possible_winners_of_a_race (round 1: `explore(flows, SyncRace, seeds=range(48))`
# against a snapshot of the nine outcomes those seeds reached) is left out of this copy:
# since the second round's thread scheduler a seed picks another interleaving, and 48 seeds
# reach a tenth outcome the runtime allows (CHANGELOG.md, 0.1.0, Changed). The import and the
# call still work: test_round_one_docs.py::test_exploring_seeds_finds_every_winner.


def test_normalized_data(flows, flow_store, snapshot):
    flows.run(StepsFlow(checkpoint=EVERY_STEP))
    payload = flow_store.checkpoints()[0].payload
    assert normalized(payload["entities"][0]["checkpoint_state"]) == snapshot
