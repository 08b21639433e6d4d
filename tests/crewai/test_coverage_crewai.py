"""--flows-cov on real crewai flows: exact figures per item kind, xdist, fail-under, entry paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import crewai.flow.flow
import crewai.flow.human_feedback
import pytest
from crewai_versions import needs_conversational_flows

pytest.importorskip("crewai.flow.conversational", reason=needs_conversational_flows)

import crewai.flow.conversational

# Imported here, not first inside the in-process runs: pytester unloads what a run
# imported, and numpy (under crewai) cannot be loaded twice in one process.
assert crewai.flow.flow and crewai.flow.conversational and crewai.flow.human_feedback

FLOWS = """
from typing import Any, Literal

from crewai.flow.conversational import ConversationConfig, ConversationState
from crewai.flow.flow import Flow, and_, listen, or_, router, start
from crewai.flow.human_feedback import human_feedback


class Routing(Flow):
    @start()
    def begin(self):
        return "go"

    @router(begin)
    def triage(self) -> Literal["high", "low", "spam"]:
        return self.state["priority"]

    @listen("high")
    def escalate(self):
        return "escalated"

    @listen("low")
    def queue(self):
        return "queued"

    @listen(or_(escalate, queue))
    def notify(self):
        return "notified"

    @listen(and_(begin, notify))
    def audit(self):
        return "audited"


class Retry(Flow):
    @start()
    def init(self):
        self.state["n"] = 0

    @router(or_(init, "again"))
    def attempt(self) -> Literal["again", "done", "gave_up"]:
        self.state["n"] += 1
        return "again" if self.state["n"] < 3 else "done"

    @listen("done")
    def finish(self):
        return self.state["n"]

    @listen("gave_up")
    def alert(self):
        return "alert"


class Review(Flow):
    @start()
    @human_feedback(
        message="Approve?", emit=["approved", "rejected", "needs_changes"], llm="gpt-4o-mini"
    )
    def draft(self):
        return "Draft v1"

    @listen("approved")
    def publish(self):
        return "published"

    @listen("rejected")
    def discard(self):
        return "discarded"

    @listen("needs_changes")
    def revise(self):
        return "revised"


@ConversationConfig(defer_trace_finalization=True)
class Support(Flow[ConversationState]):
    def route_turn(self, context: dict[str, Any]) -> str:
        return "order" if "order" in (self.state.current_user_message or "") else "help"

    @listen("order")
    def handle_order(self):
        self.append_assistant_message("Your order is on its way.")
        return "order"

    @listen("help")
    def handle_help(self):
        self.append_assistant_message("How can I help?")
        return "help"
"""

USER_TESTS = """
from cov_flows import Retry, Review, Routing, Support


def test_high_priority(flows):
    assert flows.run(Routing, inputs={"priority": "high"}).output == "audited"


def test_retry_cycles_until_done(flows):
    assert flows.run(Retry).output == 3


def test_review_approved(flows, human):
    human.on(method="draft").answer("looks good", outcome="approved")
    assert flows.run(Review).output == "published"


def test_support_order(conversation):
    chat = conversation.start(Support)
    assert chat.send("Where is my order?").handler == "handle_order"
"""

REPORT = """\
Flow               Items   Miss  Cover
--------------------------------------
cov_flows.Retry       11      3    73%
cov_flows.Review      10      6    40%
cov_flows.Routing     15      5    67%
cov_flows.Support     13      9    31%
--------------------------------------
TOTAL                 49     23    53%

Missed:
  cov_flows.Retry
    methods: alert
    router labels: attempt -> gave_up
    edges: attempt:gave_up -> alert
  cov_flows.Review
    methods: discard, revise
    feedback outcomes: draft -> rejected, draft -> needs_changes
    edges: draft:rejected -> discard, draft:needs_changes -> revise
  cov_flows.Routing
    methods: queue
    router labels: triage -> low, triage -> spam
    edges: triage:low -> queue, queue -> notify
  cov_flows.Support
    methods: handle_help, converse_turn, end_conversation
    routes: route_conversation -> help, route_conversation -> converse, route_conversation -> end
    edges: route_conversation:help -> handle_help, route_conversation:converse -> converse_turn, \
