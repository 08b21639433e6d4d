"""Tests as a user wrote them from the second round's pages before the move to
``pytest_flows._internal`` (docs/*.md at 6f96dd3^), which named these modules in
their prose. Do not modernise them (see test_round_one_docs.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given

from pytest_flows.errors import FlowsDeadlockError, NoMethodRanWarning
from pytest_flows.golden.migrations import assert_resumes_old_states, old_states
from pytest_flows.seams import replaced
from pytest_flows.strategies import schedules
from pytest_flows.usage import BudgetExceeded


@given(schedule=schedules(max_length=4, max_choice=2))
def test_schedules_draw_replayable_strings(schedule):
    assert isinstance(schedule, str)


def test_the_error_types():
    assert issubclass(NoMethodRanWarning, pytest.PytestWarning)
    assert issubclass(FlowsDeadlockError, Exception)
    assert issubclass(BudgetExceeded, BaseException)


def test_old_states_and_the_resume_check_are_there():
    assert callable(old_states)
    assert callable(assert_resumes_old_states)


def test_replaced_restores_what_it_replaced():
    class Holder:
        value = 1

    with replaced(Holder, "value", 2):
        assert Holder.value == 2
    assert Holder.value == 1
