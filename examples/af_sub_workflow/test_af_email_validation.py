"""A parent workflow that intercepts its sub-workflow's requests."""

from __future__ import annotations

from af_email_validation import DomainCheck, build_workflow

from pytest_flows.agent_framework import explore_seeds, requests


def test_a_cached_domain_is_answered_by_the_parent(flows):
    run = flows.run(build_workflow(), ["ann@example.com"])

    assert run.outputs == ["ann@example.com: valid"]


def test_an_unknown_domain_is_asked_of_a_person(flows, human):
    requests(human).on(request=DomainCheck, data={"domain": "other.org"}).respond(False)

    run = flows.run(build_workflow(), ["bo@other.org"])

    assert run.outputs == ["bo@other.org: invalid"]
    assert human.requests[0].caller["method"] == "coordinator"  # the parent asked


def test_the_sub_workflow_runs_inside_its_executor_in_the_trace(flows):
    run = flows.run(build_workflow(), ["ann@example.com"])

    lines = run.trace.lines()
    assert "  workflow started email_validation input='ann@example.com'" in lines
    assert any(
        line.startswith("  executor invoked domain_check edge=format_check->") for line in lines
    )


def test_the_trace_of_an_intercepted_request(flows, human, snapshot):
    requests(human).on(request=DomainCheck).respond(True)

    run = flows.run(build_workflow(), ["ann@example.com", "bo@other.org"])

    assert sorted(run.outputs) == ["ann@example.com: valid", "bo@other.org: valid"]
    assert run.trace.render() == snapshot  # the same text under every --flows-seed


def test_no_seed_changes_what_happens(flows, human):
    requests(human).on(request=DomainCheck).respond(True, times="always")

    explore_seeds(
        flows, build_workflow, ["ann@example.com", "bo@other.org"], seeds=range(8)
    ).assert_deterministic()
