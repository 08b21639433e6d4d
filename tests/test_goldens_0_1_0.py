"""Goldens recorded by pytest-flows 0.1.0 replay clean on today's code; a real change of
the flow still breaks them (issue 44).

tests/goldens_0_1_0/ holds a suite and the golden files 0.1.0's code recorded for it
(its README says how): a crewAI ``@human_feedback`` run that pauses, an Agent
Framework workflow whose agents' tool calls wait for approval, and one with a
sub-workflow. A copy runs as the upgraded user's project would: its own pytest
process, without ``--flows-golden-update``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("crewai")
pytest.importorskip("agent_framework")

SUITE = Path(__file__).parent / "goldens_0_1_0"
ROOT = SUITE.parents[1]
GOLDENS = SUITE / "__goldens__" / "test_old_goldens"


def run_suite(project: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PYTEST_FLOWS_OLD_GOLDENS": "1",
    }
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-q", "-rfE", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return done.stdout + done.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(SUITE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_fixtures_were_recorded_by_0_1_0_and_hold_what_it_wrote_differently() -> None:
    texts = {p.name: p.read_text(encoding="utf-8") for p in GOLDENS.glob("*.json")}
    assert len(texts) == 4
    assert all('"format": 1' in text for text in texts.values())
    # what today's code writes differently (what the replay must not call a break)
    paused = texts["test_a_purchase_waits_for_the_manager.json"]
    assert re.search(r"HumanFeedbackPending\(.*flow '[0-9a-f]{8}-", paused)
    assert "occ-call-2-1" in texts["test_approved_bookings_run_the_tools.json"]
    assert (
        "  workflow started"
        not in texts["test_a_sub_workflow_request_is_answered_by_a_person.json"]
    )


def test_goldens_recorded_by_0_1_0_replay_clean_on_todays_code(project: Path) -> None:
    out = run_suite(project)

    assert re.search(r"\b4 passed\b", out), out
    assert "failed" not in out, out


def test_a_real_change_of_each_flow_still_breaks_its_old_golden(project: Path) -> None:
    # Changes the tests do not assert on: only the golden can see them.
    edit(
        project / "old_approvals.py", "return self.state.amount\n", "return self.state.amount * 2\n"
    )
    edit(
        project / "old_bookings.py", '"Book the trip to {city}."', '"Please book a trip to {city}."'
    )
    edit(project / "old_email_validation.py", '"domain approved"', '"domain allowed"')

    out = run_suite(project)

    assert re.search(r"\b4 failed\b", out), out
    for test in (
        "test_a_purchase_waits_for_the_manager",
        "test_bookings_wait_for_approval",
        "test_approved_bookings_run_the_tools",
        "test_a_sub_workflow_request_is_answered_by_a_person",
    ):
        assert f"FAILED test_old_goldens.py::{test}" in out, out
    # One report per failing test, at the start of a line: the short summary's
    # "FAILED ... - GoldenMismatch: golden replay: ..." lines hold it too where the
    # terminal is wide enough (CI's is), so they are not counted.
    assert len(re.findall(r"^golden replay: ", out, re.MULTILINE)) == 4, out
    assert "[behaviour]" in out
    assert "-method finished price output=1200" in out
    assert "+method finished price output=2400" in out
    assert "Please book a trip to Oslo." in out
    assert "domain allowed" in out
