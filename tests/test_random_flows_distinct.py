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


def test_a_check_that_runs_too_long_leaves_every_threads_stack_named_by_its_flow(
    tmp_path, monkeypatch
):
    # The long run of 2026-12-06 had one check hang with nothing to tell which flow or
    # where (a CPython deadlock under sys._current_frames(): runtime/frames.py). Now a
    # check past HANG_SECONDS dumps every thread's stack beside the log and ends its
    # worker. The timer is faulthandler's; here it fires at once (no real wait), and
    # without ending the process.
    import faulthandler

    log = tmp_path / "soundness.jsonl"
    monkeypatch.setenv(LOG_VAR, str(log))
    armed: list[tuple[float, bool]] = []

    def fire_now(timeout, *, exit=False, file=None, repeat=False):
        armed.append((timeout, exit))
        faulthandler.dump_traceback(file=file, all_threads=True)

    monkeypatch.setattr(faulthandler, "dump_traceback_later", fire_now)
    with random_flows.hang_watch("flow H", 7, end=False):
        pass
    assert armed == [(7, False)]
    (hung,) = (tmp_path / "soundness.jsonl.hangs").iterdir()
    text = hung.read_text()
    digest = random_flows._digest("flow H")
    assert hung.name == f"{digest}.txt"
    assert text.startswith(f"the check of flow {digest} ran over 7 s (its source: ")
    assert "test_a_check_that_runs_too_long" in text  # this thread's stack, named
    assert "hung checks: 1" in random_flows._failures(str(log))


def test_a_check_that_ends_in_time_leaves_no_stack_and_ends_no_worker(tmp_path, monkeypatch):
    import faulthandler

    log = tmp_path / "soundness.jsonl"
    monkeypatch.setenv(LOG_VAR, str(log))
    calls: list[str] = []
    monkeypatch.setattr(faulthandler, "dump_traceback_later", lambda *a, **k: calls.append("arm"))
    monkeypatch.setattr(faulthandler, "cancel_dump_traceback_later", lambda: calls.append("off"))
    with random_flows.hang_watch("flow I"):
        # while it runs, its file (no stack yet) is no hung check
        assert "hung" not in random_flows._failures(str(log))
    assert calls == ["arm", "off"]
    assert list((tmp_path / "soundness.jsonl.hangs").iterdir()) == []
    assert "hung" not in random_flows._failures(str(log))
