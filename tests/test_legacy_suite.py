"""Last month's suites pass unchanged on today's code, with deprecation warnings only.

tests/legacy_suite/ holds tests written against the first round's pages (and the
second round's before the move to ``pytest_flows._internal``), plus the first
round's own example and snapshot tests copied unchanged with their snapshots (two
snapshots of a persisted run gained its ``state saved`` lines, a change 0.2.0 makes
on purpose and lists in CHANGELOG.md). A
copy runs as a user's project would: its own pytest process, plugin autoload off,
the plugin named with ``-p pytest_flows.plugin``, and its pytest.ini making every
warning an error except the aliases' ``DeprecationWarning`` (and crewai's own).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_flows._internal.deprecation import ALIASES

pytest.importorskip("crewai")

SUITE = Path(__file__).parent / "legacy_suite"
ROOT = SUITE.parents[1]
#: The first round's two hypothesis properties over every crash point take most of the
#: suite's time; examples/crash_resume_pipeline runs them today, this copy runs them
#: with PYTEST_FLOWS_LEGACY_FULL=1.
LONG = (
    "test_ingest_flow.py::test_crash_resume_property",
    "test_ingest_flow.py::test_the_property_catches_the_naive_pipeline",
)


def test_last_months_suites_pass_with_deprecation_warnings_only(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(SUITE, project, ignore=shutil.ignore_patterns("__pycache__"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_FLOWS_LEGACY_SUITE": "1",
    }
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST"):
        env.pop(name, None)
    short = [] if os.environ.get("PYTEST_FLOWS_LEGACY_FULL") else [f"--deselect={t}" for t in LONG]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "syrupy", "-p", "pytest_flows.plugin",
         "-p", "no:cacheprovider", "-q", "-rfE", *short],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    counts = re.search(r"(\d+) passed(, \d+ deselected)?, (\d+) warnings? in", out)
    assert counts is not None, out
    assert int(counts.group(1)) >= 40 - len(short)
    assert " failed" not in out and " error" not in out
    # the warnings are the aliases', each naming the import that replaces it
    used = {module for module in ALIASES if not module.startswith("pytest_flows.agent_framework")}
    missing = [m for m in sorted(used) if f"{m} is deprecated since pytest-flows" not in out]
    assert missing == [], out
    assert "snapshots passed" in out and "snapshot failed" not in out
