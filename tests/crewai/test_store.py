"""flow_store behind crewai @persist: the resume / fork behaviour table of seed 003.

| inputs.id | restore_from_state_id | effect                                         |
|-----------|-----------------------|------------------------------------------------|
| -         | -                     | fresh kickoff                                  |
| set       | -                     | resume (history extends under the same id)     |
| -         | id                    | fork: new id, hydrated from the source         |
| set       | id                    | fork into a pinned id, hydrated from the source|
| source not found -> silent fallback; from_checkpoint + restore_from_state_id -> ValueError
"""

from __future__ import annotations

import sqlite3

import pytest
from crewai.flow.async_feedback import HumanFeedbackPending
from crewai.state.checkpoint_config import CheckpointConfig
from store_flows import (
    CounterFlow,
    ExplicitSqliteFlow,
    MethodPersistFlow,
    ReviewFlow,
    StepsFlow,
)

from pytest_flows._internal.state.store import FlowStore
from pytest_flows._internal.state.store_records import StateSave
from pytest_flows.crewai._persistence import FlowStorePersistence


def _lines(run: object, kind: str) -> list[str]:
    trace = run.trace  # type: ignore[attr-defined]
    return [e.render() for e in trace if e.kind.startswith(kind)]


def test_persist_bound_at_import_is_the_store(flows, flow_store):
    # @persist() ran at import of store_flows, before any fixture: it must have
    # bound the in-memory router, not SQLite.
    assert isinstance(CounterFlow().persistence, FlowStorePersistence)
    run = flows.run(CounterFlow)
    assert flow_store.ids == [run.state.id]


def test_fresh_kickoff_saves_after_each_persisted_method(flows, flow_store):
    run = flows.run(CounterFlow)

    history = flow_store.history(run.state.id)
    assert [(s.method, s.snapshot["counter"]) for s in history] == [("step", 1)]
    assert flow_store.latest(run.state.id) == history[-1]
    assert _lines(run, "state.") == ["state saved step id=<uuid:1> n=1"]


def test_resume_with_inputs_id_extends_the_same_history(flows, flow_store):
    first = flows.run(CounterFlow)
    resumed = flows.run(CounterFlow, inputs={"id": first.state.id})

    assert resumed.state.id == first.state.id
    assert resumed.state.counter == 2
    assert [s.snapshot["counter"] for s in flow_store.history(first.state.id)] == [1, 2]
    assert _lines(resumed, "state.") == [
        "state restored step mode=resume id=<uuid:1> n=1",
        "state saved step id=<uuid:1> n=2",
    ]


def test_fork_gets_a_new_id_and_leaves_the_source_alone(flows, flow_store):
    source = flows.run(CounterFlow)
    before = flow_store.history(source.state.id)

    fork = flows.run(CounterFlow, restore_from_state_id=source.state.id)

    assert fork.state.id != source.state.id
    assert fork.state.counter == 2  # hydrated from counter=1, then stepped
    assert flow_store.history(source.state.id) == before
    assert [s.snapshot["counter"] for s in flow_store.history(fork.state.id)] == [2]
    assert _lines(fork, "state.") == [
        "state restored step mode=fork id=<uuid:1> n=1",
        "state saved step id=<uuid:2> n=1",
    ]


def test_fork_into_a_pinned_id(flows, flow_store):
    source = flows.run(CounterFlow)
    fork = flows.run(
        CounterFlow, inputs={"id": "pinned-fork"}, restore_from_state_id=source.state.id
    )

    assert fork.state.id == "pinned-fork"
    assert fork.state.counter == 2
    assert flow_store.methods(source.state.id) == ["step"]
    assert [s.snapshot["counter"] for s in flow_store.history("pinned-fork")] == [2]


def test_fork_from_an_unknown_id_falls_back_silently_and_the_trace_says_so(flows, flow_store):
    run = flows.run(CounterFlow, restore_from_state_id="no-such-flow")

    assert run.state.counter == 1  # a fresh run, no error
    assert run.state.id != "no-such-flow"
    assert _lines(run, "state.")[0] == (
        "state not_found mode=fork id=no-such-flow fallback=runs fresh with a new id"
    )


def test_resume_of_an_unknown_id_runs_fresh_under_that_id(flows, flow_store):
    run = flows.run(CounterFlow, inputs={"id": "never-saved"})

    assert run.state.id == "never-saved"
    assert run.state.counter == 1
    assert _lines(run, "state.") == [
        "state not_found mode=resume id=never-saved fallback=runs fresh under this id",
        "state saved step id=never-saved n=1",
    ]


def test_from_checkpoint_with_restore_from_state_id_is_a_value_error(flows, flow_store):
    source = flows.run(CounterFlow)
    with pytest.raises(ValueError, match="Cannot combine"):
        flows.run(
            CounterFlow,
            from_checkpoint=CheckpointConfig(restore_from="anywhere.json"),
            restore_from_state_id=source.state.id,
        )
    assert flow_store.methods(source.state.id) == ["step"]  # nothing ran, nothing saved