route_conversation:end -> end_conversation
"""


def _project(pytester: pytest.Pytester, tests: str = USER_TESTS) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(cov_flows=FLOWS, test_cov_user=tests)


def _report(result: pytest.RunResult) -> str:
    """The report's table and missed list, as printed."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("Flow "))
    ends = ("JSON ", "HTML ", "=", "FAIL", "Required")
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(ends)), len(lines))
    return "\n".join(lines[start:end]).rstrip() + "\n"


def _items(data: dict[str, Any], key: str) -> dict[str, list[str]]:
    flow = next(f for f in data["flows"] if f["key"] == key)
    return {item["text"]: item["tests"] for item in flow["items"]}


def test_each_kind_of_item_is_counted_exactly(pytester: pytest.Pytester) -> None:
    _project(pytester)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")

    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*- flows coverage: 26/49 items, 53% -*"])
    assert _report(result) == REPORT
    data = json.loads((pytester.path / "cov.json").read_text())
    assert (data["covered"], data["total"]) == (26, 49)
    figures = {f["key"]: (f["covered"], f["total"]) for f in data["flows"]}
    assert figures == {
        "cov_flows.Retry": (8, 11),
        "cov_flows.Review": (4, 10),
        "cov_flows.Routing": (10, 15),
        "cov_flows.Support": (4, 13),
    }
    routing = _items(data, "cov_flows.Routing")
    # the or_ branch taken and the and_ completion, each credited to the test that took it
    assert routing["escalate -> notify"] == ["test_cov_user.py::test_high_priority"]
    assert routing["and(begin, notify) -> audit"] == ["test_cov_user.py::test_high_priority"]
    assert routing["queue -> notify"] == []
    # the router cycle: the label that loops back is an edge into the router itself
    assert _items(data, "cov_flows.Retry")["attempt:again -> attempt"] == [
        "test_cov_user.py::test_retry_cycles_until_done"
    ]
    assert _items(data, "cov_flows.Review")["draft -> approved"] == [
        "test_cov_user.py::test_review_approved"
    ]
    assert _items(data, "cov_flows.Support")["route_conversation -> order"] == [
        "test_cov_user.py::test_support_order"
    ]


def test_more_tests_cover_more_and_say_which(pytester: pytest.Pytester) -> None:
    more = (
        USER_TESTS
        + """

def test_low_priority(flows):
    assert flows.run(Routing, inputs={"priority": "low"}).output == "audited"


def test_review_rejected(flows, human):
    human.on(method="draft").answer("no", outcome="rejected")
    assert flows.run(Review).output == "discarded"
"""
    )
    _project(pytester, more)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=cov.json")

    result.assert_outcomes(passed=6)
    data = json.loads((pytester.path / "cov.json").read_text())
    figures = {f["key"]: (f["covered"], f["total"]) for f in data["flows"]}
    assert figures["cov_flows.Routing"] == (14, 15)  # only triage -> spam is left
    assert figures["cov_flows.Review"] == (7, 10)
    routing = _items(data, "cov_flows.Routing")
    assert routing["audit"] == [
        "test_cov_user.py::test_high_priority",
        "test_cov_user.py::test_low_priority",
    ]
    assert routing["triage -> spam"] == []


def test_two_xdist_workers_report_what_a_serial_run_does(pytester: pytest.Pytester) -> None:
    _project(pytester)

    serial = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=serial.json")
    split = pytester.runpytest_inprocess(
        "-p", "no:randomly", "-v", "-n", "2", "--dist=load", "--flows-cov-json=split.json"
    )

    serial.assert_outcomes(passed=4)
    split.assert_outcomes(passed=4)
    assert _report(split) == _report(serial) == REPORT
    assert (pytester.path / "split.json").read_text() == (pytester.path / "serial.json").read_text()
    # the run really was split: both workers ran tests
    workers = {line.split("]")[0] + "]" for line in split.outlines if " PASSED " in line}
    assert workers == {"[gw0]", "[gw1]"}


