"""The tests a user writes for resume and fork: histories, ids, the trace, a property."""

from __future__ import annotations

from counter_flow import CounterFlow

from pytest_flows import check_fork_isolation


def test_a_fresh_kickoff_saves_after_each_method(flows, flow_store):
    run = flows.run(CounterFlow)

    assert run.output == "counter is 1"
    assert flow_store.methods(run.state.id) == ["step", "remember"]
    assert flow_store.latest(run.state.id).snapshot["history"] == [1]


def test_resume_extends_the_same_history(flows, flow_store):
    first = flows.run(CounterFlow)
    resumed = flows.run(CounterFlow, inputs={"id": first.state.id})

    assert resumed.state.id == first.state.id
    assert resumed.output == "counter is 2"
    assert [s.snapshot["counter"] for s in flow_store.history(first.state.id)] == [1, 1, 2, 2]


def test_fork_starts_from_the_latest_snapshot_and_leaves_the_source_alone(flows, flow_store):
    source = flows.run(CounterFlow)
    fork = flows.run(CounterFlow, restore_from_state_id=source.state.id)

    assert fork.state.id != source.state.id
    assert fork.state.history == [1, 2]  # started from the source's [1]
    assert flow_store.methods(source.state.id) == ["step", "remember"]  # untouched
    assert flow_store.diff(flow_store.latest(source.state.id), fork, ignore=("id",)) == (
        "~ counter: 1 -> 2\n+ history[1]: 2\n"
    )
    assert fork.trace.render() == (
        "state restored remember mode=fork id=<uuid:1> n=2\n"
        "flow started CounterFlow\n"
        "method started step trigger=start\n"
        "state saved step id=<uuid:2> n=1\n"
        "method finished step output=2\n"
        "method started remember trigger=step\n"
        "state saved remember id=<uuid:2> n=2\n"
        "method finished remember output='counter is 2'\n"
        "flow finished CounterFlow output='counter is 2'\n"
    )


def test_fork_into_a_pinned_id(flows, flow_store):
    source = flows.run(CounterFlow)
    fork = flows.run(CounterFlow, inputs={"id": "what-if"}, restore_from_state_id=source.state.id)

    assert fork.state.id == "what-if"
    assert fork.output == "counter is 2"
    assert len(flow_store.history(source.state.id)) == 2


def test_forking_an_unknown_id_runs_fresh_and_the_trace_says_so(flows, flow_store):
    run = flows.run(CounterFlow, restore_from_state_id="typo-in-the-id")

    assert run.output == "counter is 1"  # crewai falls back silently...
    assert "state not_found mode=fork id=typo-in-the-id" in run.trace.render()  # ...we don't


def test_forks_never_touch_other_histories(flows, flow_store):
    # Any sequence of kickoffs, resumes and forks (pinned or not), shrunk on failure.
    check_fork_isolation(flows, flow_store, CounterFlow, max_examples=8)
