"""explore() on flows whose crews and LLM calls are scripted: every run of a search
answers from the script as it stood when the search began (a reply scripted once
answers that call in every run), and the teardown check still names a reply no run
used. Before, the second run found the replies used up and every later schedule
ended in an unscripted call that no single run makes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from crewai import LLM
from crewai.flow.flow import Flow, listen, start
from pydantic import BaseModel, Field

from pytest_flows import FlowsSession, UnusedReplies, explore

# Two crews in parallel listeners, each appending its finding: the example's flow.
sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "exploration"))
from crew_flow import TwoCrews


class Asked(BaseModel):
    n: int = 0
    answers: list[str] = Field(default_factory=list)


class TwoQuestions(Flow[Asked]):
    """Two listeners each ask the model, then read-pause-write one counter."""

    @start()
    def begin(self) -> None:
        return None

    def _ask_and_bump(self, who: str) -> None:
        self.state.answers.append(str(LLM(model="gpt-4o").call(f"{who}?")))
        n = self.state.n
        time.sleep(0.01)
        self.state.n = n + 1

    @listen(begin)
    def a(self) -> None:
        self._ask_and_bump("a")

    @listen(begin)
    def b(self) -> None:
        self._ask_and_bump("b")


def _script_crews(fake_crews) -> None:
    fake_crews.on(crew="market").reply("demand grows")
    fake_crews.on(crew="tech").reply("chips are cheap")


def test_a_crew_scripted_once_answers_in_every_explored_run(
    flows: FlowsSession, fake_crews
) -> None:
    _script_crews(fake_crews)
    found = explore(flows, TwoCrews, max_schedules=200)
    assert found.complete
    # Both orders of the appends, each with both crews' scripted results; no run erred.
    assert sorted(o.run.state.summary for o in found.outcomes) == [
        "chips are cheap + demand grows",
        "demand grows + chips are cheap",
    ]
    assert [o.run.error for o in found.outcomes] == [None, None]
    assert found.schedules_run > 2  # more runs than replies: each run met the script afresh


def test_after_a_search_the_script_stands_as_before_it(flows: FlowsSession, fake_crews) -> None:
    _script_crews(fake_crews)
    explore(flows, TwoCrews, max_schedules=50)
    seeds = explore(flows, TwoCrews, seeds=range(4))  # a second search meets the same script
    assert all(run.error is None for run in seeds.runs.values())
    run = flows.run(TwoCrews)  # and so does a plain run after both
    assert sorted(run.state.notes) == ["chips are cheap", "demand grows"]
    # The ledger shows the plain run's two kickoffs only: the searches' runs have their
    # own traces, and each request is numbered as in a single run.
    assert [call.request.number for call in fake_crews.calls] == [1, 2]


def test_each_run_of_a_seed_search_answers_from_the_script(flows: FlowsSession, fake_llm) -> None:
    fake_llm.on(method="a").reply("yes")
    fake_llm.on(method="b").reply("no")
    seeds = explore(flows, TwoQuestions, seeds=range(6))
    assert all(run.error is None for run in seeds.runs.values())
    assert {tuple(sorted(run.state.answers)) for run in seeds.runs.values()} == {("no", "yes")}


def test_a_reply_no_explored_run_used_is_still_reported(flows: FlowsSession, fake_llm) -> None:
    fake_llm.on(method="a").reply("yes")
    fake_llm.on(method="b").reply("no")
    fake_llm.on(method="c").reply("never asked")
    found = explore(flows, TwoQuestions, max_schedules=60)
    assert {o.run.state.n for o in found.outcomes} == {1, 2}  # the lost update, and not
    assert all(o.run.error is None for o in found.outcomes)
    unused = fake_llm.script.unused()
    assert [entry.label for entry in unused] == ['fake_llm.on(method="c").reply("never asked")']
    with pytest.raises(UnusedReplies, match=r'on\(method="c"\).*used 0 of 1'):
        fake_llm.script.verify()
    fake_llm.allow_unused()  # the check above is the test's point; teardown's would repeat it
