"""The long mode's random-flow checks count distinct flows: a flow a shard (or another
shard's worker) has checked is rejected, and one whose check failed is let go so that
hypothesis can replay it, and kept beside the log (tests/random_flows.py)."""

from __future__ import annotations

import pytest
import random_flows
from random_flows import LOG_VAR, already_checked, checking


def test_a_flow_is_claimed_once_across_workers_and_let_go_when_its_check_fails(
    tmp_path, monkeypatch
):
    monkeypatch.setenv(LOG_VAR, str(tmp_path / "soundness.jsonl"))
    monkeypatch.setattr(random_flows, "_claimed", set())
    assert not already_checked("flow A")
    assert already_checked("flow A")
    markers = list((tmp_path / "soundness.jsonl.flows").iterdir())
    assert [m.read_text() for m in markers] == ["flow A"]  # a hung check's source stays
    # another worker: its own process, the same log
    monkeypatch.setattr(random_flows, "_claimed", set())
    assert already_checked("flow A")
    assert not already_checked("flow B")
    with pytest.raises(AssertionError), checking("flow B"):
        raise AssertionError("a counterexample")
    assert not already_checked("flow B")  # hypothesis replays it: not rejected
    kept = (tmp_path / "soundness.jsonl.failures").read_text()
    assert "AssertionError: a counterexample\nflow B" in kept  # a stopped run keeps it
    with checking("flow B"):
        pass
    assert already_checked("flow B")


def test_without_a_log_the_process_remembers(monkeypatch):
    monkeypatch.delenv(LOG_VAR, raising=False)
    monkeypatch.setattr(random_flows, "_claimed", set())
    assert not already_checked("flow C")
    assert already_checked("flow C")


def test_keep_going_keeps_a_failed_check_and_goes_on(tmp_path, monkeypatch):
    # the long mode's survey (PYTEST_FLOWS_SOUNDNESS_KEEP_GOING=1): a counterexample is
    # kept beside the log and the flow stays claimed; hypothesis draws the next flow
    monkeypatch.setenv(LOG_VAR, str(tmp_path / "soundness.jsonl"))
    monkeypatch.setattr(random_flows, "_claimed", set())
    monkeypatch.setattr(random_flows, "KEEP_GOING", True)
    assert not already_checked("flow D")
    with checking("flow D"):
        raise AssertionError("a counterexample")
    assert already_checked("flow D")  # checked: not drawn again
    kept = (tmp_path / "soundness.jsonl.failures").read_text()
    assert "AssertionError: a counterexample\nflow D" in kept
    assert random_flows._failures(str(tmp_path / "soundness.jsonl")).startswith(
        "failures kept: 1 distinct flows (1 checks)"
    )
    with pytest.raises(RuntimeError), checking("flow E"):  # not a soundness failure
        raise RuntimeError("the harness broke")
