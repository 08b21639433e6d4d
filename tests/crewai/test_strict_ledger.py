"""What a user sees when a script and a flow disagree, in a real pytest run (pytester)."""

from __future__ import annotations

import pytest

USER_TESTS = """
from crewai import LLM
from crewai.flow.flow import Flow, start


class HelloFlow(Flow):
    @start()
    def greet(self):
        return LLM("gpt-4o").call("Say hello")


class WizardFlow(Flow):
    @start()
    def interview(self):
        return self.ask("What is your name?")


def test_unused_llm_reply(flows, fake_llm):
    fake_llm.reply("hello")
    fake_llm.on(agent="Writer").reply("a draft")
    flows.run(HelloFlow)


def test_unused_crew_result(fake_crews):
    fake_crews.on(crew="research").reply("findings")


def test_unused_human_answer(flows, human):
    human.answer("Ada")
    human.on(method="review").answer(outcome="approved", times=2)
    flows.run(WizardFlow)


def test_optional_and_allow_unused_pass(flows, fake_llm, human):
    fake_llm.reply("hello")
    fake_llm.reply("spare", optional=True)
    human.answer("never asked")
    human.allow_unused()
    flows.run(HelloFlow)


def test_a_failing_test_reports_only_its_own_failure(flows, fake_llm):
    fake_llm.reply("hello", "unused because the test failed first")
    flows.run(HelloFlow)
    assert False, "the test's own failure"


def test_unexpected_human_request(flows, human):
    flows.run(WizardFlow)
"""


_RUNS: dict[str, pytest.RunResult] = {}
_SOURCE: list[str] = []


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.RunResult:
    # One subprocess run (crewai imports in seconds) serves every test here; with the
    # plugin alone (the other plugins' imports cost seconds a run).
    if "run" not in _RUNS:
        path = pytester.makepyfile(test_user=USER_TESTS)
        _SOURCE.extend(path.read_text().splitlines())
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        _RUNS["run"] = pytester.runpytest_subprocess(
            "-p", "pytest_flows.plugin", "-p", "no:cacheprovider"
        )
    return _RUNS["run"]


def line_of(snippet: str) -> int:
    return next(i for i, line in enumerate(_SOURCE, start=1) if snippet in line)


def test_unused_replies_fail_the_test_at_teardown_naming_each_one(run: pytest.RunResult) -> None:
    run.assert_outcomes(passed=4, failed=2, errors=3)
    run.stdout.fnmatch_lines(
        [
            "*_ ERROR at teardown of test_unused_llm_reply _*",
            "pytest-flows: 1 scripted reply on fake_llm never used:",
            f'  fake_llm.on(agent="Writer").reply("a draft")  [[]test_user.py:'
            f"{line_of('a draft')}, used 0 of 1[]]",
            "The flow never asked for it. Remove it, fix the condition, or pass optional=True "
            "(fake_llm.allow_unused() relaxes this check for the whole test).",
            "*_ ERROR at teardown of test_unused_crew_result _*",
            "pytest-flows: 1 scripted crew result on fake_crews never used:",
            f'  fake_crews.on(crew="research").reply("findings")  [[]test_user.py:'
            f"{line_of('findings')}, used 0 of 1[]]",
            "The flow never asked for it. Remove it, fix the condition, or pass optional=True "
            "(fake_crews.allow_unused() relaxes this check for the whole test).",
            "*_ ERROR at teardown of test_unused_human_answer _*",
            "pytest-flows: 1 scripted answer on human never used:",
            f'  human.on(method="review").answer(outcome="approved", times=2)  [[]test_user.py:'
            f"{line_of('times=2')}, used 0 of 2[]]",
            "The flow never asked for it. Remove it, fix the condition, or pass optional=True "
            "(human.allow_unused() relaxes this check for the whole test).",
        ]
    )


def test_optional_replies_and_allow_unused_pass(run: pytest.RunResult) -> None:
    run.stdout.fnmatch_lines(["test_user.py .E.E.E.FF*"])


def test_a_failed_test_gets_no_extra_teardown_error(run: pytest.RunResult) -> None:
    text = run.stdout.str()
    assert "ERROR at teardown of test_a_failing_test_reports_only_its_own_failure" not in text
    assert "ERROR at teardown of test_unexpected_human_request" not in text
    run.stdout.fnmatch_lines(
        ["FAILED test_user.py::test_a_failing_test_reports_only_its_own_failure - Asser*"]
    )


def test_an_unexpected_human_request_fails_the_test_with_its_trace(run: pytest.RunResult) -> None:
    run.stdout.fnmatch_lines(
        [
            "*_ test_unexpected_human_request _*",
            "pytest-flows: unscripted human request #1: no scripted answer matches it.",
            "  caller: flow=WizardFlow method=interview kind=ask occurrence=1",
            "  message: 'What is your name?'",
            "  script: empty (nothing was scripted on human)",
            "Add this line to the test to answer it:",
            '    human.on(method="interview", message="What is your name").answer("...")',
            "*- pytest-flows trace -*",
            "flow started WizardFlow",
            "method started interview trigger=start",
            "human ask interview message='What is your name?' "
            "error='pytest-flows: unscripted human request #1: no scripted answer matches it.'",
            "*= short test summary info =*",
        ]
    )
