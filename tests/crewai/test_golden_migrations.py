"""State migrations: today's flow resumes states an older state model saved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crewai.flow.flow import Flow, start
from crewai.flow.persistence import persist
from pydantic import BaseModel, model_validator

from pytest_flows._internal.golden.migrations import (
    assert_resumes_old_states,
    old_states,
    stored_states,
)


class TicketV1(BaseModel):
    """The state model as it shipped last release."""

    counter: int = 0
    title: str = ""


class TicketV2(BaseModel):
    counter: int = 0
    title: str = ""
    priority: int = 0  # new, with a default: old states still load


class TicketV2Required(BaseModel):
    counter: int = 0
    title: str = ""
    priority: int  # new and required: old states no longer load


class TicketV3(BaseModel):
    """``title`` renamed to ``subject``, with a migration of the old shape."""

    counter: int = 0
    subject: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_v1(cls, data: Any) -> Any:
        if isinstance(data, dict) and "title" in data and "subject" not in data:
            data = {**data, "subject": data["title"]}
            del data["title"]
        return data


@persist()
class FlowV2(Flow[TicketV2]):
    @start()
    def bump(self) -> int:
        self.state.counter += 1
        return self.state.counter


@persist()
class FlowV2Required(Flow[TicketV2Required]):
    initial_state = TicketV2Required(priority=1)

    @start()
    def bump(self) -> int:
        self.state.counter += 1
        return self.state.counter


@persist()
class FlowV3(Flow[TicketV3]):
    @start()
    def bump(self) -> str:
        self.state.counter += 1
        return self.state.subject


def test_old_states_are_json_shaped_like_the_old_model() -> None:
    from hypothesis import find

    state = find(old_states(TicketV1), lambda s: s["counter"] > 3 and s["title"])
    assert set(state) == {"counter", "title"}
    assert json.loads(json.dumps(state)) == state


def test_a_new_field_with_a_default_resumes_old_states(flows, flow_store) -> None:
    seen: list[dict[str, Any]] = []

    def check(old: dict[str, Any], run: Any) -> None:
        seen.append(old)
        assert run.state["counter"] == old["counter"] + 1
        assert run.state["title"] == old["title"]
        assert run.state["priority"] == 0

    assert_resumes_old_states(flows, flow_store, FlowV2, TicketV1, check=check, max_examples=10)
    assert len(seen) >= 5


def test_a_new_required_field_fails_and_names_it(flows, flow_store) -> None:
    with pytest.raises(AssertionError) as failure:
        assert_resumes_old_states(flows, flow_store, FlowV2Required, TicketV1, max_examples=5)
    message = str(failure.value)
    assert "today's flow does not resume a state the old model saved" in message
    assert "priority (missing)" in message
    assert "model_validator(mode='before')" in message


def test_a_migration_carries_a_renamed_field_over(flows, flow_store) -> None:
    def check(old: dict[str, Any], run: Any) -> None:
        assert run.output == old["title"]
        assert "title" not in run.state

    assert_resumes_old_states(flows, flow_store, FlowV3, TicketV1, check=check, max_examples=10)


def test_states_from_a_golden_file(flows, flow_store, tmp_path: Path) -> None:
    golden = tmp_path / "old.json"
    raw = json.dumps({"counter": 4, "title": "from golden", "id": "x"})
    document = {
        "format": 1,
        "runs": [
            {
                "framework": "crewai",
                "flow": "test_golden_migrations:FlowV3",
                "trace": [],
                "output": "",
                "saves": [{"state_id": "x", "index": 1, "method": "bump", "raw": raw}],
            }
        ],
    }
    golden.write_text(json.dumps(document), encoding="utf-8")
    assert stored_states(golden) == [{"counter": 4, "title": "from golden", "id": "x"}]

    outputs: list[Any] = []
    assert_resumes_old_states(
        flows, flow_store, FlowV3, golden, check=lambda old, run: outputs.append(run.output)
    )
    assert outputs == ["from golden"]


def test_a_model_that_is_not_a_pydantic_class_is_a_usage_error() -> None:
    from pytest_flows._internal.errors import FlowsUsageError

    with pytest.raises(FlowsUsageError, match="pass the old state model"):
        old_states(dict)  # type: ignore[arg-type]
