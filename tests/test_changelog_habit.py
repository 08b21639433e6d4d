"""CHANGELOG.md keeps up with what users' committed files depend on (issue 44).

Users commit golden files, trace snapshots, flight records and coverage data; each
has a version constant, and CHANGELOG.md must name the current one ("golden format
2"), so a bump without an entry fails here. The trace's text has no file of its own
to carry a version, so a run's trace is pinned to TRACE_FORMAT: a change to any line's
text fails here until the constant is raised, the new text pinned and the change
written under the changelog's "Trace snapshot format" heading with the update command.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_flows._internal.coverage.data import FORMAT as COVERAGE_FORMAT
from pytest_flows._internal.flight.format import VERSION as FLIGHT_VERSION
from pytest_flows._internal.golden.versions import FORMAT as GOLDEN_FORMAT
from pytest_flows._internal.trace import TRACE_FORMAT

CHANGELOG = (Path(__file__).parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")

#: what users commit -> (its version today, where the constant lives)
VERSIONED = {
    "golden format": (GOLDEN_FORMAT, "pytest_flows/_internal/golden/versions.py FORMAT"),
    "trace format": (TRACE_FORMAT, "pytest_flows/_internal/trace.py TRACE_FORMAT"),
    "flight record version": (FLIGHT_VERSION, "pytest_flows/_internal/flight/format.py VERSION"),
    "coverage data format": (COVERAGE_FORMAT, "pytest_flows/_internal/coverage/data.py FORMAT"),
}


def unreleased() -> str:
    """The changelog's newest section (what the next release says)."""
    sections = re.split(r"^## ", CHANGELOG, flags=re.M)
    return sections[1]


@pytest.mark.parametrize("what", sorted(VERSIONED))
def test_the_changelog_names_each_committed_formats_current_version(what: str) -> None:
    version, where = VERSIONED[what]
    spelled = r"\s+".join([*what.split(), str(version)])  # a line may wrap anywhere
    assert re.search(rf"\b{spelled}\b", CHANGELOG, flags=re.I), (
        f"{where} is {version}, and CHANGELOG.md does not say '{what} {version}': add an "
        "entry under Changed saying what changed for files users committed, and what to do."
    )


def test_trace_snapshot_changes_have_a_heading_with_the_update_command() -> None:
    section = unreleased()
    heading = re.search(r"^### Trace snapshot format\n(.*?)(?=^### |\Z)", section, re.M | re.S)
    assert heading, "CHANGELOG.md's newest section has no '### Trace snapshot format' heading"
    assert f"trace format {TRACE_FORMAT}" in heading.group(1)
    assert "--snapshot-update" in heading.group(1)


#: The trace of the flow below, per TRACE_FORMAT. A new format pins its text here.
PINNED = {
    2: [
        "flow started Pinned",
        "method started begin trigger=start",
        "method finished begin output='<uuid:1>'",
        "method started left trigger=begin",
        "method started right trigger=begin",
        'method finished left output={"n": 2, "text": "' + "x" * 101 + "…",
        "method finished right output=None",
        "flow finished Pinned output=None",
    ],
}


@pytest.mark.flows(seed=0)  # the text, not an interleaving, is what is pinned
def test_a_runs_trace_text_is_pinned_to_the_trace_format(flows) -> None:
    pytest.importorskip("crewai")
    import uuid

    from crewai.flow.flow import Flow, listen, start

    class Pinned(Flow):  # type: ignore[misc,type-arg]
        @start()
        def begin(self) -> str:
            return str(uuid.uuid4())

        @listen(begin)
        def left(self) -> dict[str, object]:
            return {"n": 2, "text": "x" * 300}

        @listen(begin)
        def right(self) -> None:
            return None

    lines = flows.run(Pinned).trace.lines()

    assert lines == PINNED[TRACE_FORMAT], (
        "the trace's text changed, so users' trace snapshots will: raise TRACE_FORMAT "
        "(pytest_flows/_internal/trace.py), pin the new text in PINNED, and say what "
        "changed under CHANGELOG.md's '### Trace snapshot format' heading (with "
        "'trace format N' and `pytest --snapshot-update`)."
    )
