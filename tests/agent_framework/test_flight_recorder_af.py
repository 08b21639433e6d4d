"""The flight recorder with Agent Framework: a workflow recorded in a plain Python
process (its agent's chat client talking HTTP to a loopback OpenAI-compatible server),
replayed under the harness with every model call answered from the record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agent_framework")

import flight_af

from pytest_flows.recorder import read_record

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "crewai"))
from loopback_openai import LoopbackOpenAI  # noqa: E402


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("af-recordings")
    with LoopbackOpenAI() as server:
        done = subprocess.run(
            [sys.executable, str(HERE / "flight_af_production.py"), str(out), server.base_url],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["record"] = read_record(report["written"][0])
    report["requests"] = list(server.requests)
    return report


def test_a_recorded_workflow_replays_with_the_same_trace_and_outputs(flows, production):
    record = production["record"]
    assert production["test_modules"] == []
    assert len(production["requests"]) == 1  # the real HTTP call happened in production
    assert [e["method"] for e in record.of_kind("method.started")] == ["writer", "publish"]
    assert record.of_kind("llm.request")[0]["method"] == "writer"

    replayed = flows.replay(record.path, flight_af.build_writer())

    assert not replayed.diverged, replayed.report()
    assert replayed.run.outputs == production["outputs"]
    assert replayed.replayed_trace == replayed.recorded_trace


def test_a_changed_instruction_is_reported_at_its_request(flows, production, monkeypatch):
    workflow = flight_af.build_writer()
    replayed = flows.replay(production["record"].path, workflow)
    assert not replayed.diverged, replayed.report()

    monkeypatch.setattr(flight_af, "INSTRUCTIONS", "Write two lines about the topic.")
    # The instructions are not part of the messages at the chat-client layer; the
    # message is: a different start message is a different first request.
    record = production["record"]
    record.header["run_kwargs"] = {"message": "tides and the sun"}
    changed = flows.replay(record, flight_af.build_writer())
    assert changed.first is not None and changed.first.kind == "prompt"
    assert changed.first.where == "LLM call 1 of method writer"
    assert "+  tides and the sun" in changed.first.diff
