"""The schedule and races settings: --flows-schedule, @pytest.mark.flows(schedule=, races=)."""

from __future__ import annotations

from pathlib import Path

import pytest
from crewai_versions import crewai_114_differs

pytest_plugins = ["pytester"]

FLOWS = Path(__file__).parent

TEST = """
import sys
sys.path.insert(0, {here!r})
import pytest
from explore_flows import CheckThenWrite, OwnFields
from scheduler_flows import LostUpdate

def test_schedule(flows):
    run = flows.run(CheckThenWrite)
    print("SCHEDULE", run.schedule, "ITEMS", run.state.items)

@pytest.mark.flows(races="fail")
def test_lost_update_races(flows):
    assert flows.run(LostUpdate).state.n == 1

@pytest.mark.flows(races="fail")
def test_own_fields_do_not(flows):
    assert flows.run(OwnFields).state.a == 1

@pytest.mark.flows(races="fail")
def test_instance_races(flows):
    assert flows.run(LostUpdate()).state.n == 1

@pytest.mark.flows(races="fail")
def test_explored_races(flows):
    from pytest_flows import explore
    assert len(explore(flows, LostUpdate, max_schedules=20)) >= 1

@pytest.mark.flows(races="fail")
def test_nothing_ran(flows):
    assert flows.seed == 0
"""


def test_races_fail_names_the_field_methods_and_lines(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "lost_update or fields")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*state race(s)*",
            "*state.n: a (scheduler_flows.py:2*) and b (scheduler_flows.py:2*)*",
            "*LostUpdate: schedules lead to 3 outcomes, for instance:*",
            "*state={\"n\": 1}*<- flows.run(LostUpdate, schedule='s')*",
            "*state={\"n\": 2}*<- flows.run(LostUpdate, schedule='s*')*",
        ]
    )


@crewai_114_differs(
    "the schedule, explored on crewai 1.15, replays another interleaving there "
    "(flow.state is a locking StateProxy)"
)
def test_the_command_line_schedule_replays_in_every_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "-s", "-k", "schedule", "--flows-schedule=s000000111"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*SCHEDULE s000000111 ITEMS ?'left'?"])


def test_a_damaged_schedule_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess("-k", "schedule", "--flows-schedule=0102")
    result.stderr.fnmatch_lines(["*a flows schedule is a string like 's0102'*"])


def test_races_fail_reruns_a_flow_given_as_an_instance(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "instance_races")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*state.n: a (scheduler_flows.py:2*) and b (scheduler_flows.py:2*)*",
            "*LostUpdate: schedules lead to 3 outcomes, for instance:*",
        ]
    )


def test_races_fail_counts_the_runs_explore_made(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "explored_races")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*state.n: a (*) and b (*)*", "*LostUpdate: schedules lead to*"])


def test_races_fail_on_a_test_that_runs_no_flow_says_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "nothing_ran")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*races='fail'*checks the flows this test runs, but it ran none*"])
