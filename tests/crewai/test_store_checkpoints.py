"""flow_store behind crewai checkpoints: records, lineage, restore, fork, time travel."""

from __future__ import annotations

import contextvars

import pytest
from crewai.state.checkpoint_config import CheckpointConfig
from crewai.state.provider.sqlite_provider import SqliteProvider
from store_flows import EVERY_STEP, StepsFlow

from pytest_flows._internal.state.store_records import CheckpointRecord


def _steps(**config: object) -> StepsFlow:
    return StepsFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"], **config))


def test_each_checkpoint_is_recorded_with_trigger_state_and_lineage(flows, flow_store):
    run = flows.run(_steps())

    first, second, third = flow_store.checkpoints()
    assert all(isinstance(c, CheckpointRecord) for c in (first, second, third))
    assert [c.trigger for c in (first, second, third)] == ["method_execution_finished"] * 3
    assert [c.completed for c in (first, second, third)] == [
        ("first",),
        ("first", "second"),
        ("first", "second", "third"),
    ]
    assert [c.state["total"] for c in (first, second, third)] == [1, 11, 111]  # type: ignore[index]
    assert (first.parent_id, second.parent_id, third.parent_id) == (None, first.id, second.id)
    assert {c.branch for c in (first, second, third)} == {"main"}
    assert flow_store.lineage(third) == [first, second, third]
    assert flow_store.branches() == ["main"]
    assert third.payload["entities"][0]["checkpoint_state"]["id"] == run.state.id
    # Locations follow JsonProvider's format, though nothing is written.
    assert third.location.startswith(".checkpoints/main/")
    assert third.location.endswith(f"_p-{second.id}.json")
    assert flow_store.checkpoint(third.location) is third
    assert flow_store.checkpoint(third.id) is third
    assert flow_store.checkpoint(3) is third
    assert flow_store.diff(first, third) == (
        "~ total: 1 -> 111\n+ log[1]: 'second'\n+ log[2]: 'third'\n"
    )
    assert [e.render() for e in run.trace.of_kind("checkpoint.saved")] == [
        "checkpoint saved method_execution_finished n=1 branch=main parent=none",
        "checkpoint saved method_execution_finished n=2 branch=main parent=1",
        "checkpoint saved method_execution_finished n=3 branch=main parent=2",
    ]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_restore_any_checkpoint_and_continue(flows, flow_store, index):
    uninterrupted = flows.run(_steps())
    checkpoint = flow_store.checkpoints()[index]

    restored = flows.run(
        StepsFlow,
        from_checkpoint=EVERY_STEP.model_copy(update={"restore_from": checkpoint.location}),
    )

    assert restored.state.model_dump() == uninterrupted.state.model_dump()
    assert restored.output == uninterrupted.output
    ran = restored.trace.names("method.started")
    assert ran == ["first", "second", "third"][index + 1 :]
    assert restored.trace.events[0].render() == (
        f"checkpoint restored n={checkpoint.n} branch=main"
    )
    # Continuing writes new checkpoints that descend from the restored one.
    new = flow_store.checkpoints()[3:]
    assert len(new) == 2 - index
    if new:
        assert flow_store.lineage(new[-1])[: index + 1] == flow_store.checkpoints()[: index + 1]


def test_flow_fork_starts_a_branch_from_a_checkpoint(flows, flow_store):
    flows.run(_steps())
    first = flow_store.checkpoints()[0]

    def fork_and_run() -> object:
        forked = StepsFlow.fork(
            EVERY_STEP.model_copy(update={"restore_from": first.location}), branch="what-if"
        )
        # Flow.fork restores into a fresh instance without the checkpoint config
        # (kickoff(from_checkpoint=...) sets it; fork does not): set it again.
        forked.checkpoint = EVERY_STEP
        return flows.run(forked)

    run = contextvars.copy_context().run(fork_and_run)

    assert run.state.total == 111  # type: ignore[attr-defined]
    assert run.state.id != first.state["id"]  # type: ignore[attr-defined,index]
    branch = flow_store.checkpoints(branch="what-if")
    assert [c.completed for c in branch] == [("first", "second"), ("first", "second", "third")]
    assert flow_store.lineage(branch[-1])[0] is first
    assert len(flow_store.checkpoints(branch="main")) == 3  # the source line is untouched
    assert "checkpoint forked what-if parent=1" in flows.trace.render()


def test_max_checkpoints_prunes_the_oldest_in_memory(flows, flow_store):
    flows.run(_steps(max_checkpoints=2))
    assert [c.completed[-1] for c in flow_store.checkpoints()] == ["second", "third"]
    assert "checkpoint pruned branch=main removed=1" in flows.trace.render()


def test_sqlite_checkpoint_provider_is_kept_in_memory(flows, flow_store, tmp_path):
    db = tmp_path / "checkpoints.db"
    run = flows.run(
        StepsFlow(
            checkpoint=CheckpointConfig(
                location=str(db),
                provider=SqliteProvider(),
                on_events=["method_execution_finished"],
            )
        )
    )
    first = flow_store.checkpoints()[0]
    assert first.kind == "sqlite" and first.location == f"{db}#{first.id}"

    restored = flows.run(
        StepsFlow,
        from_checkpoint=CheckpointConfig(
            location=str(db), provider=SqliteProvider(), restore_from=first.location
        ),
    )
    assert restored.output == run.output == "total=111"
    assert not db.exists()


def test_restore_equals_the_uninterrupted_suffix_via_assert_round_trip(flows, flow_store):
    for index in range(3):
        flow_store.assert_round_trip(
            lambda: StepsFlow(checkpoint=EVERY_STEP), flows=flows, checkpoint=index
        )


def test_a_golden_checkpoint_file_on_disk_still_restores(flows, flow_store, tmp_path):
    flows.run(_steps())
    golden = tmp_path / "golden.json"
    golden.write_text(flow_store.checkpoints()[1].raw, encoding="utf-8")

    restored = flows.run(StepsFlow, from_checkpoint=CheckpointConfig(restore_from=str(golden)))

    assert restored.state.log == ["first", "second", "third"]
    assert restored.trace.names("method.started") == ["third"]
