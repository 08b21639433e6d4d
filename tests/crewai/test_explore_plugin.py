"""The schedule and races settings: --flows-schedule, @pytest.mark.flows(schedule=, races=)."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from crewai_versions import crewai_114_differs

pytest_plugins = ["pytester"]

FLOWS = Path(__file__).parent

TEST = """
import sys
import time
sys.path.insert(0, {here!r})
import pytest
from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel
from explore_flows import CheckThenWrite, OwnFields


class Counter(BaseModel):
    n: int = 0


class LostUpdate(Flow[Counter]):
    # two listeners, read-pause-write: the smallest lost update (2 outcomes)
    @start()
    def begin(self):
        return None

    def _bump(self):
        n = self.state.n
        time.sleep(0.01)
        self.state.n = n + 1

    @listen(begin)
    def a(self):
        self._bump()

    @listen(begin)
    def b(self):
        self._bump()


class Asking(Flow[Counter]):
    # LostUpdate whose listeners ask a (scripted) model first
    @start()
    def begin(self):
        return None

    def _bump(self, who):
        from crewai import LLM
        LLM(model="gpt-4o").call(who)
        n = self.state.n
        time.sleep(0.01)
        self.state.n = n + 1

    @listen(begin)
    def a(self):
        self._bump("a")

    @listen(begin)
    def b(self):
        self._bump("b")


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
def test_scripted_races(flows, fake_llm):
    fake_llm.on(method="a").reply("x")
    fake_llm.on(method="b").reply("y")
    assert flows.run(Asking).state.n == 1

@pytest.mark.flows(races="fail")
def test_nothing_ran(flows):
    assert flows.seed == 0
"""


@dataclasses.dataclass(frozen=True)
class Races:
    """One pytest run of every races="fail" test above: the outcomes and each failure's text."""

    outcomes: dict[str, str]
    sections: dict[str, str]
    stdout: str

    def lines(self, test: str, patterns: list[str]) -> None:
        assert test in self.sections, self.stdout[-4000:]
        pytest.LineMatcher(self.sections[test].splitlines()).fnmatch_lines(patterns)


@pytest.fixture(scope="module")
def races(tmp_path_factory: pytest.TempPathFactory) -> Races:
    # One interpreter for the six races tests (each a crewAI import otherwise).
    folder = tmp_path_factory.mktemp("races")
    (folder / "test_it.py").write_text(TEST.format(here=str(FLOWS)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PY_COLORS"] = "0"
    args = ["-p", "no:randomly", "-p", "no:cacheprovider", "-rA", "-k", "not test_schedule"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "test_it.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    stdout = done.stdout
    outcomes = {
        m[2]: m[1] for m in re.finditer(r"^(PASSED|FAILED|ERROR) test_it\.py::(\w+)", stdout, re.M)
    }
    # pytest heads each failure's report with "____ test_name ____"
    parts = re.split(r"^_{3,} (\w+) _{3,}$", stdout, flags=re.M)
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    return Races(outcomes, sections, stdout)


def test_races_fail_names_the_field_methods_and_lines(races: Races) -> None:
    assert races.outcomes["test_lost_update_races"] == "FAILED", races.stdout[-4000:]
    assert races.outcomes["test_own_fields_do_not"] == "PASSED", races.stdout[-4000:]
    races.lines(
        "test_lost_update_races",
        [
            "*state race(s)*",
            "*state.n: a (test_it.py:*) and b (test_it.py:*)*",
            "*LostUpdate: schedules lead to 2 outcomes, for instance:*",
            "*state={\"n\": 1}*<- flows.run(LostUpdate, schedule='s*')*",
            "*state={\"n\": 2}*<- flows.run(LostUpdate, schedule='s*')*",
        ],
    )


@crewai_114_differs(
    "the schedule, explored on crewai 1.15, replays another interleaving there "
    "(flow.state is a locking StateProxy)"
)
def test_the_command_line_schedule_replays_in_every_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_inprocess(
        "-p", "no:randomly", "-s", "-k", "schedule", "--flows-schedule=s000000111"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*SCHEDULE s000000111 ITEMS ?'left'?"])


def test_a_damaged_schedule_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=TEST.format(here=str(FLOWS)))
    result = pytester.runpytest_subprocess("-k", "schedule", "--flows-schedule=0102")
    result.stderr.fnmatch_lines(["*a flows schedule is a string like 's0102'*"])


def test_races_fail_reruns_a_scripted_flow_from_its_script(races: Races) -> None:
    # The teardown's runs answer from the script as the test's run met it: both outcomes,
    # where they used to end in unscripted calls (the replies were used up).
    assert races.outcomes["test_scripted_races"] == "FAILED", races.stdout[-4000:]
    races.lines(
        "test_scripted_races",
        [
            "*state.n: a (test_it.py:*) and b (test_it.py:*)*",
            "*Asking: schedules lead to 2 outcomes, for instance:*",
            '*state={"n": 1}*<- flows.run(Asking, schedule=*',
            '*state={"n": 2}*<- flows.run(Asking, schedule=*',
        ],
    )
    assert "unscripted" not in races.sections["test_scripted_races"]


def test_races_fail_reruns_a_flow_given_as_an_instance(races: Races) -> None:
    assert races.outcomes["test_instance_races"] == "FAILED", races.stdout[-4000:]
    races.lines(
        "test_instance_races",
        [
            "*state.n: a (test_it.py:*) and b (test_it.py:*)*",
            "*LostUpdate: schedules lead to 2 outcomes, for instance:*",
        ],
    )


def test_races_fail_counts_the_runs_explore_made(races: Races) -> None:
    assert races.outcomes["test_explored_races"] == "FAILED", races.stdout[-4000:]
    races.lines(
        "test_explored_races", ["*state.n: a (*) and b (*)*", "*LostUpdate: schedules lead to*"]
    )


def test_races_fail_on_a_test_that_runs_no_flow_says_so(races: Races) -> None:
    assert races.outcomes["test_nothing_ran"] == "FAILED", races.stdout[-4000:]
    races.lines(
        "test_nothing_ran", ["*races='fail'*checks the flows this test runs, but it ran none*"]
    )
