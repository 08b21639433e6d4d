"""@pytest.mark.golden misused: clear failures that say what to do."""

from __future__ import annotations

import json

import pytest


def test_a_golden_test_that_is_not_a_flows_test_is_told_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.golden
        def test_plain():
            assert True
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.golden needs a flows test; request the `flows`*"])


def test_a_golden_test_that_runs_no_flow_records_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.golden
        def test_idle(flows):
            assert flows.seed == 0
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly", "--flows-golden-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.golden recorded nothing: the test ran no flow*"])
    assert not (pytester.path / "__goldens__").exists()


def test_a_damaged_golden_file_says_how_to_re_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_damaged="""
        import pytest

        @pytest.mark.golden
        def test_it(flows):
            pass
        """
    )
    golden = pytester.path / "__goldens__" / "test_damaged" / "test_it.json"
    golden.parent.mkdir(parents=True)
    golden.write_text("{not json", encoding="utf-8")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_it.json is not valid JSON*--flows-golden-update*"])

    golden.write_text(json.dumps({"format": 99}), encoding="utf-8")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.stdout.fnmatch_lines(["*has format 99, written by a newer pytest-flows*upgrade*"])

    golden.write_text(json.dumps({"format": "x"}), encoding="utf-8")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.stdout.fnmatch_lines(
        ["*is not a pytest-flows golden (formats 1: pytest-flows 0.1.0, 2: *--flows-golden-update*"]
    )


def test_a_failing_test_reports_its_own_failure_not_the_golden(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.golden
        def test_broken(flows):
            assert 1 == 2, "the test's own assertion"
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the test's own assertion*"])
    assert "golden replay" not in result.stdout.str()
    assert "no golden recording" not in result.stdout.str()


def test_human_answers_are_kept_as_text_and_outcome_a_pause_a_timeout_or_a_value() -> None:
    from types import SimpleNamespace

    from pytest_flows._internal.fakes.human_script import PAUSE, Answer
    from pytest_flows._internal.golden.replay import _human_value

    def exchange(reply: object, scripted: object = None) -> object:
        return SimpleNamespace(reply=reply, entry=SimpleNamespace(reply=scripted))

    assert _human_value(exchange(PAUSE)) == "<pause>"
    assert _human_value(exchange(None)) == "<timeout>"
    approved = Answer(text="ship it", outcome="approved")
    assert _human_value(exchange("ship it", approved)) == {
        "text": "ship it",
        "outcome": "approved",
    }
    assert _human_value(exchange("fine", lambda request: "fine")) == {
        "text": "fine",
        "outcome": None,
    }
    assert _human_value(exchange({"approved": True})) == {"value": {"approved": True}}
