"""Golden replay of Agent Framework workflows, in a test project: record, then change it."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

WORKFLOW = """
from dataclasses import dataclass
from typing import Never

from agent_framework import (
    Executor, FileCheckpointStorage, WorkflowBuilder, WorkflowContext, handler,
)


@dataclass
class Draft:
    text: str


ALLOWED = {allowed}


class Writer(Executor):
    @handler
    async def write(self, topic: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("draft", {state_value})
        await ctx.send_message(topic)


class Editor(Executor):
    @handler
    async def edit(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text.upper() + {suffix!r})


class Logger(Executor):
    @handler
    async def log(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        ctx.set_state("logged", text)


def build(path):
    storage = FileCheckpointStorage(path, allowed_checkpoint_types=ALLOWED)
    writer, editor = Writer(id="writer"), Editor(id="editor")
    builder = WorkflowBuilder(start_executor=writer, name="drafts", checkpoint_storage=storage)
    builder = builder.add_edge(writer, editor)
    {extra_edge}
    return builder.build()
"""

TEST = """
import pytest
from drafts import build


@pytest.mark.golden
def test_drafts(flows, flow_store, tmp_path):
    run = flows.run(build(tmp_path), "hello")
    assert not run.failed
"""


def write_workflow(
    pytester: pytest.Pytester,
    *,
    allowed: str = "['drafts:Draft']",
    state_value: str = "Draft(topic)",
    suffix: str = "!",
    extra_edge: str = "",
) -> None:
    source = WORKFLOW.format(
        allowed=allowed, state_value=state_value, suffix=suffix, extra_edge=extra_edge
    )
    pytester.makepyfile(drafts=textwrap.dedent(source))


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # The flow module is rewritten between runs, often within the same second and at
    # the same size: a cached .pyc of the old source would be loaded instead.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    write_workflow(pytester)
    pytester.makepyfile(test_drafts=TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    return pytester


def golden_file(pytester: pytest.Pytester) -> Path:
    return pytester.path / "__goldens__" / "test_drafts" / "test_drafts.json"


def run_check(pytester: pytest.Pytester) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:randomly")


def test_the_recording_holds_checkpoints_graph_and_restores(project: pytest.Pytester) -> None:
    (run,) = json.loads(golden_file(project).read_text(encoding="utf-8"))["runs"]
    assert run["framework"] == "agent_framework"
    assert "edge writer -> editor (SingleEdgeGroup)" in run["graph"]
    assert len(run["checkpoints"]) >= 2
    assert any("drafts:Draft" in c["raw"] or "Draft" in c["raw"] for c in run["checkpoints"])
    assert [r["from"] for r in run["resumes"]] == [
        f"checkpoint {n}" for n in range(1, len(run["checkpoints"]) + 1)
    ]
    assert run["output"] == "'HELLO!'"


def test_an_unchanged_workflow_passes(project: pytest.Pytester) -> None:
    run_check(project).assert_outcomes(passed=1)


def test_a_changed_output_is_behaviour(project: pytest.Pytester) -> None:
    write_workflow(project, suffix="?!")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*break(s) (behaviour)*", "*[[]behaviour[]] run 1 (workflow drafts)*", "*HELLO?!*"]
    )
    assert "[topology]" not in result.stdout.str()


def test_an_added_executor_and_edge_is_topology(project: pytest.Pytester) -> None:
    write_workflow(project, extra_edge="builder = builder.add_edge(writer, Logger(id='logger'))")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (topology)*",
            "*[[]topology[]] run 1 (workflow drafts): the workflow's graph changed*",
            "*+ edge writer -> logger (SingleEdgeGroup)",
            "*+ executor logger: drafts.Logger",
        ]
    )


def test_a_type_removed_from_the_allow_list_is_codec(project: pytest.Pytester) -> None:
    # today's code keeps a dict in state, and no longer allows Draft: old checkpoints hold one
    write_workflow(project, allowed="[]", state_value="{'text': topic}")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (codec)*",
            "*[[]codec[]] run 1 (workflow drafts), checkpoint * today's codec cannot decode it",
            "*drafts:Draft*",
            "*keep the old types importable and allowed*",
        ]
    )


def test_goldens_are_the_same_bytes_across_runs_and_hash_seeds(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = golden_file(project).read_bytes()
    # the checkpoint directory is the test's tmp_path: no path of it is recorded
    assert str(project.path.parent) not in first.decode("utf-8")
    project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update").assert_outcomes(
        passed=1
    )
    assert golden_file(project).read_bytes() == first
    # another process and hash seed (the plugin alone: the other plugins' imports cost
    # seconds a run)
    monkeypatch.setenv("PYTHONHASHSEED", "4242")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project.runpytest_subprocess(
        "-p", "pytest_flows.plugin", "--flows-golden-update"
    ).assert_outcomes(passed=1)
    assert golden_file(project).read_bytes() == first


# Three interpreters: long mode; CI checks another process and hash seed in
# test_goldens_are_the_same_bytes_across_runs_and_hash_seeds.
@pytest.mark.long
def test_xdist_workers_record_the_same_bytes(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = golden_file(project).read_bytes()
    monkeypatch.setenv("PYTHONHASHSEED", "4242")
    project.runpytest_subprocess(
        "-p", "no:randomly", "-p", "xdist", "-n", "2", "--flows-golden-update"
    ).assert_outcomes(passed=1)
    assert golden_file(project).read_bytes() == first


TITLES = """
from typing import Never

from agent_framework import (
    Agent, Executor, FileCheckpointStorage, WorkflowBuilder, WorkflowContext, handler,
)

from pytest_flows.agent_framework import FlowsChatClient


class Topic(Executor):
    @handler
    async def take(self, topic: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("topic", topic)
        await ctx.send_message(topic)


class Titler(Executor):
    # runs in the superstep after the first checkpoint: a restore from it asks the model
    def __init__(self, agent, id):
        super().__init__(id=id)
        self.agent = agent

    @handler
    async def title(self, topic: str, ctx: WorkflowContext[Never, str]) -> None:
        response = await self.agent.run(f"A title about {{topic}}")
        await ctx.yield_output({use_reply})


def build(path):
    agent = Agent(client=FlowsChatClient(), name="titler", instructions="Write titles.")
    topic, titler = Topic(id="topic"), Titler(agent, id="titler")
    return (
        WorkflowBuilder(
            start_executor=topic, name="titles", checkpoint_storage=FileCheckpointStorage(path)
        )
        .add_edge(topic, titler)
        .build()
    )
"""

TITLES_TEST = """
import pytest
from titles import build


@pytest.mark.golden
def test_titles(flows, fake_llm, flow_store, tmp_path):
    fake_llm.on(agent="titler").reply("Golden files, explained")
    run = flows.run(build(tmp_path), "golden files")
    assert not run.failed
"""


def write_titles(pytester: pytest.Pytester, use_reply: str = "response.text.upper()") -> None:
    pytester.makepyfile(titles=textwrap.dedent(TITLES.format(use_reply=use_reply)))


@pytest.fixture
def titles_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    write_titles(pytester)
    pytester.makepyfile(test_titles=TITLES_TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    return pytester


def test_restores_that_ask_the_model_get_the_recorded_replies(
    titles_project: pytest.Pytester,
) -> None:
    golden = titles_project.path / "__goldens__" / "test_titles" / "test_titles.json"
    document = json.loads(golden.read_text(encoding="utf-8"))
    assert document["replies"] == ["Golden files, explained"]
    (run,) = document["runs"]
    assert run["output"] == "'GOLDEN FILES, EXPLAINED'"
    # restored from the checkpoint before the titler ran, the titler asks the model again:
    # it gets the recorded reply, not the test's spent fake_llm
    first = run["resumes"][0]
    assert first["from"] == "checkpoint 1"
    assert first["output"] == "'GOLDEN FILES, EXPLAINED'"
    assert not any(r["output"].startswith("error:") for r in run["resumes"])

    run_check(titles_project).assert_outcomes(passed=1)

    write_titles(titles_project, use_reply="response.text.lower()")
    result = run_check(titles_project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (behaviour)*",
            "*[[]behaviour[]] run 1 (workflow titles), resumed from checkpoint 1*",
            "*golden files, explained*",
        ]
    )
