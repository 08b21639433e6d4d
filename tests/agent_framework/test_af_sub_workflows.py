"""Sub-workflows: a WorkflowExecutor's inner supersteps in the trace and in coverage."""

from __future__ import annotations

import json

import agent_framework
import pytest

# Imported here, not first inside the in-process runs (pytester unloads what a run imported).
assert agent_framework.WorkflowExecutor

WORKFLOWS = """
from typing import Never

from agent_framework import WorkflowBuilder, WorkflowContext, WorkflowExecutor, executor


@executor(id="shout")
async def shout(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.upper())


@executor(id="mark")
async def mark(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(text + "!")


@executor(id="never")
async def never(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output("unreachable")


def is_empty(text: str) -> bool:
    return not text


def build_inner():
    return (
        WorkflowBuilder(start_executor=shout, name="loud")
        .add_edge(shout, mark)
        .add_edge(shout, never, condition=is_empty)
        .build()
    )


@executor(id="intake")
async def intake(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.strip())


@executor(id="reply")
async def reply(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output("reply: " + text)


def build_outer():
    inner = WorkflowExecutor(build_inner(), id="loudly")
    return (
        WorkflowBuilder(start_executor=intake, name="desk")
        .add_edge(intake, inner)
        .add_edge(inner, reply)
        .build()
    )
"""

TEST = """
from af_sub_workflows import build_outer


def test_desk(flows):
    run = flows.run(build_outer(), " hi ")
    assert run.outputs == ["reply: HI!"]
    print(run.trace.render())
"""


def test_the_inner_supersteps_are_traced_under_the_executor(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(af_sub_workflows=WORKFLOWS, test_af_sub_user=TEST)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "-s", "--flows-cov-json=cov.json")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "superstep started 2",
            "executor invoked loudly edge=intake->loudly input='hi'",
            "  workflow started loud input='hi'",
            "  superstep started 1",
            "  executor invoked shout edge=input->shout input='hi'",
            "  message sent shout target=* data='HI'",
            "  superstep started 2",
            "  executor invoked mark edge=shout->mark input='HI'",
            "  workflow output mark data='HI!'",
            "  workflow finished loud status=IDLE",
            "message sent loudly target=* data='HI!'",
            "superstep started 3",
            "executor invoked reply edge=loudly->reply input='HI!'",
        ]
    )
    flows = {f["key"]: f for f in json.loads((pytester.path / "cov.json").read_text())["flows"]}
    assert sorted(flows) == ["workflow:desk", "workflow:loud"]
    inner = {item["text"]: item["covered"] for item in flows["workflow:loud"]["items"]}
    assert inner == {
        "shout": True,
        "mark": True,
        "never": False,
        "shout->mark": True,
        "shout->never [is_empty]": False,
    }
    assert flows["workflow:desk"]["covered"] == flows["workflow:desk"]["total"]
