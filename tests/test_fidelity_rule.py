"""The rule of docs/determinism.md: under the harness only what the runtime leaves to
chance changes; every other convenience is behaviour-preserving, off under
--flows-all, or opt-in, says so in the table, and names the tests that hold it."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_flows._internal.contract.adapters import ADAPTERS

ROOT = Path(__file__).resolve().parents[1]
KINDS = (
    "behaviour-preserving",
    "opt-in",
    "off under `--flows-all`",
    "which thread runs next",
    "as on the bare runtime",
)
#: Environment variables a flows test gets, each an edge the rule lets change:
#: telemetry and tracing are the network's reachability.
NETWORK_EDGES = {
    "OTEL_SDK_DISABLED",
    "CREWAI_DISABLE_TELEMETRY",
    "CREWAI_TRACING_ENABLED",
    "CREWAI_TESTING",  # crewai: no first-run tracing prompt nor trace upload
    "AGENT_FRAMEWORK_DISABLE_TELEMETRY",
    "LANGSMITH_TRACING",  # langgraph: LangSmith would upload every run
    "LANGCHAIN_TRACING_V2",  # the same switch under its older name
}


def _rule_table() -> list[list[str]]:
    text = (ROOT / "docs" / "determinism.md").read_text(encoding="utf-8")
    marker = "\n## The rule: only what the runtime leaves to chance changes\n"
    assert marker in text, "docs/determinism.md lost the rule's section"
    section = text.split(marker, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


def test_every_convenience_is_of_an_allowed_kind_and_names_existing_tests() -> None:
    rows = _rule_table()
    assert len(rows) >= 8
    for convenience, kind, enforced_by in rows:
        assert kind.startswith(KINDS), f"{convenience}: {kind!r} is none of {KINDS}"
        named = re.findall(r"`(tests/[\w/]+\.py)`", enforced_by)
        assert named or enforced_by == "their own tests", convenience
        for path in named:
            assert (ROOT / path).is_file(), f"{convenience}: {path} does not exist"


def test_the_environment_a_flows_test_gets_only_cuts_network_edges() -> None:
    # A variable that switches behaviour (the version check's console panel was one)
    # must be a quiet-console setting instead, off under --flows-all.
    for spec in ADAPTERS:
        assert set(spec.environment) <= NETWORK_EDGES, spec.framework