def test_fail_under_fails_the_run_and_the_ini_sets_it(pytester: pytest.Pytester) -> None:
    _project(pytester)

    below = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-fail-under=60")
    assert below.ret == pytest.ExitCode.TESTS_FAILED
    below.assert_outcomes(passed=4)
    below.stdout.fnmatch_lines(
        ["FAIL Required flow-graph coverage of 60% not reached. Total coverage: 53.06%"]
    )

    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nflows_cov_fail_under = 50\n"
    )
    above = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov")
    assert above.ret == pytest.ExitCode.OK
    above.stdout.fnmatch_lines(["Required flow-graph coverage of 50% reached.*"])

    # the ini threshold alone does not switch coverage on
    off = pytester.runpytest_inprocess("-p", "no:randomly")
    assert off.ret == pytest.ExitCode.OK
    assert "flows coverage" not in off.stdout.str()


def test_a_bad_threshold_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _project(pytester)
    result = pytester.runpytest_inprocess("--flows-cov-fail-under=120")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--flows-cov-fail-under expects a percentage from 0 to 100*"])

    pytester.makeini("[pytest]\nflows_cov_fail_under = most\n")
    result = pytester.runpytest_inprocess("--flows-cov")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini option flows_cov_fail_under*'most'*"])


def test_plain_kickoff_and_flows_all_suites_are_counted(pytester: pytest.Pytester) -> None:
    tests = """
import pytest

from cov_flows import Routing


@pytest.mark.flows
def test_marked_kickoff():
    assert Routing().kickoff(inputs={"priority": "low"}) == "audited"


def test_unmarked_kickoff():
    assert Routing().kickoff(inputs={"priority": "high"}) == "audited"
"""
    _project(pytester, tests)

    marked_only = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-json=a.json")
    every_test = pytester.runpytest_inprocess(
        "-p", "no:randomly", "--flows-all", "--flows-cov-json=b.json"
    )

    marked_only.assert_outcomes(passed=2)
    every_test.assert_outcomes(passed=2)
    a = _items(json.loads((pytester.path / "a.json").read_text()), "cov_flows.Routing")
    b = _items(json.loads((pytester.path / "b.json").read_text()), "cov_flows.Routing")
    # without the harness a test's kickoff() is not traced, so not counted
    assert a["triage -> low"] == ["test_cov_user.py::test_marked_kickoff"]
    assert a["triage -> high"] == []
    assert b["triage -> high"] == ["test_cov_user.py::test_unmarked_kickoff"]


def test_html_pages_show_the_graph_and_who_covered_it(pytester: pytest.Pytester) -> None:
    _project(pytester)

    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-cov-html=htmlcov")

    result.stdout.fnmatch_lines(["HTML written to *htmlcov*index.html"])
    pages = sorted(p.name for p in Path(pytester.path / "htmlcov").iterdir())
    assert pages == [
        "cov_flows.Retry.html",
        "cov_flows.Review.html",
        "cov_flows.Routing.html",
        "cov_flows.Support.html",
        "index.html",
    ]
    page = (pytester.path / "htmlcov" / "cov_flows.Routing.html").read_text()
    assert "cov_flows.Routing: 10/15 (67%)" in page
    assert page.count("<g class='node covered'") == 5
    assert page.count("<g class='node missed'") == 1  # queue
    assert "<g class='node label' data-node='label:spam'>" in page
    assert "triage:low -&gt; queue: not covered" in page
    assert "escalate -&gt; notify: covered by\ntest_cov_user.py::test_high_priority" in page


def test_a_report_that_would_hold_a_secret_is_not_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 26: one secret check for every file the plugin writes
    monkeypatch.setenv("ACME_API_KEY", "acme-cov-0123456789")
    tests = """
import pytest
from cov_flows import Routing


@pytest.mark.parametrize("key", ["acme-cov-0123456789"])
def test_high_priority(flows, key):
    assert flows.run(Routing, inputs={"priority": "high"}).output == "audited"
"""
    _project(pytester, tests)

    result = pytester.runpytest_inprocess(
        "-p", "no:randomly", "--flows-cov-json=cov.json", "--flows-cov-html=htmlcov"
    )

    result.stdout.fnmatch_lines(["*coverage report NOT written*$ACME_API_KEY*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert not (pytester.path / "cov.json").exists()
    assert not (pytester.path / "htmlcov").exists()
