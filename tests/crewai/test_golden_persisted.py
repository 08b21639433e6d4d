"""Golden replay of what a crewai run persisted besides @persist saves: checkpoints and
pending feedback, resumed with the crew results and human answers the test scripted."""

from __future__ import annotations

import difflib
import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("crewai")

FLOWS = """
from crewai import Agent, Crew, Task
from crewai.flow.flow import Flow, listen, start
from crewai.flow.human_feedback import human_feedback
from crewai.flow.persistence import persist
from pydantic import BaseModel


class ReviewState(BaseModel):
    draft: str = ""
    {extra_field}


def writer() -> Crew:
    agent = Agent(role="Writer", goal="Write", backstory="Quick.", llm="gpt-4o")
    task = Task(description="Draft {{topic}}", expected_output="a draft", agent=agent)
    return Crew(name="writer", agents=[agent], tasks=[task])


@persist()
class ReviewFlow(Flow[ReviewState]):
    {flow_body}

    @start()
    @human_feedback(message="Approve?", emit=["approved", "rejected"], llm="gpt-4o-mini")
    def write(self) -> str:
        self.state.draft = writer().kickoff(inputs={{"topic": "goldens"}}).raw
        return self.state.draft

    @listen("approved")
    def publish(self) -> str:
        return {publish_output}

    @listen("rejected")
    def discard(self) -> str:
        return "discarded"


class StepsFlow(Flow[ReviewState]):
    {flow_body}

    @start()
    def first(self) -> str:
        self.state.draft = "one"
        return "one"

    @listen(first)
    def {second}(self) -> str:
        self.state.draft += " two"
        return "two"
"""

TESTS = """
import pytest
from crewai.state.checkpoint_config import CheckpointConfig
from review_flows import ReviewFlow, StepsFlow


@pytest.mark.golden
def test_review(flows, flow_store, human, fake_crews):
    fake_crews.reply("a fine draft")
    human.pause()
    run = flows.run(ReviewFlow)
    resumed = human.resume(run, "ship it", outcome="approved")
    assert resumed.error is None


@pytest.mark.golden
def test_steps(flows, flow_store):
    flows.run(StepsFlow(checkpoint=CheckpointConfig(on_events=["method_execution_finished"])))
"""


def write_flows(
    pytester: pytest.Pytester,
    *,
    publish_output: str = "'published'",
    second: str = "second",
    extra_field: str = "",
    flow_body: str = "",
) -> None:
    source = FLOWS.format(
        publish_output=publish_output,
        second=second,
        extra_field=extra_field,
        flow_body=flow_body,
    )
    pytester.makepyfile(review_flows=textwrap.dedent(source))


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # The flows module is rewritten between runs within the same second: no stale .pyc.
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    write_flows(pytester)
    pytester.makepyfile(test_review=TESTS)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(passed=2)
    return pytester


def golden(pytester: pytest.Pytester, test: str) -> Path:
    return pytester.path / "__goldens__" / "test_review" / f"{test}.json"


def check(pytester: pytest.Pytester, *tests: str) -> pytest.RunResult:
    selected = [f"test_review.py::{test}" for test in tests]
    return pytester.runpytest_inprocess("-p", "no:randomly", *selected)


def test_the_recording_holds_pending_feedback_checkpoints_and_the_scripted_answers(
    project: pytest.Pytester,
) -> None:
    review = json.loads(golden(project, "test_review").read_text(encoding="utf-8"))
    assert review["crew_replies"] == ["a fine draft"]
    assert review["human_answers"] == ["<pause>"]
    ((resumed),) = review["human_resumes"]
    assert (resumed["feedback"], resumed["outcome"]) == ("ship it", "approved")
    (run,) = review["runs"]
    pending = run["pending"]
    assert pending["method"] == "write"
    assert pending["state_id"] == resumed["state_id"]
    assert json.loads(pending["state"])["draft"] == "a fine draft"
    # the one field crewai stamps with the real wall clock is pinned
    assert json.loads(pending["context"])["requested_at"] == "2025-01-01T00:00:00"
    by_origin = {r["from"]: r for r in run["resumes"]}
    # resuming the pending record with the test's answer runs the approved route...
    after_feedback = by_origin["pending feedback (in 'write')"]
    assert "method finished publish output='published'" in after_feedback["trace"]
    # ...and a resume from the save re-runs the crew, which gets the recorded result
    from_save = by_origin["save 1 (after 'write')"]
    assert any(
        line.startswith("crew.kickoff writer") or "a fine draft" in line
        for line in from_save["trace"]
    ), from_save["trace"]

    steps = json.loads(golden(project, "test_steps").read_text(encoding="utf-8"))
    (run,) = steps["runs"]
    assert [c["completed"] for c in run["checkpoints"]] == [["first"], ["first", "second"]]
    assert [r["from"] for r in run["resumes"]] == ["checkpoint 1", "checkpoint 2"]
    # restored after 'first', only 'second' runs
    started = [line for line in run["resumes"][0]["trace"] if line.startswith("method started")]
    assert started == ["method started second trigger=first (resumed)"]