def test_method_level_persist_needs_a_persistence_to_resume(flows, flow_store):
    # crewai leaves flow.persistence unset when only methods are @persist-ed:
    # inputs["id"] then does not restore (the save still lands under that id).
    first = flows.run(MethodPersistFlow)
    silent = flows.run(MethodPersistFlow, inputs={"id": first.state.id})
    assert silent.state.counter == 1
    assert "state restored" not in silent.trace.render()

    # Passing the store as the flow's persistence makes resume (and fork) work.
    resumed = flows.run(
        MethodPersistFlow(persistence=flow_store.persistence), inputs={"id": first.state.id}
    )
    assert resumed.state.counter == 2
    assert resumed.output == "counter=2"
    assert flow_store.methods(first.state.id) == ["step", "step", "step"]


def test_explicit_sqlite_persistence_is_kept_in_memory(flows, flow_store):
    backend = ExplicitSqliteFlow().persistence
    run = flows.run(ExplicitSqliteFlow)
    again = flows.run(ExplicitSqliteFlow, inputs={"id": run.state.id})

    assert again.state.counter == 2
    assert flow_store.methods(run.state.id) == ["step", "step"]
    with sqlite3.connect(backend.db_path) as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM flow_states").fetchone()
    assert rows == 0  # the database file bound at import was never written


def test_nothing_is_written_to_the_working_directory(flows, flow_store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = flows.run(StepsFlow(checkpoint=CheckpointConfig(on_events=["*"])))
    flows.run(CounterFlow)
    flows.run(
        StepsFlow,
        from_checkpoint=CheckpointConfig(restore_from=flow_store.checkpoints()[0].location),
    )

    assert run.output == "total=111"
    assert len(flow_store.checkpoints()) > 3
    assert list(tmp_path.iterdir()) == []


def test_history_snapshots_and_diff(flows, flow_store):
    first = flows.run(CounterFlow)
    flows.run(CounterFlow, inputs={"id": first.state.id})
    flows.run(CounterFlow, inputs={"id": first.state.id})

    saves = flow_store.history(first.state.id)
    assert [s.index for s in saves] == [1, 2, 3]
    assert all(isinstance(s, StateSave) and s.framework == "crewai" for s in saves)
    assert flow_store.snapshots(first.state.id)[-1] == {"id": first.state.id, "counter": 3}
    assert flow_store.diff(saves[0], saves[-1]) == "~ counter: 1 -> 3\n"
    assert flow_store.diff(saves[0], saves[0]) == ""
    assert flow_store.history("unknown") == [] and flow_store.latest("unknown") is None


def test_pending_feedback_is_stored_loaded_and_cleared(flows, flow_store):
    paused = flows.run(ReviewFlow)
    assert isinstance(paused.output, HumanFeedbackPending)
    state_id = paused.state.id

    pending = flow_store.pending(state_id)
    assert pending is not None
    assert pending.method == "write"
    assert pending.context["message"] == "Review the draft:"
    assert pending.snapshot["draft"] == "hello"
    assert flow_store.pending_ids == [state_id]
    assert "feedback saved write id=<uuid:1>" in paused.trace.render()

    # Later, in "another process": from_pending resolves crewai's default
    # persistence, i.e. the store, and resume finishes the flow.
    flow = ReviewFlow.from_pending(state_id)
    assert flow.state.draft == "hello"
    result = flow.resume("ship it")

    assert result == "published: ship it"
    assert flow_store.pending(state_id) is None
    rendered = flows.trace.render()
    assert "feedback loaded write" in rendered
    assert "feedback cleared write" in rendered


def test_the_stores_flow_persistence_reads_and_writes_the_store(flows, flow_store):
    run = flows.run(CounterFlow)
    persistence = flow_store.persistence
    assert persistence.load_state(run.state.id) == {"id": run.state.id, "counter": 1}
    persistence.save_state(run.state.id, "manual", {"id": run.state.id, "counter": 7})
    assert flow_store.methods(run.state.id) == ["step", "manual"]
    assert persistence.load_pending_feedback(run.state.id) is None


def test_the_store_itself_has_no_crewai_persistence_methods(flow_store):
    # crewai's FlowPersistence calls live on flow_store.persistence (the adapter's), so
    # the framework-neutral store carries none of them.
    assert not any(hasattr(flow_store, name) for name in ("save_state", "load_state"))


def test_each_test_gets_an_empty_store(flows, flow_store):
    assert flow_store.ids == [] and flow_store.checkpoints() == []
    assert isinstance(flow_store, FlowStore)


@pytest.mark.parametrize("attempt", [1, 2])
def test_persistence_outside_flow_store_tests_stays_in_memory_and_per_test(flows, attempt):
    # No flow_store requested: @persist still never reaches the disk, and a
    # test cannot see states another test saved (the other attempt uses the
    # same id).
    run = flows.run(CounterFlow, inputs={"id": "shared-id"})
    assert run.state.counter == 1
    again = flows.run(CounterFlow, inputs={"id": "shared-id"})
    assert again.state.counter == 2


def test_a_test_without_flow_store_still_traces_what_the_flow_persists(flows):
    # Issue 29, B3: the store events are the run's, not the fixture's.
    run = flows.run(CounterFlow, inputs={"id": "traced"})
    fork = flows.run(CounterFlow, restore_from_state_id="no-such-flow")

    assert _lines(run, "state.") == [
        "state not_found mode=resume id=traced fallback=runs fresh under this id",
        "state saved step id=traced n=1",
    ]
    assert _lines(fork, "state.")[0] == (
        "state not_found mode=fork id=no-such-flow fallback=runs fresh with a new id"
    )
