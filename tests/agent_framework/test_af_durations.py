"""Agent Framework's scripted answers refuse nonsense waits like every other duration."""

from __future__ import annotations

import math

import agent_framework  # noqa: F401  # first: see the report on importing the adapter alone
import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.fakes.human_script import ScriptedHuman
from pytest_flows.agent_framework import requests


@pytest.mark.parametrize("after", [math.inf, math.nan, -2], ids=repr)
def test_respond_after_must_be_finite_and_non_negative(after: float) -> None:
    with pytest.raises(FlowsUsageError, match=r"respond\(after=\.\.\.\)"):
        requests(ScriptedHuman()).respond(True, after=after)
    with pytest.raises(FlowsUsageError, match=r"respond\(after=\.\.\.\)"):
        requests(ScriptedHuman()).on(request=dict).respond(True, after=after)


def test_respond_after_accepts_a_finite_wait() -> None:
    human = ScriptedHuman()
    requests(human).respond(True, after=30)
    (entry,) = human.script.entries
    assert entry.reply.after == 30.0
