"""The property helpers find a planted bug in a broken flow and pass on its correct twin."""

from __future__ import annotations

import pytest
from crewai.flow.flow import Flow, FlowState, listen, start
from crewai.state.checkpoint_config import CheckpointConfig
from crewai_versions import needs_json_default
from property_flows import (
    BusinessKeyOrder,
    CachedReport,
    IntKeyedTotals,
    OrderFlow,
    ParallelPipeline,
    Report,
    SafePipeline,
    TagModelFlow,
    TagSetFlow,
    TypedTotals,
    UnsafePipeline,
    every_step,
)

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.state import state_properties
from pytest_flows._internal.state.property_timeouts import PropertyTimedOut
from pytest_flows._internal.state.state_properties import (
    assert_crash_resume,
    assert_fork_isolated,
    assert_time_travel,
    check_crash_resume,
    check_fork_isolation,
    check_time_travel,
)
from pytest_flows._internal.state.store_records import CrashPoint
from pytest_flows._internal.state.strategies import scheduler_seeds


# -- (a) crash-resume equivalence ----------------------------------------------------------
def test_crash_resume_passes_on_a_flow_that_skips_done_work(flows, flow_store):
    check_crash_resume(flows, flow_store, SafePipeline, max_examples=12)


def test_crash_resume_finds_the_planted_bug_and_shrinks_to_the_first_save(flows, flow_store):
    with pytest.raises(AssertionError) as failure:
        check_crash_resume(flows, flow_store, UnsafePipeline, max_examples=12)
    message = str(failure.value)
    assert "crashed after save 1" in message  # the smallest crash point
    assert "~ total: 12 -> 24" in message
    assert "final output differs: uninterrupted 12, continued 24" in message
    reproducer = (
        "assert_crash_resume(flows, flow_store, UnsafePipeline, "
        "crash=CrashPoint(save=1, when='after'))"
    )
    assert reproducer in message


def test_crash_resume_compares_outputs_with_their_types(flows, flow_store):
    # Rendered as text, {1: 10} and {'1': 10} look alike; compared with their types
    # they do not (the int keys came back from the store as str keys).
    with pytest.raises(AssertionError) as failure:
        check_crash_resume(flows, flow_store, IntKeyedTotals, max_examples=6)
    message = str(failure.value)
    assert "output[1] (key): int came back as str (1 -> '1')" in message
    check_crash_resume(flows, flow_store, TypedTotals, max_examples=6)


def test_the_reproducer_reproduces(flows, flow_store):
    with pytest.raises(AssertionError, match="crashed after save 1"):
        assert_crash_resume(flows, flow_store, UnsafePipeline, CrashPoint(save=1, when="after"))
    # ...and the same point is fine for the correct twin.
    assert_crash_resume(flows, flow_store, SafePipeline, CrashPoint(save=1, when="after"))
    assert_crash_resume(flows, flow_store, SafePipeline, CrashPoint(save=3, when="before"))


def test_crash_resume_across_scheduler_seeds(flows, flow_store):
    check_crash_resume(
        flows, flow_store, ParallelPipeline, seeds=scheduler_seeds(), max_examples=12
    )


def test_a_crash_point_past_the_last_save_is_reported(flows, flow_store):
    with pytest.raises(AssertionError, match="finished without reaching after save 9"):
        assert_crash_resume(flows, flow_store, SafePipeline, CrashPoint(save=9))


def test_a_flow_that_persists_nothing_is_a_usage_error(flows, flow_store):
    with pytest.raises(FlowsUsageError, match="saved nothing"):
        check_crash_resume(flows, flow_store, Report, max_examples=2)


def test_an_instance_is_refused_each_run_needs_a_fresh_one(flows, flow_store):
    with pytest.raises(FlowsUsageError, match="not an instance"):
        check_crash_resume(flows, flow_store, SafePipeline(), max_examples=2)


# -- (b) fork isolation -----------------------------------------------------------------
@pytest.mark.parametrize("flow", [OrderFlow, pytest.param(TagModelFlow, marks=needs_json_default)])
def test_fork_isolation_passes_on_correct_flows(flows, flow_store, flow):
    check_fork_isolation(flows, flow_store, flow, max_examples=6)


def test_fork_isolation_finds_a_fork_writing_into_the_source(flows, flow_store):
    with pytest.raises(AssertionError) as failure:
        check_fork_isolation(flows, flow_store, BusinessKeyOrder, max_examples=6)
    message = str(failure.value)
    assert "forking changed the history of the source ('order-1')" in message
    assert "(new: ['take'])" in message


@needs_json_default
def test_fork_isolation_finds_a_fork_that_does_not_start_from_the_snapshot(flows, flow_store):
    with pytest.raises(AssertionError) as failure:
        check_fork_isolation(flows, flow_store, TagSetFlow, max_examples=6)
    message = str(failure.value)
    assert "did not start from the source's latest snapshot" in message
    assert "tags: set came back as list" in message
    assert "the fork failed: AttributeError" in message


def test_assert_fork_isolated_with_a_pinned_id(flows, flow_store):
    source = flows.run(OrderFlow).state["id"]
    fork_id = assert_fork_isolated(flows, flow_store, OrderFlow, source, pin="pinned-1")
    assert fork_id == "pinned-1"
    assert flow_store.methods(source) == ["take"]
    assert flow_store.latest("pinned-1").snapshot["count"] == 2  # type: ignore[union-attr]


