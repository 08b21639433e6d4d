"""Trajectory matching on its own: modes, matchers, messages."""

from __future__ import annotations

import re
from typing import Any
from unittest.mock import ANY

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.replies import call_tool
from pytest_flows._internal.fakes.script import Exchange, Request
from pytest_flows._internal.fakes.trajectory import Calls, TrajectoryMismatch

SEARCH = call_tool("search", query="AI agents", limit=3)
FETCH = call_tool("fetch", url="https://example.org/a")
TOOLS = Calls([SEARCH, FETCH, SEARCH], noun="tool call")


def exchange(number: int, **caller: Any) -> Exchange:
    return Exchange(request=Request(caller=caller, number=number), entry=None)


LLM_CALLS = Calls(
    [
        exchange(1, method="research", agent="Researcher", purpose="agent"),
        exchange(2, method="write", agent="Writer", purpose="agent"),
    ],
    noun="LLM call",
)


def test_strict_wants_the_same_calls_in_the_same_order() -> None:
    assert TOOLS.match(["search", "fetch", "search"])
    with pytest.raises(TrajectoryMismatch) as caught:
        TOOLS.match(["fetch", "search", "search"])
    assert str(caught.value).splitlines()[0] == (
        "pytest-flows: the tool calls do not match (mode='strict'): call 1 is "
        "search(query='AI agents', limit=3), expected fetch"
    )


def test_strict_counts_missing_and_extra_calls() -> None:
    with pytest.raises(TrajectoryMismatch, match="3 calls happened, 2 expected"):
        TOOLS.match(["search", "fetch"])


def test_unordered_wants_the_same_calls_in_any_order() -> None:
    assert TOOLS.match(["fetch", "search", "search"], mode="unordered")
    with pytest.raises(TrajectoryMismatch, match="happened but not expected: #3 search"):
        TOOLS.match(["fetch", "search"], mode="unordered")


def test_subset_allows_expected_calls_that_did_not_happen() -> None:
    assert TOOLS.match(["search", "search", "fetch", "delete"], mode="subset")
    with pytest.raises(TrajectoryMismatch, match="happened but not expected: #2 fetch"):
        TOOLS.match(["search", "search"], mode="subset")


def test_superset_allows_calls_beyond_the_expected() -> None:
    assert TOOLS.match([call_tool("fetch", url=ANY)], mode="superset")
    with pytest.raises(TrajectoryMismatch) as caught:
        TOOLS.match(["fetch", "fetch"], mode="superset")
    assert "expected but not found: #2 fetch" in str(caught.value)
    assert str(caught.value).splitlines()[-3:] == [
        "    1. search(query='AI agents', limit=3)",
        "    2. fetch(url='https://example.org/a')",
        "    3. search(query='AI agents', limit=3)",
    ]


def test_argument_matchers_value_any_regex_predicate_and_subset() -> None:
    assert TOOLS.match(
        [
            call_tool("search", query=re.compile("agents"), limit=lambda n: n > 2),
            call_tool("fetch"),  # arguments left out match anything
            {"name": "search", "arguments": {"query": ANY}},
        ]
    )
    with pytest.raises(TrajectoryMismatch):
        TOOLS.match([call_tool("search", query="crewai")], mode="superset")


def test_llm_calls_match_on_caller_keys_and_method_names() -> None:
    assert LLM_CALLS.match([{"agent": "Writer"}, "research"], mode="unordered")
    assert LLM_CALLS.match([lambda c: c.caller["purpose"] == "agent"] * 2)
    with pytest.raises(TrajectoryMismatch) as caught:
        LLM_CALLS.match([{"agent": "Editor"}], mode="superset")
    assert str(caught.value).splitlines()[-1] == ("    2. method=write agent=Writer purpose=agent")


def test_an_unknown_mode_or_a_bare_pattern_is_a_usage_error() -> None:
    with pytest.raises(FlowsUsageError, match="mode is one of 'strict', 'unordered'"):
        TOOLS.match([], mode="exact")  # type: ignore[arg-type]
    with pytest.raises(FlowsUsageError, match="pass a list of expected calls"):
        TOOLS.match("search")
    with pytest.raises(FlowsUsageError, match="is no expected call"):
        TOOLS.match([42])
