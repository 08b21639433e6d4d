"""The trace of real CrewAI flows for every dispatch shape the runtime has."""

from __future__ import annotations

import pytest
from crewai.flow.flow import Flow, listen, start
from dispatch_flows import (
    BranchFails,
    FanOut,
    Loop,
    NonExclusiveOr,
    Race,
    Routing,
    SyncRace,
    TwoStarts,
)

from pytest_flows import FlowsSession
from pytest_flows._internal.errors import FlowsUsageError


def test_parallel_starts_join_on_and(flows: FlowsSession) -> None:
    run = flows.run(TwoStarts)
    assert run.output == "merged"
    assert run.trace.render() == (
        "flow started TwoStarts\n"
        "method started fetch_a trigger=start\n"
        "method started fetch_b trigger=start\n"
        "method finished fetch_b output='b'\n"
        "method finished fetch_a output='a'\n"
        "method started merge trigger=and(fetch_a, fetch_b) via fetch_a\n"
        "method finished merge output='merged'\n"
        "flow finished TwoStarts output='merged'\n"
    )


def test_listeners_run_in_parallel_and_join(flows: FlowsSession) -> None:
    run = flows.run(FanOut)
    assert run.trace.names("method.started") == ["begin", "left", "middle", "right", "join"]
    # every listener starts before the first sync body completes, as in production
    assert run.trace.lines()[3:9] == [
        "method started left trigger=begin",
        "method started middle trigger=begin",
        "method started right trigger=begin",
        "method finished left output='L'",
        "method finished middle output='M'",
        "method finished right output='R'",
    ]
    assert run.output == ["left", "middle", "right"]
    assert run.method_outputs[-1] == run.output


@pytest.mark.parametrize(
    ("priority", "expected_tail"),
    [
        (
            "high",
            [
                "router chose classify label=urgent",
                "method started escalate trigger=classify:urgent",
                "method finished escalate output='page_oncall'",
                "router chose escalate label=page_oncall",
                "method started page trigger=escalate:page_oncall",
                "method finished page output='paged'",
                "flow finished Routing output='paged'",
            ],
        ),
        (
            "low",
            [
                "router chose classify label=routine",
                "method started queue trigger=classify:routine",
                "method finished queue output='queued'",
                "flow finished Routing output='queued'",
            ],
        ),
    ],
)
def test_chained_routers_and_listeners_on_labels(
    flows: FlowsSession, priority: str, expected_tail: list[str]
) -> None:
    run = flows.run(Routing, inputs={"priority": priority})
    assert run.trace.lines()[0] == f'flow started Routing inputs={{"priority": "{priority}"}}'
    assert run.trace.lines()[-len(expected_tail) :] == expected_tail
    assert run.state.handled_by == ("oncall" if priority == "high" else "queue")
    assert run.state.escalations == (1 if priority == "high" else 0)


def test_non_exclusive_or_fires_once_without_a_race(flows: FlowsSession) -> None:
    run = flows.run(NonExclusiveOr)
    assert run.trace.names("method.started").count("either") == 1
    assert not run.trace.of_kind("race.started")
    assert "method started either trigger=or(first, second) via first" in run.trace.lines()
    assert "method started audit trigger=first" in run.trace.lines()


def test_exclusive_or_races_and_the_first_chain_wins(flows: FlowsSession) -> None:
    run = flows.run(Race)
    assert run.output == "winner:fast"
    assert [
        e.render() for e in run.trace.of_kind("race.started", "race.won", "race.cancelled")
    ] == [
        "race started or(fast_path, slow_path) racers=[fast_path, slow_path]",
        "race won fast_path",
        "race cancelled slow_path",
    ]
    # the slow racer was cancelled at its virtual-time await: no finish event
    assert "slow_path" not in run.trace.names("method.finished")
    assert flows.clock.monotonic() == 1.0


