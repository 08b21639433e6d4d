"""The tests a user writes for LangGraph's workflow patterns."""

from __future__ import annotations

import pytest
from lg_workflows import due_diligence, joke_loop, report_writer, support_router

from pytest_flows import FlowsSession


@pytest.mark.parametrize(
    ("text", "team"),
    [("I want a refund", "billing"), ("Error 500 on login", "tech"), ("Hello", "general")],
)
def test_the_router_sends_each_ticket_to_one_team(flows, text, team):
    run = flows.run(support_router(), {"text": text})

    assert run.values["team"] == team
    assert f"router classify path=pick_team chose={team}" in run.trace.lines()
    assert run.trace.names("task.started") == ["classify", team]


def test_parallel_branches_join_once(flows):
    run = flows.run(due_diligence(), {"company": "Acme", "findings": []})

    assert run.values["verdict"] == "invest (3 checks passed)"
    # the branches' writes are applied in task order, never in completion order
    assert run.values["findings"] == [
        "finance: debt ratio 0.4",
        "legal: no open lawsuits",
        "market: Acme grows 12%",
    ]
    assert "superstep started 1 tasks=[finance, legal, market]" in run.trace.lines()
    assert run.trace.names("task.started").count("decide") == 1


def test_orchestrator_sends_one_worker_per_section_each_with_its_subgraph(flows):
    run = flows.run(report_writer(), {"topic": "AI"})

    assert (
        run.values["report"] == "AI intro: the facts.\nAI body: the facts.\nAI outlook: the facts."
    )
    lines = run.trace.lines()
    assert (
        "superstep started 2 tasks=[section_editor[0], section_editor[1], section_editor[2]]"
        in lines
    )
    assert 'send section_editor arg={"section": "AI body"}' in lines
    # each worker's subgraph, indented under it
    start = lines.index('task started section_editor[1] arg={"section": "AI body"}')
    assert lines[start + 1 : start + 7] == [
        "  superstep started 1 tasks=[write]",
        "  task started write triggers=[branch:to:write]",
        '  task finished write writes={"text": "AI body: the facts  "}',
        "  superstep started 2 tasks=[proofread]",
        "  task started proofread triggers=[branch:to:proofread]",
        '  task finished proofread writes={"drafts": ["AI body: the facts."]}',
    ]


def test_the_evaluator_loops_until_the_joke_is_accepted(flows):
    run = flows.run(joke_loop(), {"topic": "programmer"})

    assert run.values["joke"] == "The programmer quit because it had too many bugs."
    assert run.values["attempts"] == 2
    chose = [line for line in run.trace.lines() if line.startswith("router evaluate")]
    assert chose == [
        "router evaluate path=accepted chose=retry",
        "router evaluate path=accepted chose=accepted",
    ]


def test_the_fan_out_trace_is_the_same_under_every_seed():
    traces = set()
    for seed in range(4):
        with FlowsSession(seed=seed, test_id="report") as flows:
            traces.add(flows.run(report_writer(), {"topic": "AI"}).trace.render())
    assert len(traces) == 1
