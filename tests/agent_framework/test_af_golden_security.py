"""Reading an Agent Framework golden or a tampered checkpoint never runs code (issue 26),
and golden recording uses the storage rules the run used (issue 27 C, D)."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import af_workflows as wf
import pytest
from agent_framework import InMemoryCheckpointStorage, WorkflowCheckpointException

from pytest_flows.agent_framework import checkpoint_storage


@dataclass
class Holder:
    value: str


WORKFLOW = """
from dataclasses import dataclass
from typing import Never

from agent_framework import (
    Executor, FileCheckpointStorage, InMemoryCheckpointStorage, WorkflowBuilder,
    WorkflowContext, handler,
)


@dataclass
class Draft:
    text: str


class Writer(Executor):
    @handler
    async def write(self, topic: str, ctx: WorkflowContext[str]) -> None:
        ctx.set_state("draft", Draft(topic))
        await ctx.send_message(topic)


class Editor(Executor):
    @handler
    async def edit(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text.upper())


def build(storage=None):
    writer, editor = Writer(id="writer"), Editor(id="editor")
    return (
        WorkflowBuilder(start_executor=writer, name="drafts", checkpoint_storage=storage)
        .add_edge(writer, editor)
        .build()
    )
"""


def evil_pickle(marker: Path) -> str:
    """A protocol-0 pickle whose load calls ``open(marker, 'w')``: code, run on reading."""
    payload = f"cbuiltins\nopen\n(V{marker}\nVw\ntR.".encode()
    return base64.b64encode(payload).decode("ascii")


def poison(raw: str, marker: Path) -> str:
    """``raw`` (an encoded checkpoint) with every pickled value replaced by the evil one."""

    def walk(value: object) -> object:
        if isinstance(value, dict):
            if "__pickled__" in value:
                return {**value, "__pickled__": evil_pickle(marker)}
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return json.dumps(walk(json.loads(raw)), ensure_ascii=False)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    pytester.makepyfile(drafts=textwrap.dedent(WORKFLOW))
    return pytester


def record(pytester: pytest.Pytester, test: str) -> Path:
    pytester.makepyfile(test_drafts=textwrap.dedent(test))
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=1)
    return pytester.path / "__goldens__" / "test_drafts" / "test_drafts.json"


IN_MEMORY_TEST = """
import pytest
from agent_framework import InMemoryCheckpointStorage
from drafts import build


@pytest.mark.golden
def test_drafts(flows, flow_store):
    run = flows.run(build(InMemoryCheckpointStorage()), "hello")
    assert not run.failed
"""


def test_an_in_memory_golden_with_its_own_dataclass_still_replays(
    project: pytest.Pytester,
) -> None:
    golden = record(project, IN_MEMORY_TEST)
    assert "__pickled__" in golden.read_text(encoding="utf-8")
    project.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


def test_a_malicious_pickle_in_a_golden_is_a_codec_break_and_never_runs(
    project: pytest.Pytester,
) -> None:
    golden = record(project, IN_MEMORY_TEST)
    marker = project.path / "pwned"
    document = json.loads(golden.read_text(encoding="utf-8"))
    for run in document["runs"]:
        for checkpoint in run["checkpoints"]:
            checkpoint["raw"] = poison(checkpoint["raw"], marker)
    golden.write_text(json.dumps(document, indent=2), encoding="utf-8")

    result = project.runpytest_inprocess("-p", "no:randomly")  # a plain run: no flags

    assert not marker.exists()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (codec)*",
            "*[[]codec[]] run 1 (workflow drafts), checkpoint 1: today's codec cannot decode it",
            "*blocked for*builtins:open*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_checkpoint_tampered_in_flow_store_is_decoded_restricted(
    flows, flow_store, tmp_path: Path
) -> None:
    first = flows.run(wf.build_counter(InMemoryCheckpointStorage(), limit=3), 1)
    marker = tmp_path / "pwned"
    evil = json.dumps({"__pickled__": evil_pickle(marker), "__type__": "builtins:int"})
    flow_store.tamper(first.checkpoints[2], lambda raw: raw.replace('"last": 1', f'"last": {evil}'))

    with pytest.raises(WorkflowCheckpointException, match="blocked for type 'builtins:open'"):
        asyncio.run(checkpoint_storage(flow_store).load(first.checkpoints[2]))
    assert not marker.exists()


# -- issue 27 C and D: the storage rules the run actually used ------------------------------

ALLOWED_ON_FLOW_STORE_TEST = """
import pytest
from agent_framework import FileCheckpointStorage
from drafts import Draft, build
from pytest_flows.agent_framework import checkpoint_storage


@pytest.mark.golden
def test_drafts(flows, flow_store, tmp_path):
    checkpoint_storage(flow_store).allow(Draft)
    run = flows.run(build(FileCheckpointStorage(tmp_path)), "hello")
    assert not run.failed
"""


def test_golden_update_uses_the_allow_list_given_to_flow_store(project: pytest.Pytester) -> None:
    golden = record(project, ALLOWED_ON_FLOW_STORE_TEST)
    (run,) = json.loads(golden.read_text(encoding="utf-8"))["runs"]
    assert run["checkpoints"]
    assert not any(r["output"].startswith("error:") for r in run["resumes"])
    project.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


STORAGE_PASSED_TO_RUN_TEST = """
import pytest
from agent_framework import FileCheckpointStorage
from drafts import build


@pytest.mark.golden
def test_drafts(flows, flow_store, tmp_path):
    storage = FileCheckpointStorage(tmp_path, allowed_checkpoint_types=["drafts:Draft"])
    run = flows.run(build(), "hello", checkpoint_storage=storage)
    assert not run.failed
"""


def test_a_storage_passed_to_flows_run_is_recorded(project: pytest.Pytester) -> None:
    golden = record(project, STORAGE_PASSED_TO_RUN_TEST)
    (run,) = json.loads(golden.read_text(encoding="utf-8"))["runs"]
    assert run["checkpoints"]
    project.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


# -- nothing secret is written, in any encoding the plugin produces ------------------------

SECRET = "sk-golden-" + "fedcba9876543210"

SECRET_IN_STATE_TEST = f"""
import pytest
from agent_framework import InMemoryCheckpointStorage
from drafts import build


@pytest.mark.golden
def test_drafts(flows, flow_store):
    # the plugin hides $MY_SERVICE_TOKEN from the test; its value reaches state anyway
    run = flows.run(build(InMemoryCheckpointStorage()), {SECRET!r})
    assert not run.failed
"""


def test_an_env_secret_pickled_in_state_is_refused(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    project.makepyfile(test_drafts=textwrap.dedent(SECRET_IN_STATE_TEST))

    result = project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*refusing to write a golden file*$MY_SERVICE_TOKEN*"])
    assert not (project.path / "__goldens__").exists()


def test_the_value_check_sees_base64_pickles_json_escapes_and_percent_encoding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pickle
    from urllib.parse import quote

    from pytest_flows._internal.secret_check import secret_values_in

    secret = 's3cr3t/value+with"quotes'
    monkeypatch.setenv("SERVICE_PASSWORD", secret)
    pickled = base64.b64encode(pickle.dumps(Holder(secret))).decode()
    for text in (
        json.dumps({"data": pickled}),
        json.dumps({"x": secret}),
        quote(secret, safe=""),
        repr(secret),
    ):
        assert secret_values_in(text) == ["SERVICE_PASSWORD"], text
    assert secret_values_in("nothing here") == []