def test_unchanged_flows_pass_and_re_record_the_same_bytes(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {t: golden(project, t).read_bytes() for t in ("test_review", "test_steps")}
    check(project).assert_outcomes(passed=2)
    project.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update").assert_outcomes(
        passed=2
    )
    assert {t: golden(project, t).read_bytes() for t in before} == before
    # another process and hash seed: the checkpoints' event records too (the plugin
    # alone: the other plugins' imports cost seconds a run)
    monkeypatch.setenv("PYTHONHASHSEED", "987")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project.runpytest_subprocess(
        "-p", "pytest_flows.plugin", "--flows-golden-update"
    ).assert_outcomes(passed=2)
    for test, recorded in before.items():
        assert_same_text(recorded, golden(project, test).read_bytes())


# Three interpreters: long mode; CI checks another process and hash seed in
# test_unchanged_flows_pass_and_re_record_the_same_bytes.
@pytest.mark.long
def test_xdist_workers_re_record_the_same_bytes(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {t: golden(project, t).read_bytes() for t in ("test_review", "test_steps")}
    monkeypatch.setenv("PYTHONHASHSEED", "987")
    project.runpytest_subprocess(
        "-p", "no:randomly", "-p", "xdist", "-n", "2", "--flows-golden-update"
    ).assert_outcomes(passed=2)
    for test, recorded in before.items():
        assert_same_text(recorded, golden(project, test).read_bytes())


def assert_same_text(before: bytes, after: bytes) -> None:
    if before != after:
        # a checkpoint is one long JSON line: compare its fields, one per line
        def lines(raw: bytes) -> list[str]:
            document = json.loads(raw)
            for run in document["runs"]:
                for checkpoint in run.get("checkpoints", []):
                    checkpoint["raw"] = json.loads(checkpoint["raw"])
            return json.dumps(document, indent=1, sort_keys=True).splitlines()

        diff = difflib.unified_diff(lines(before), lines(after), lineterm="", n=1)
        pytest.fail("the golden changed:\n" + "\n".join(list(diff)[:60]))


def test_a_change_only_the_resumed_pending_run_reaches_is_behaviour(
    project: pytest.Pytester,
) -> None:
    # The test's own run pauses before 'publish': only resuming the stored pending
    # feedback with the test's answer shows the change.
    write_flows(project, publish_output="'shipped'")
    result = check(project, "test_review")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (behaviour)*",
            "*[[]behaviour[]] run 1 (review_flows:ReviewFlow), resumed from pending feedback "
            "(in 'write'): the resumed run's trace differs",
            "*-method finished publish output='published'",
            "*+method finished publish output='shipped'",
        ]
    )


def test_a_renamed_checkpointed_method_is_topology(project: pytest.Pytester) -> None:
    write_flows(project, second="second_step")
    result = check(project, "test_steps")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (topology)*",
            "*- second: listen(first) (no longer in the flow)",
        ]
    )


def test_a_new_required_field_is_schema_for_checkpoints_and_pending_feedback(
    project: pytest.Pytester,
) -> None:
    # crewai builds a state with no arguments: a required field needs an initial_state
    write_flows(
        project,
        extra_field="reviewer: str",
        flow_body='initial_state = ReviewState(reviewer="ann")',
    )
    result = check(project)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "*[[]schema[]] run 1 (review_flows:StepsFlow), checkpoint 1: the stored state does "
            "not fit today's ReviewState",
            "*[[]schema[]] run 1 (review_flows:ReviewFlow), pending feedback (in 'write'): the "
            "stored state does not fit today's ReviewState",
            "*new required field 'reviewer': the stored state has no value",
        ]
    )


def test_a_checkpoint_today_cannot_decode_is_codec(project: pytest.Pytester) -> None:
    path = golden(project, "test_steps")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["runs"][0]["checkpoints"][1]["raw"] = '{"entities": "not a list"}'
    path.write_text(json.dumps(document), encoding="utf-8")
    result = check(project, "test_steps")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*break(s) (codec)*",
            "*[[]codec[]] run 1 (review_flows:StepsFlow), checkpoint 2: today's codec cannot "
            "decode it",
            "*not a checkpoint document*",
        ]
    )


def test_a_secret_named_field_in_a_checkpoint_is_never_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.syspathinsert()
    write_flows(pytester, extra_field='api_key: str = "k-123"')
    pytester.makepyfile(test_review=TESTS)
    result = pytester.runpytest_inprocess(
        "-p", "no:randomly", "--flows-golden-update", "test_review.py::test_steps"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*refusing to write a golden file*secret-named fields (*checkpoint_state.api_key*"]
    )
    assert not golden(pytester, "test_steps").exists()
