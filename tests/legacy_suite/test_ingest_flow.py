"""Copied unchanged from examples/ at 9da8b68 (the first round).

The tests a user writes for a pipeline that must survive a crash at any step."""

from __future__ import annotations

import ingest_flow
import pytest
from ingest_flow import IngestPipeline, NaiveIngestPipeline

from pytest_flows.store import CrashPoint, SimulatedCrash
from pytest_flows.strategies import check_crash_resume, check_time_travel, scheduler_seeds

STEPS = ["fetch", "split", "build_index", "publish"]


@pytest.fixture(autouse=True)
def _fresh_outbox(monkeypatch):
    monkeypatch.setattr(ingest_flow, "OUTBOX", ingest_flow.Outbox())


def test_the_pipeline_saves_after_every_step(flows, flow_store):
    run = flows.run(IngestPipeline)

    assert run.output == "published 13 terms from 3 docs"
    assert flow_store.methods(run.state.id) == STEPS
    assert ingest_flow.OUTBOX.sent == {f"{run.state.id}:index": 13}


@pytest.mark.parametrize("save", [1, 2, 3, 4])
@pytest.mark.parametrize("when", ["after", "before"])
def test_a_crash_at_any_step_then_resume_gives_the_same_result(flows, flow_store, save, when):
    with flow_store.crash_at(CrashPoint(save, when)), pytest.raises(SimulatedCrash) as crash:
        flows.run(IngestPipeline)
    crashed_id = crash.value.state_id
    assert len(flow_store.history(crashed_id)) == (save if when == "after" else save - 1)

    resumed = flows.run(IngestPipeline, inputs={"id": crashed_id})

    assert resumed.output == "published 13 terms from 3 docs"
    assert resumed.state.done == STEPS
    assert sum(resumed.state.index.values()) == 14  # 14 chunks, none indexed twice
    assert ingest_flow.OUTBOX.sent == {f"{crashed_id}:index": 13}  # published once


def test_crash_resume_property(flows, flow_store):
    # Every crash point (and scheduler seed), shrunk to the smallest on failure.
    check_crash_resume(flows, flow_store, IngestPipeline, seeds=scheduler_seeds(), max_examples=15)


def test_the_property_catches_the_naive_pipeline(flows, flow_store):
    # fetch overwrites (safe to repeat); split appends (not): the smallest
    # failing crash point is right after split's save.
    with pytest.raises(AssertionError, match=r"crashed after save 2") as failure:
        check_crash_resume(flows, flow_store, NaiveIngestPipeline, max_examples=15)
    assert "~ index.state: 2 -> 4" in str(failure.value)
    assert "CrashPoint(save=2, when='after')" in str(failure.value)  # the reproducer


def test_every_restore_point_round_trips(flows, flow_store):
    flow_store.assert_round_trip(IngestPipeline, flows=flows)  # crash after each save, resume
    flow_store.assert_round_trip(flows.run(IngestPipeline))  # every save decodes to itself


def test_restoring_any_checkpoint_continues_the_same_way(flows, flow_store):
    check_time_travel(flows, flow_store, IngestPipeline, max_examples=8)
