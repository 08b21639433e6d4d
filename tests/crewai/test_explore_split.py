"""A search split by schedule prefix across xdist workers finds what the whole finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from explore_flows import CheckThenWrite

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.errors import FlowsUsageError

pytest_plugins = ["pytester"]

FLOWS = Path(__file__).parent

# The documented pattern: one test per option of the first choice point, each exploring
# its part; here each part (and the unsplit search) writes what it found to a file.
PARTS = """
import json, sys
sys.path.insert(0, {here!r})
import pytest
from explore_flows import CheckThenWrite
from pytest_flows import explore

def _write(name, found, worker_id, **extra):
    assert found.complete
    with open({out!r} + f"/{{name}}.json", "w") as f:
        json.dump({{"worker": worker_id, "texts": found.texts, **extra}}, f)

@pytest.mark.parametrize("first", range(2))
def test_part(flows, first, worker_id):
    _write(f"part{{first}}", explore(flows, CheckThenWrite, prefix=f"s{{first}}"), worker_id)

def test_whole(flows, worker_id):
    options = flows.run(CheckThenWrite, schedule="s").extras["chooser"].choices[0].options
    _write("whole", explore(flows, CheckThenWrite), worker_id, options=len(options))
"""


def test_the_parts_of_a_split_search_find_what_the_whole_finds(flows: FlowsSession) -> None:
    options = flows.run(CheckThenWrite, schedule="s").extras["chooser"].choices[0].options
    assert len(options) == 2  # the parts cover the first choice point's options
    whole = explore(flows, CheckThenWrite)
    parts = [explore(flows, CheckThenWrite, prefix=f"s{first}") for first in range(2)]
    assert whole.complete and all(part.complete for part in parts)
    assert sorted({t for part in parts for t in part.texts}) == whole.texts
    assert len(whole.texts) == 4


# CI: the test above, in one process (xdist here starts three interpreters).
@pytest.mark.long
def test_parts_explored_on_two_workers_find_what_the_whole_finds(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_parts=PARTS.format(here=str(FLOWS), out=str(tmp_path)))
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-n", "2")
    result.assert_outcomes(passed=3)

    whole = json.loads((tmp_path / "whole.json").read_text())
    assert whole["options"] == 2  # the parts cover the first choice point's options
    parts = [json.loads((tmp_path / f"part{i}.json").read_text()) for i in range(2)]
    assert len({p["worker"] for p in [*parts, whole]}) == 2  # spread over both workers
    assert sorted({t for p in parts for t in p["texts"]}) == whole["texts"]
    assert len(whole["texts"]) == 4


def test_a_prefix_beyond_the_first_choice_point_says_so(flows: FlowsSession) -> None:
    with pytest.raises(FlowsUsageError, match=r"'sz' does not fit this run: choice point 1"):
        explore(flows, CheckThenWrite, prefix="sz")
