"""Exploration is sound on generated Agent Framework workflows (fan-out, shared state,
fan-in): see tests/crewai/test_explore_random.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from random_flows import (
    MAX_SCHEDULES,
    SEEDS,
    SHARDS,
    SOUNDNESS_SETTINGS,
    af_source,
    af_specs,
    check_drawn,
    check_sound,
    load,
)


@pytest.mark.parametrize("shard", range(SHARDS))
@SOUNDNESS_SETTINGS
@given(spec=af_specs())
def test_seeded_outcomes_are_among_a_complete_explorations(
    shard: int, spec: tuple[object, ...]
) -> None:
    source = af_source(spec)  # type: ignore[arg-type]

    def check() -> None:
        build = load(source, "build")
        check_sound(build, ("go",), source, seeds=SEEDS, max_schedules=MAX_SCHEDULES, rebuild=build)

    check_drawn(source, check)
