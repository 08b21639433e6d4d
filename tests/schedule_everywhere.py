"""A schedule replays the same outcome in any session: the test's own, a FlowsSession
opened inside the test under another test id and seed (nested), and another process
(issue 44). Used by the crewAI and Agent Framework schedule-session tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_flows import FlowsSession
from pytest_flows._internal.exploration.explore import Exploration, outcome_key

ROOT = Path(__file__).parents[1]
#: (test id, seed) of the nested sessions: another test, other seeds, and this test's own.
ELSEWHERE = (("tests/elsewhere.py::test_other", 0), ("tests/elsewhere.py::test_other", 7))

_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import importlib
from pytest_flows import FlowsSession
from pytest_flows._internal.exploration.explore import outcome_key
module, name, factory = sys.argv[2], sys.argv[3], sys.argv[4] == "factory"
target = getattr(importlib.import_module(module), name)
inputs = json.loads(sys.argv[5])
found = {}
with FlowsSession(test_id="a subprocess::test", seed=11) as flows:
    for schedule in json.loads(sys.argv[6]):
        run = flows.run(target() if factory else target, *inputs, schedule=schedule,
                        raise_on_error=False)
        found[schedule] = outcome_key(run)
print("OUTCOMES=" + json.dumps(found))
"""


def _run(session: FlowsSession, make: Callable[[], Any], inputs: tuple[Any, ...], s: str) -> str:
    return outcome_key(session.run(make(), *inputs, schedule=s, raise_on_error=False))


def assert_schedules_replay_everywhere(
    flows: FlowsSession,
    found: Exploration,
    make: Callable[[], Any],
    *inputs: Any,
    where: tuple[Path, str, str, bool],
) -> None:
    """Each outcome's schedule gives that outcome in this session, in nested sessions of
    other test ids and seeds, and in a fresh process. ``where``: (directory, module,
    name, whether the name is a factory) of the target for the subprocess."""
    assert len(found.outcomes) > 1, "a flow with one outcome shows nothing here"
    expected = {o.schedule: o.text for o in found.outcomes}
    for schedule, text in expected.items():
        assert _run(flows, make, inputs, schedule) == text
        for test_id, seed in (*ELSEWHERE, (flows.test_id, 3)):
            with FlowsSession(test_id=test_id, seed=seed) as nested:
                got = _run(nested, make, inputs, schedule)
            assert got == text, (schedule, test_id, seed)
    folder, module, name, factory = where
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)])}
    env.pop("PYTEST_CURRENT_TEST", None)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(folder), module, name, "factory" if factory else "",
         json.dumps(list(inputs)), json.dumps(list(expected))],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    line = [x for x in done.stdout.splitlines() if x.startswith("OUTCOMES=")]
    assert line, done.stdout + done.stderr
    assert json.loads(line[0].removeprefix("OUTCOMES=")) == expected