def test_sync_racers_reproduce_crewais_first_chain_semantics(flows: FlowsSession) -> None:
    run = flows.run(SyncRace)
    won = run.trace.of_kind("race.won")
    assert len(won) == 1
    # the winner is the first racer whose *whole chain* finished: alpha's
    # chain still has `crown` to run when beta's (empty) chain completes
    assert won[0].name == "beta"
    assert [e.name for e in run.trace.of_kind("race.cancelled")] == ["alpha"]
    # Compared with bare crewai (20 kickoffs under each of PYTHONHASHSEED 0, 1, 2):
    # all three sync racers emitted their finished event in 55 of 60 runs, since
    # their bodies run at once on the pool; so do they here at seed 0.
    assert {"alpha", "beta", "gamma"} <= set(run.trace.names("method.finished"))
    assert [e.name for e in run.trace.of_kind("race.lost")] == ["gamma"]
    assert run.trace.names("method.started").count("crown") == 1
    assert "crown" not in run.trace.names("method.finished")


def test_router_cycle_reruns_the_conditional_start(flows: FlowsSession) -> None:
    run = flows.run(Loop)
    assert run.output == "published after 3 drafts"
    starts = [e.render() for e in run.trace.of_kind("method.started") if e.name == "draft"]
    assert starts == [
        "method started draft trigger=start",
        "method started draft trigger=review:revise",
        "method started draft trigger=review:revise",
    ]


def test_sync_and_async_methods_mix(flows: FlowsSession) -> None:
    run = flows.run(TwoStarts)  # fetch_a is sync, fetch_b async
    assert run.trace.names("method.finished") == ["fetch_b", "fetch_a", "merge"]


def test_one_parallel_branch_failing_fails_the_flow(flows: FlowsSession) -> None:
    run = flows.run(BranchFails, raise_on_error=False)
    assert run.failed
    assert isinstance(run.error, RuntimeError)
    assert str(run.error) == "upstream service said no"
    assert (
        "method failed broken error='RuntimeError: upstream service said no'" in run.trace.lines()
    )
    assert run.trace.lines()[-1] == (
        "flow failed BranchFails error='RuntimeError: upstream service said no'"
    )
    assert "never" not in run.trace.names("method.started")
    # the healthy sibling ran to completion (sync work is never torn down midway)
    assert run.state["healthy"] is True


def test_flow_errors_are_reraised_with_the_trace_attached(flows: FlowsSession) -> None:
    with pytest.raises(RuntimeError, match="upstream service said no") as info:
        flows.run(BranchFails)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "pytest-flows: the flow raised this error; trace of the run so far:" in notes
    assert "    method failed broken error='RuntimeError: upstream service said no'" in notes
    assert "raise_on_error=False" in notes


def test_plain_kickoff_is_traced_too(flows: FlowsSession) -> None:
    flow = FanOut()
    assert flow.kickoff() == ["left", "middle", "right"]
    assert flows.trace.names("flow.finished") == ["FanOut"]


def test_each_run_has_its_own_trace_and_ids_are_normalized(flows: FlowsSession) -> None:
    first = flows.run(Routing, inputs={"priority": "low"})
    second = flows.run(Routing, inputs={"priority": "low"})
    assert first.trace.render() == second.trace.render()
    assert first.state.id != second.state.id
    assert flows.trace.names("flow.started") == ["Routing", "Routing"]


def test_an_instance_can_be_run(flows: FlowsSession) -> None:
    flow = Routing()
    run = flows.run(flow, inputs={"priority": "high"})
    assert run.flow is flow
    assert run.output == "paged"


class _Nested(Flow):  # type: ignore[type-arg]
    @start()
    def inner(self) -> str:
        return "inner"


class _Outer(Flow):  # type: ignore[type-arg]
    @start()
    def first(self) -> str:
        return "one"

    @listen(first)
    def call_nested(self, _: str) -> str:
        return str(_Nested().kickoff())

    @listen(call_nested)
    def last(self, nested: str) -> str:
        return f"last after {nested}"


def test_output_of_looks_a_methods_output_up_by_name(flows: FlowsSession) -> None:
    run = flows.run(_Outer)
    assert run.output_of("first") == "one"
    assert run.output_of("call_nested") == "inner"  # the nested flow's methods are its own
    assert run.output_of("last") == "last after inner"
    with pytest.raises(
        FlowsUsageError,
        match=r"'inner' did not finish in this run \(methods "
        r"that did: first, call_nested, last\)",
    ):
        run.output_of("inner")
