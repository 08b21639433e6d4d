"""Golden replay of LangGraph graphs, in a test project: record, then change the graph.

The golden keeps the thread's checkpoints as the serializer's bytes; the check
decodes them with today's serializer (codec), compares their state keys with
today's channels (schema) and the nodes they name with today's nodes (topology),
then time-travels today's graph from each stored checkpoint (behaviour).
"""

from __future__ import annotations

import json
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path

import langchain_core.tracers.context
import pytest

import pytest_flows.langgraph._adapter
import pytest_flows.langgraph._golden

# Imported here, not first inside the in-process runs (pytester unloads what a run imported).
assert langchain_core.tracers.context.register_configure_hook
assert pytest_flows.langgraph._adapter.ADAPTER.golden() is pytest_flows.langgraph._golden.ADAPTER

# langgraph-checkpoint < 4.3.0 decodes a stored object whose class is gone to None,
# silently (4.3.0 logs "Could not reconstruct ..." and keeps its fields as a dict): the
# golden check sees no codec trouble, and the resumed runs break as behaviour.
_CHECKPOINT = tuple(int(part) for part in version("langgraph-checkpoint").split(".")[:2])
SILENT_LOST_CLASS = _CHECKPOINT < (4, 3)

GRAPH = """
import dataclasses
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


@dataclasses.dataclass
class {draft_class}:
    text: str


class State(TypedDict, total=False):
    topic: str
    draft: {draft_class}
    notes: Annotated[list[str], operator.add]
    {extra_key}


def write(state):
    return {{"draft": {draft_class}(state["topic"].title()), "notes": ["write"]{legacy}}}


def review(state):
    answer = interrupt("publish " + state["draft"].text + "?")
    return {{"notes": ["review=" + answer]}}


def publish(state):
    return {{"notes": ["publish{suffix}"]}}


builder = StateGraph(State)
builder.add_node("write", write)
builder.add_node("{review_name}", review)
builder.add_node("publish", publish)
builder.add_edge(START, "write")
builder.add_edge("write", "{review_name}")
builder.add_edge("{review_name}", "publish")
builder.add_edge("publish", END)
graph = builder.compile(name="drafts")
"""

TEST = """
import pytest
from drafts import graph


@pytest.mark.golden
def test_drafts(flows, human):
    human.answer("yes")
    run = flows.run(graph, {"topic": "golden files"})
    assert run.status == "finished"
"""


def write_graph(
    pytester: pytest.Pytester,
    *,
    draft_class: str = "Draft",
    extra_key: str = "",
    suffix: str = "",
    review_name: str = "review",
) -> None:
    source = GRAPH.format(
        draft_class=draft_class,
        extra_key=extra_key,
        legacy=', "legacy": "kept"' if extra_key else "",
        suffix=suffix,
        review_name=review_name,
    )
    pytester.makepyfile(drafts=textwrap.dedent(source))


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # The graph module is rewritten between runs, often within the same second and at
    # the same size: a cached .pyc of the old source would be loaded instead.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.syspathinsert()
    write_graph(pytester, extra_key="legacy: str")
    pytester.makepyfile(test_drafts=TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    return pytester


def golden_file(pytester: pytest.Pytester) -> Path:
    return pytester.path / "__goldens__" / "test_drafts" / "test_drafts.json"


def run_check(pytester: pytest.Pytester) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:randomly")


def test_the_recording_holds_checkpoint_bytes_the_graph_and_resumes(
    project: pytest.Pytester,
) -> None:
    document = json.loads(golden_file(project).read_text(encoding="utf-8"))
    (first,) = document["runs"]  # interrupted, answered and resumed by flows.run
    assert first["framework"] == "langgraph"
    assert "edge write -> review" in first["graph"]
    stored = first["checkpoints"][0]
    assert stored["checkpoint"][0] == "msgpack" and stored["ns"] == ""
    assert {"id", "parent", "metadata", "writes", "raw"} <= set(stored)
    assert any("Golden Files" in json.dumps(c["raw"]) for c in first["checkpoints"])
    resumed = [r["from"] for r in first["resumes"]]
    assert resumed == [f"checkpoint {n}" for n in range(1, len(resumed) + 1)]
    assert any("task started publish" in line for r in first["resumes"] for line in r["trace"])
    assert document["human_answers"] == [{"outcome": None, "text": "yes"}]


def test_an_unchanged_graph_passes(project: pytest.Pytester) -> None:
    run_check(project).assert_outcomes(passed=1)


def test_a_changed_node_is_behaviour(project: pytest.Pytester) -> None:
    write_graph(project, extra_key="legacy: str", suffix="!")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (behaviour)*",
            "*[[]behaviour[]] run 1 (graph drafts), resumed from checkpoint *: the resumed run's*",
            "*publish!*",
        ]
    )
    assert "[topology]" not in result.stdout.str()


