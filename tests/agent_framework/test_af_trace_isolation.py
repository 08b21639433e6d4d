"""Agent Framework runs side by side or in a helper thread keep exactly their own trace."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import af_workflows as wf
import pytest

from pytest_flows import FlowsSession


@pytest.mark.asyncio
async def test_gathered_workflows_each_keep_exactly_their_own_events(flows: FlowsSession) -> None:
    triage, diamond = await asyncio.gather(
        flows.arun(wf.build_triage(), "urgent: site down"),
        flows.arun(wf.build_diamond(), "hello world"),
    )

    assert triage.trace.names("workflow.started") == ["triage"]
    assert diamond.trace.names("workflow.started") == ["diamond"]
    assert triage.trace.names("executor.invoked") == ["classify", "escalate"]
    assert diamond.trace.names("executor.invoked") == ["split", "reverse", "upper", "join", "long"]
    alone = flows.run(wf.build_triage(), "urgent: site down").trace.render()
    assert triage.trace.render() == alone


def test_a_workflow_run_in_a_helper_thread_records_its_trace(flows: FlowsSession) -> None:
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.setdefault("run", flows.run(wf.build_triage(), "Site is DOWN"))
    )
    thread.start()
    thread.join()

    run = result["run"]
    assert run.outputs == ["on-call: Site is DOWN"]
    assert run.trace.render() == flows.run(wf.build_triage(), "Site is DOWN").trace.render()
    assert run.trace.names("executor.invoked") == ["classify", "escalate"]
