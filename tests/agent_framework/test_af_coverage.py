"""--flows-cov on an Agent Framework workflow: executors, switch-case arms, conditional edges."""

from __future__ import annotations

import json

import agent_framework
import pytest

# Imported here, not first inside the in-process runs (pytester unloads what a run imported).
assert agent_framework.WorkflowBuilder

WORKFLOWS = """
from dataclasses import dataclass
from typing import Never

from agent_framework import Case, Default, WorkflowBuilder, WorkflowContext, executor


@dataclass
class Ticket:
    text: str
    urgent: bool


@executor(id="intake")
async def intake(text: str, ctx: WorkflowContext[Ticket]) -> None:
    await ctx.send_message(Ticket(text, "!" in text))


@executor(id="escalate")
async def escalate(ticket: Ticket, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output("escalated: " + ticket.text)


@executor(id="answer")
async def answer(ticket: Ticket, ctx: WorkflowContext[Ticket, str]) -> None:
    await ctx.send_message(ticket)
    await ctx.yield_output("answered: " + ticket.text)


@executor(id="survey")
async def survey(ticket: Ticket, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output("survey sent")


def is_urgent(ticket: Ticket) -> bool:
    return ticket.urgent


def wants_survey(ticket: Ticket) -> bool:
    return "thanks" in ticket.text


def build_helpdesk():
    return (
        WorkflowBuilder(start_executor=intake, name="helpdesk")
        .add_switch_case_edge_group(
            intake, [Case(condition=is_urgent, target=escalate), Default(target=answer)]
        )
        .add_edge(answer, survey, condition=wants_survey)
        .build()
    )
"""

ONE_TEST = """
from af_cov_workflows import build_helpdesk


def test_plain_question(flows):
    run = flows.run(build_helpdesk(), "how do I reset my password")
    assert run.outputs == ["answered: how do I reset my password"]
"""

MORE_TESTS = (
    ONE_TEST
    + """

def test_urgent(flows):
    assert flows.run(build_helpdesk(), "down!").outputs == ["escalated: down!"]


def test_thanks(flows):
    run = flows.run(build_helpdesk(), "thanks")
    assert run.outputs == ["answered: thanks", "survey sent"]
"""
)


def _project(pytester: pytest.Pytester, tests: str) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(af_cov_workflows=WORKFLOWS, test_af_cov_user=tests)


def test_untaken_arm_and_conditional_edge_are_missed(pytester: pytest.Pytester) -> None:
    _project(pytester, ONE_TEST)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- flows coverage: 3/7 items, 43% -*",
            "workflow:helpdesk      7      4    43%",
            "Missed:",
            "  workflow:helpdesk",
            "    executors: escalate, survey",
            "    edges: intake->escalate [is_urgent], answer->survey [wants_survey]",
        ]
    )
    flow = json.loads((pytester.path / "cov.json").read_text())["flows"][0]
    assert (flow["key"], flow["framework"], flow["covered"], flow["total"]) == (
        "workflow:helpdesk",
        "agent_framework",
        3,
        7,
    )
    covered = {item["text"] for item in flow["items"] if item["covered"]}
    assert covered == {"intake", "answer", "intake->answer [default]"}


def test_every_arm_and_edge_covered(pytester: pytest.Pytester) -> None:
    _project(pytester, MORE_TESTS)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")

    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*- flows coverage: 7/7 items, 100% -*"])
    assert "Missed:" not in result.stdout.str()
    flow = json.loads((pytester.path / "cov.json").read_text())["flows"][0]
    tests = {item["text"]: item["tests"] for item in flow["items"]}
    assert tests["answer->survey [wants_survey]"] == ["test_af_cov_user.py::test_thanks"]
    assert tests["intake->escalate [is_urgent]"] == ["test_af_cov_user.py::test_urgent"]