def test_a_renamed_node_a_stored_thread_waits_on_is_topology(project: pytest.Pytester) -> None:
    write_graph(project, extra_key="legacy: str", review_name="approve")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (topology*",
            "*[[]topology[]] run 1 (graph drafts): its stored checkpoints name node(s) today's "
            "graph lacks: review*",
            "*- edge review -> publish",
            "*+ edge approve -> publish",
        ]
    )


def test_a_removed_state_key_is_schema(project: pytest.Pytester) -> None:
    write_graph(project)  # no `legacy` key: the stored checkpoints hold a value for it
    result = run_check(project)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*[[]schema[]] run 1 (graph drafts), checkpoint *: it holds state key(s) today's "
            "graph has no channel for: legacy*"
        ]
    )


def test_a_stored_class_that_is_gone_is_codec(project: pytest.Pytester) -> None:
    write_graph(project, extra_key="legacy: str", draft_class="Manuscript")
    result = run_check(project)
    result.assert_outcomes(failed=1)
    if SILENT_LOST_CLASS:
        result.stdout.fnmatch_lines(
            [
                "*break(s) (behaviour)*",
                "*[[]behaviour[]] run 1 (graph drafts), resumed from checkpoint *",
                '*-graph finished drafts values={"draft": {"text": "Golden Files"}*',
                '*+graph finished drafts values={"draft": null*',
            ]
        )
        return
    result.stdout.fnmatch_lines(
        [
            "*break(s) (codec)*",
            "*[[]codec[]] run 1 (graph drafts), checkpoint *: today's codec cannot rebuild*",
            "*drafts.Draft*",
            "*keep the old types importable and allowed*",
        ]
    )


def test_goldens_are_the_same_bytes_when_recorded_again(project: pytest.Pytester) -> None:
    first = golden_file(project).read_bytes()
    project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update").assert_outcomes(
        passed=1
    )
    assert golden_file(project).read_bytes() == first


def test_goldens_are_the_same_bytes_in_another_process_and_hash_seed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = golden_file(project).read_bytes()
    monkeypatch.setenv("PYTHONHASHSEED", "4242")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project.runpytest_subprocess(
        "-p", "pytest_flows.plugin", "-p", "asyncio", "--flows-golden-update"
    ).assert_outcomes(passed=1)
    assert golden_file(project).read_bytes() == first


SECRET_TEST = """
import os

import pytest
from drafts import graph

KEY = os.environ["DRAFTS_API_KEY"]  # read at import (a flows test's environment hides it)


@pytest.mark.golden
def test_drafts(flows, human):
    human.answer(KEY)  # a credential that ends up in the state
    flows.run(graph, {"topic": "golden files"})
"""


def test_a_secret_in_the_stored_state_is_never_written(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAFTS_API_KEY", "sk-drafts-0123456789abcdef")
    before = golden_file(project).read_bytes()
    project.makepyfile(test_drafts=SECRET_TEST)

    result = project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*refusing to write a golden file*$DRAFTS_API_KEY*"])
    assert golden_file(project).read_bytes() == before
