"""Exploration is sound on generated Agent Framework workflows (fan-out, shared state,
fan-in): see tests/crewai/test_explore_random.py."""

from __future__ import annotations

from hypothesis import HealthCheck, given, note, settings
from random_flows import LONG, af_source, af_specs, check_sound, load

EXAMPLES = 1000 if LONG else 3
SEEDS = range(16 if LONG else 8)
MAX_SCHEDULES = 400 if LONG else 60


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=not LONG,
    suppress_health_check=list(HealthCheck),
)
@given(spec=af_specs())
def test_seeded_outcomes_are_among_a_complete_explorations(spec: tuple[object, ...]) -> None:
    source = af_source(spec)  # type: ignore[arg-type]
    note(source)
    build = load(source, "build")
    check_sound(build, ("go",), source, seeds=SEEDS, max_schedules=MAX_SCHEDULES, rebuild=build)
