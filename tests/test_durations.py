"""Virtual durations refuse nonsense: nan, inf, negatives and non-numbers are usage errors."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from pytest_flows import FlowsSession
from pytest_flows._internal.durations import check_duration
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.human_script import Answer, ScriptedHuman
from pytest_flows._internal.fakes.llm_script import LLMScript
from pytest_flows._internal.fakes.replies import RateLimitError, stream

NONSENSE = [math.inf, -math.inf, math.nan, -1, -0.5, 10**400, True, "3", None, [1]]


@pytest.mark.parametrize("value", NONSENSE, ids=repr)
def test_check_duration_rejects_nonsense(value: object) -> None:
    with pytest.raises(FlowsUsageError) as caught:
        check_duration("reply(latency=...)", value)
    message = str(caught.value)
    assert message.startswith("reply(latency=...) got ")
    assert "seconds" in message


@pytest.mark.parametrize(("value", "seconds"), [(0, 0.0), (3, 3.0), (2.5, 2.5), (1e9, 1e9)])
def test_check_duration_accepts_finite_non_negative_numbers(value: float, seconds: float) -> None:
    result = check_duration("x", value)
    assert result == seconds and type(result) is float


def test_each_kind_of_nonsense_gets_its_own_fix() -> None:
    with pytest.raises(FlowsUsageError, match="finite number"):
        check_duration("answer(after=...)", math.nan)
    with pytest.raises(FlowsUsageError, match="cannot wait forever"):
        check_duration("answer(after=...)", math.inf)
    with pytest.raises(FlowsUsageError, match="cannot go backwards"):
        check_duration("answer(after=...)", -3)
    with pytest.raises(FlowsUsageError, match=r"got '3' \(str\).*int or float"):
        check_duration("answer(after=...)", "3")


Scripting = Callable[[Any], object]

ENTRY_POINTS: dict[str, Scripting] = {
    "reply(latency=...)": lambda v: LLMScript().reply("hi", latency=v),
    "reply(latency=...) on a rule": lambda v: LLMScript().on(method="m").reply("hi", latency=v),
    "answer(after=...)": lambda v: ScriptedHuman().answer("yes", after=v),
    "answer(after=...) on a rule": lambda v: ScriptedHuman().on(method="m").answer("y", after=v),
    "Answer(after=...)": lambda v: Answer("yes", after=v),
    "stream(interval=...)": lambda v: stream(["a", "b"], interval=v),
    "RateLimitError(retry_after=...)": lambda v: RateLimitError(retry_after=v),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("value", [math.inf, math.nan, -1.0], ids=repr)
def test_every_duration_argument_is_checked(entry: str, value: float) -> None:
    name = entry.removesuffix(" on a rule")
    with pytest.raises(FlowsUsageError, match=re.escape(name)):
        ENTRY_POINTS[entry](value)


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_finite_durations_are_still_accepted(entry: str) -> None:
    ENTRY_POINTS[entry](2)


def test_a_scripted_latency_is_stored_as_float_seconds() -> None:
    script = LLMScript().reply("hi", latency=3)
    (entry,) = script.script.entries
    assert entry.options["latency"] == 3.0


def test_an_answer_keeps_its_wait_as_float_seconds() -> None:
    assert Answer("yes", after=2).after == 2.0


def test_clock_advance_refuses_infinity(flows: FlowsSession) -> None:
    before = flows.clock.monotonic()
    with pytest.raises(FlowsUsageError, match="cannot wait forever"):
        flows.clock.advance(math.inf)
    assert flows.clock.monotonic() == before
