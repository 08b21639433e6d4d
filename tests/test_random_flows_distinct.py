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
