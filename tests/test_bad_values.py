"""Bad values fail with a usage error naming the value and the fix (issue 26 #9-#13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_flows import assert_resumes_old_states, explore
from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.golden import files
from pytest_flows._internal.golden.migrations import stored_states


# -- booleans take bool ------------------------------------------------------------------------
def test_explore_reduction_takes_a_bool_not_a_truthy_string(flows) -> None:
    with pytest.raises(FlowsUsageError, match=r"explore\(reduction=...\) takes True or False"):
        explore(flows, object, reduction="false")


def test_use_cassette_allow_unused_takes_a_bool(tmp_path: Path) -> None:
    pytest.importorskip("vcr")
    from pytest_flows._internal.recording.cassette import use_cassette

    with (
        pytest.raises(FlowsUsageError, match=r"allow_unused=...\) takes True or False"),
        use_cassette(tmp_path / "c.yaml", allow_unused="no"),  # type: ignore[arg-type]
    ):
        pass


@pytest.mark.parametrize(
    ("marker", "fixture", "message"),
    [
        ('flows(console="yes")', "flows", "*@pytest.mark.flows(console=...) takes True or False*"),
        (
            'recorded(allow_unused="no")',
            "flows",
            "*@pytest.mark.recorded(allow_unused=...) takes True or False*",
        ),
        ('golden("extra")', "flows", "*@pytest.mark.golden takes keyword arguments only*"),
        ("golden(update=True)", "flows", "*@pytest.mark.golden got unknown argument(s) update*"),
    ],
)
def test_marker_arguments_are_checked(
    pytester: pytest.Pytester, marker: str, fixture: str, message: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.{marker}
        def test_it({fixture}):
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    assert result.ret != 0
    result.stdout.fnmatch_lines([message])


# -- ini options name themselves ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("ini", "message"),
    [
        ("flows_all = maybe", "*ini option flows_all: invalid truth value 'maybe'*"),
        ("flows_snapshots = maybe", "*ini option flows_snapshots: invalid truth value*"),
        ("flows_record_mode = bogus", "*ini option flows_record_mode = 'bogus' is not a record*"),
        (
            "flows_allow_hosts = https://api.openai.com/v1",
            "*ini option flows_allow_hosts: https://api.openai.com/v1 is a URL*"
            "flows_allow_hosts = api.openai.com*",
        ),
    ],
)
def test_bad_ini_values_are_refused_naming_the_option(
    pytester: pytest.Pytester, ini: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile("def test_it():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


# -- golden files that do not parse ------------------------------------------------------------
def _golden(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "g.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("runs", "problem"),
    [
        ([{"framework": "no_such_framework"}], "run 1 names the framework 'no_such_framework'"),
        ([{"framework": "crewai"}], "run 1 has no str 'flow'"),
        (
            [{"framework": "crewai", "flow": "m:F", "trace": [], "output": "", "saves": [{}]}],
            "run 1, save 1 lacks one of state_id, index, method, raw",
        ),
        ("nope", "it has no 'runs' list"),
    ],
)
def test_a_damaged_golden_names_the_file_and_how_to_re_record(
    tmp_path: Path, runs: object, problem: str
) -> None:
    path = _golden(tmp_path, {"format": files.FORMAT, "runs": runs})
    with pytest.raises(FlowsUsageError) as raised:
        files.load(path)
    assert str(path) in str(raised.value)
    assert problem in str(raised.value)
    assert "--flows-golden-update" in str(raised.value)


def test_a_missing_golden_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(FlowsUsageError, match=r"no golden file at .*missing\.json"):
        stored_states(tmp_path / "missing.json")


def test_assert_resumes_old_states_refuses_a_number(flows, flow_store) -> None:
    with pytest.raises(FlowsUsageError, match=r"old is the old state model .* got 42"):
        assert_resumes_old_states(flows, flow_store, object, 42)  # type: ignore[arg-type]


def test_a_snapshot_holding_a_secret_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_flows._internal.syrupy_extension import _refuse_secrets

    with pytest.raises(FlowsUsageError, match=r"secret-named fields \(api_key=...\)"):
        _refuse_secrets("workflow.started w inputs={'api_key': 'k-123'}")
    monkeypatch.setenv("ACME_API_KEY", "acme-0123456789")
    with pytest.raises(FlowsUsageError, match=r"\$ACME_API_KEY"):
        _refuse_secrets("output='acme-0123456789'")
    _refuse_secrets("output='nothing secret' token=0.5")
