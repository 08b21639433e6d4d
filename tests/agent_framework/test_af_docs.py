"""docs/agent-framework.md names the API as it is (field and attribute names)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import pytest_flows.agent_framework as af

DOC = (Path(__file__).parents[2] / "docs" / "agent-framework.md").read_text()


def _names_after(marker: str) -> list[str]:
    """The backticked names in the parenthesis that follows ``marker`` in the page."""
    start = DOC.index(marker) + len(marker)
    text = DOC[start : DOC.index(")", start)]
    return re.findall(r"`(\w+)`", text)


@pytest.mark.parametrize(
    ("marker", "cls"),
    [
        ("(a list of\n`CheckpointInfo`:", af.CheckpointInfo),
        ("(`PendingRequest`:", af.PendingRequest),
    ],
)
def test_the_documented_fields_are_the_dataclass_fields(marker, cls):
    documented = _names_after(marker)
    actual = [f.name for f in dataclasses.fields(cls) if f.repr]

    assert documented == actual


def test_every_workflow_run_attribute_in_the_table_exists():
    table = DOC[DOC.index("It returns a `WorkflowRun`") : DOC.index("**Agents' responses are")]
    first_cells = re.findall(r"^\| ([^|]+) \|", table, re.M)
    names = {n for cell in first_cells for n in re.findall(r"`(\w+)[`(]", cell)}

    assert {"outputs", "non_agent_outputs", "outputs_from", "output_records", "request"} <= names
    assert sorted(n for n in names if not hasattr(af.WorkflowRun, n) and n not in _FIELDS) == []


_FIELDS = {f.name for f in dataclasses.fields(af.WorkflowRun)}


def test_the_request_ledger_keys_are_documented():
    for key in ("request", "request_id", "request_type", "response_type"):
        assert f'asked["{key}"]' in DOC
