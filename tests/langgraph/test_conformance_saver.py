"""``FlowsCheckpointSaver`` passes langgraph-checkpoint-conformance, every capability.

The suite (LangGraph's own, PyPI ``langgraph-checkpoint-conformance``) detects a
capability by override and runs its async tests on a fresh saver per capability.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from pytest_flows.adapters import FlowStore
from pytest_flows.langgraph._checkpoints import FlowsCheckpointSaver


def _report(make: Any, name: str) -> Any:
    @checkpointer_test(name=name)
    async def factory() -> AsyncGenerator[FlowsCheckpointSaver, None]:
        yield make()

    return asyncio.run(validate(factory))


def _failures(report: Any) -> dict[str, Any]:
    return {
        cap: [str(f)[:400] for f in result.failures or []]
        for cap, result in report.results.items()
        if not result.passed
    }


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(FlowsCheckpointSaver, id="private-store"),
        pytest.param(lambda: FlowsCheckpointSaver(store=FlowStore()), id="flow-store"),
        pytest.param(
            lambda: FlowsCheckpointSaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None)),
            id="strict-msgpack",
        ),
    ],
)
def test_every_capability_is_detected_and_passes(make: Any) -> None:
    report = _report(make, "FlowsCheckpointSaver")

    assert _failures(report) == {}
    assert {cap for cap, r in report.results.items() if r.detected} == {
        c.value for c in ALL_CAPABILITIES
    }
    passed = sum(r.tests_passed for r in report.results.values())
    assert passed >= 81  # 0.0.2 runs 81 tests; a newer suite may add some


def test_the_suite_can_fail_this_saver() -> None:
    # The suite is not vacuous here: a saver that loses pending writes fails it.
    class Forgetful(FlowsCheckpointSaver):
        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            return None

    report = _report(Forgetful, "Forgetful")

    assert "put_writes" in _failures(report)
