"""Exploration is sound on flows nobody here wrote: generated CrewAI flows.

For each drawn flow: every outcome seeds 0..7 reach is among the outcomes of a complete
exploration, and every explored outcome replays from its schedule. A failure shrinks
to a minimal flow and prints it as Python source. ``PYTEST_FLOWS_LONG=1`` runs over 1,000
distinct larger flows with 16 seeds each, in 4 shards (see docs/contributing.md and
docs/exploration.md); CI checks a bounded sample.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from random_flows import (
    MAX_SCHEDULES,
    SEEDS,
    SHARDS,
    SOUNDNESS_SETTINGS,
    check_drawn,
    check_sound,
    crewai_source,
    crewai_specs,
    load,
)


@pytest.mark.parametrize("shard", range(SHARDS))
@SOUNDNESS_SETTINGS
@given(spec=crewai_specs())
def test_seeded_outcomes_are_among_a_complete_explorations(
    shard: int, spec: tuple[object, ...]
) -> None:
    source = crewai_source(spec)  # type: ignore[arg-type]
    check_drawn(
        source,
        lambda: check_sound(
            load(source, "Generated"), (), source, seeds=SEEDS, max_schedules=MAX_SCHEDULES
        ),
    )