# -- (c) checkpoint time travel -------------------------------------------------------------
def test_time_travel_passes_when_everything_is_in_the_state(flows, flow_store):
    check_time_travel(flows, flow_store, lambda: Report(checkpoint=every_step()), max_examples=6)


def test_time_travel_adds_checkpointing_to_a_flow_without_it(flows, flow_store):
    check_time_travel(flows, flow_store, Report, max_examples=6)


def test_time_travel_finds_state_kept_outside_the_state(flows, flow_store):
    with pytest.raises(AssertionError) as failure:
        check_time_travel(flows, flow_store, CachedReport, max_examples=6)
    message = str(failure.value)
    assert "restored checkpoint 0" in message  # shrunk to the earliest checkpoint
    assert "~ total: 12 -> 0" in message
    assert "-method finished summarize output=12" in message
    assert "+method finished summarize output=0" in message
    assert "assert_time_travel(flows, flow_store, CachedReport, checkpoint=0)" in message


def test_assert_time_travel_checks_its_index(flows, flow_store):
    assert_time_travel(flows, flow_store, Report, 2)
    with pytest.raises(FlowsUsageError, match=r"pass 0\.\.2"):
        assert_time_travel(flows, flow_store, Report, 3)


@pytest.mark.asyncio
async def test_the_helpers_work_from_an_async_test(flows, flow_store):
    check_crash_resume(flows, flow_store, SafePipeline, max_examples=4)
    with pytest.raises(AssertionError, match="crashed after save 1"):
        check_crash_resume(flows, flow_store, UnsafePipeline, max_examples=4)


class Steps(FlowState):
    total: int = 0


class ClassValuedState(Flow[Steps]):
    """``initial_state`` holds a class: crewai cannot serialize the flow into a checkpoint."""

    initial_state = Steps

    @start()
    def first(self) -> int:
        self.state.total += 1
        return self.state.total

    @listen(first)
    def second(self, _: int) -> int:
        self.state.total += 10
        return self.state.total


class NeverCheckpoints(Flow[Steps]):
    @start()
    def first(self) -> int:
        return 1


class FailsAtOnce(Flow[Steps]):
    @start()
    def first(self) -> int:
        raise LookupError("no such order")


def test_time_travel_on_a_flow_whose_checkpoint_cannot_be_written_names_the_field(
    flows, flow_store
):
    for helper in (
        lambda: check_time_travel(flows, flow_store, ClassValuedState, max_examples=2),
        lambda: assert_time_travel(flows, flow_store, ClassValuedState, 0),
    ):
        with pytest.raises(FlowsUsageError) as info:
            helper()
        message = str(info.value)
        assert message.startswith(
            "ClassValuedState wrote no checkpoint: checkpointing is on, but every write failed"
        )
        assert "ClassValuedState: field 'initial_state' holds a value of type" in message
        assert "CheckpointConfig" not in message  # it has one: that is not the cause
    flow_store.verify()  # reported in the error, so not again at teardown


def test_time_travel_on_a_run_that_never_checkpoints_or_fails_says_so(flows, flow_store):
    never = lambda: NeverCheckpoints(  # noqa: E731
        checkpoint=CheckpointConfig(on_events=["llm_call_completed"])
    )
    with pytest.raises(FlowsUsageError, match=r"its checkpoint config never fired during the run"):
        assert_time_travel(flows, flow_store, never, 0)
    with pytest.raises(
        FlowsUsageError,
        match=r"FailsAtOnce wrote no checkpoint: the uninterrupted run failed before the first "
        r"one \(LookupError: no such order\)",
    ):
        assert_time_travel(flows, flow_store, FailsAtOnce, 0)


# -- a timeout ends the property ---------------------------------------------------------
# pytest-timeout's signal method fails the test once ("... from pytest-timeout."); before
# the helpers passed it on, hypothesis took it for a failing example and ran examples
# again with the timer spent, so an example that hung hung for ever.
@pytest.mark.parametrize(
    ("check", "step", "flow"),
    [
        (check_crash_resume, "assert_crash_resume", SafePipeline),
        (check_fork_isolation, "assert_fork_isolated", OrderFlow),
        (check_time_travel, "assert_time_travel", Report),
    ],
)
def test_a_pytest_timeout_ends_the_property_instead_of_running_it_again(
    flows, flow_store, monkeypatch, check, step, flow
):
    calls = []

    def times_out(*args, **kwargs):
        calls.append(args)
        pytest.fail("Timeout (>90.0s) from pytest-timeout.")

    monkeypatch.setattr(state_properties, step, times_out)
    with pytest.raises(PropertyTimedOut, match="run it again with the timer spent") as ended:
        check(flows, flow_store, flow, max_examples=6)

    assert len(calls) == 1
    assert str(ended.value).startswith("Timeout (>90.0s) from pytest-timeout.")


def test_any_other_failure_still_shrinks(flows, flow_store, monkeypatch):
    calls = []

    def fails(*args, **kwargs):
        calls.append(args)
        pytest.fail("the flow lost a save")

    monkeypatch.setattr(state_properties, "assert_crash_resume", fails)
    with pytest.raises(pytest.fail.Exception, match="the flow lost a save"):
        check_crash_resume(flows, flow_store, SafePipeline, max_examples=6)

    assert len(calls) > 1  # hypothesis ran it again to shrink it
