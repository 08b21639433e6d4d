"""Agent Framework workflows with agents record and replay goldens; the secret rule
judges values, and still refuses an environment secret in every encoding (issue 44).

The secret check used to refuse any secret-named field with a value, so every
workflow with an agent was refused: a checkpoint pickles the agent's messages, whose
``continuation_token`` (Agent Framework's id of a long-running response) is ``None``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

# Imported here, so pytester's in-process runs share them (it drops the modules a run
# imports: a second run would otherwise see another ToolCall class than the script).
import pytest_flows.agent_framework  # noqa: F401
from pytest_flows import call_tool  # noqa: F401

AGENTS_TEST = """
import af_workflows as wf
import pytest
from agent_framework import Content
from af_bookings import build_workflow as build_bookings

from pytest_flows import call_tool
from pytest_flows.agent_framework import FlowsChatClient, requests


@pytest.mark.golden
def test_weather(flows, flow_store, fake_llm):
    fake_llm.on(agent="weather").reply(call_tool("get_weather", city="Oslo"), "Sunny in Oslo.")
    run = flows.run(wf.build_weather(FlowsChatClient()), "Oslo?")
    assert run.outputs == ["[weather] Sunny in Oslo."]


@pytest.mark.golden
def test_judge(flows, flow_store, fake_llm):
    flow_store.backend("agent_framework").allow(wf.Verdict)
    fake_llm.on(agent="judge").reply({"approved": True, "reason": "well argued"})
    run = flows.run(wf.build_judge(FlowsChatClient()), "Judge this essay.")
    assert run.outputs == ["approve: well argued"]


@pytest.mark.golden
def test_approvals(flows, flow_store, fake_llm, human):
    fake_llm.on(agent="flights").reply(call_tool("book_flight", city="Oslo"), "Flight booked.")
    fake_llm.on(agent="hotels").reply(call_tool("book_hotel", city="Oslo"), "Hotel booked.")
    approve = lambda r: r.to_function_approval_response(approved=True)  # noqa: E731
    requests(human).on(request=Content).respond(approve, times=2)
    run = flows.run(build_bookings(FlowsChatClient()), "Oslo")
    assert run.outputs == ["flights: Flight booked. | hotels: Hotel booked."]
"""

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    for module in ("af_workflows",):
        source = Path(__file__).parent / f"{module}.py"
        pytester.makepyfile(**{module: source.read_text(encoding="utf-8")})
    bookings = EXAMPLES / "af_tool_approval" / "af_bookings.py"
    pytester.makepyfile(af_bookings=bookings.read_text(encoding="utf-8"))
    return pytester


def test_agent_workflows_record_and_replay_goldens(project: pytest.Pytester) -> None:
    project.makepyfile(test_agents=textwrap.dedent(AGENTS_TEST))

    recorded = project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    recorded.assert_outcomes(passed=3)
    goldens = project.path / "__goldens__" / "test_agents"
    texts = [p.read_text(encoding="utf-8") for p in sorted(goldens.glob("*.json"))]
    assert len(texts) == 3
    # the agents' messages are in the checkpoints, continuation_token and all
    assert all("AgentExecutor" in t or "agent" in t for t in texts)
    assert any(json.loads(t)["runs"][0]["checkpoints"] for t in texts)

    project.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=3)


# -- the rule judges values; an environment secret is refused in every encoding -------------

SECRET = "sk-golden-" + "0123456789abcdef/+x"

STATE_TEST = """
import base64, os
from dataclasses import dataclass
from typing import Never
from urllib.parse import quote

import pytest
from agent_framework import (
    Executor, WorkflowBuilder, WorkflowContext, handler,
)


@dataclass
class Session:
    user: str = "ann"
    api_key: object = None
    continuation_token: object = None


class Keep(Executor):
    @handler
    async def keep(self, value: str, ctx: WorkflowContext[Never, str]) -> None:
        ctx.set_state("held", {held})
        await ctx.yield_output("kept")


@pytest.mark.golden
def test_keep(flows, flow_store):
    flow_store.backend("agent_framework").allow(Session)
    keep = Keep(id="keep")
    workflow = WorkflowBuilder(start_executor=keep, name="keep").build()
    run = flows.run(workflow, {value!r})
    assert not run.failed
"""


def keep(project: pytest.Pytester, held: str, value: str = "x") -> pytest.RunResult:
    project.makepyfile(test_keep=STATE_TEST.format(held=held, value=value))
    return project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")


def golden(project: pytest.Pytester) -> Path:
    return project.path / "__goldens__" / "test_keep" / "test_keep.json"


@pytest.mark.parametrize(
    "held",
    [
        "Session(api_key=None, continuation_token=None)",
        "Session(api_key='', continuation_token=b'')",
        "{'api_key': None, 'password': '', 'token': 0, 'secret': False}",
        "Session(continuation_token='resp-token-123')",  # framework-owned, not a credential
    ],
)
def test_secret_named_fields_without_a_credential_are_recorded(
    project: pytest.Pytester, held: str
) -> None:
    keep(project, held).assert_outcomes(passed=1)
    assert golden(project).exists()


@pytest.mark.parametrize(
    ("held", "field"),
    [
        ("Session(api_key='sk-not-in-the-env-1234')", "<pickled *Session>.api_key"),
        ("Session(api_key=b'sk-not-in-the-env-1234')", "<pickled *Session>.api_key"),
        ("{'api_key': 'sk-not-in-the-env-1234'}", "state.*held.api_key"),
        ("{'password': ['hunter2-but-longer']}", "state.*held.password"),
    ],
)
def test_a_secret_named_field_holding_text_is_refused_naming_it(
    project: pytest.Pytester, held: str, field: str
) -> None:
    result = keep(project, held)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"*refusing to write a golden file*secret-named fields (*{field}*"]
    )
    assert not golden(project).exists()


@pytest.mark.parametrize(
    "held",
    [
        "value",  # raw
        "value.encode()",  # bytes
        "quote(value, safe='')",  # percent-encoded
        "quote(value).replace('%2F', '/')",  # URL path spelling
        "base64.b64encode(value.encode()).decode()",  # base64
        "{'note': repr(value)}",  # repr inside JSON
        "Session(user=value)",  # pickled, under an innocent name
        "Session(api_key=value)",  # pickled, under a secret name
        "Session(continuation_token=value)",  # pickled, under a framework-owned name
        "{'continuation_token': value}",  # JSON, under a framework-owned name
    ],
)
def test_an_environment_secret_is_refused_in_every_encoding(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, held: str
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)  # the plugin hides it from the test

    result = keep(project, held, value=SECRET)

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*refusing to write a golden file*$MY_SERVICE_TOKEN*"])
    assert not golden(project).exists()
