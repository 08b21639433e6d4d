"""The long random-graph check's open counterexamples (tests/langgraph/soundness_misses,
its README says what each is): a complete search that misses an outcome a seed reaches
under the check's test id. Strict expected failures: each passes once its cause is
fixed, and must then become a plain test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from long_mode import LONG
from random_flows import load

from pytest_flows import FlowsSession, explore
from pytest_flows._internal.exploration.explore import outcome_key

MISSES = Path(__file__).parent / "soundness_misses"
INPUT = {"notes": []}


def check_miss(name: str, seed: int, cap: int) -> None:
    build = load((MISSES / name).read_text(), "build")
    with FlowsSession(test_id="tests::random-graphs") as session:
        found = explore(session, build, INPUT, max_schedules=cap)
    with FlowsSession(seed=seed, test_id="tests::random-graphs") as seeded:
        reached = outcome_key(seeded.run(build(), INPUT, raise_on_error=False))
    assert found.complete, (found.schedules_run, found.caveat)
    assert reached in found.texts, reached


def open_miss(name: str, seed: int, cap: int, why: str, *, long: bool = False) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=f"open (issue 40): {why}")]
    if long:
        marks.append(
            pytest.mark.skipif(not LONG, reason=f"a search of up to {cap} schedules: long mode")
        )
    return pytest.param(name, seed, cap, marks=marks, id=name.removesuffix(".txt"))


@pytest.mark.parametrize(
    ("name", "seed", "cap"),
    [
        open_miss(
            "sibling_cancelled_after_a_failure.txt",
            9,
            150,
            "a sibling not yet started when w0 failed is cancelled; seed 9 cancels w2 and "
            "keeps w1's writes, a complete search of 63 schedules finds both saved only",
        ),
        open_miss(
            "interrupt_lost_after_a_failure.txt",
            1,
            150,
            "seed 1 has w0 end after the failure (writes dropped) and w2's interrupt put "
            "after the runner's last take of the stream (lost); a complete search of 12 "
            "schedules has either, not both",
        ),
        open_miss(
            "two_interrupts_past_two_sleeps.txt",
            2,
            400,
            "seed 2 holds w2 back past two clock moves (w1's 0.02 s and w3's 0.03 s "
            "sleeps) so that w3's interrupt is put first; the search (152 schedules with "
            "the lg:stream key) reverses the two puts' race through one move only",
            long=True,
        ),
    ],
)
def test_a_complete_search_has_what_the_seed_reaches(name: str, seed: int, cap: int) -> None:
    check_miss(name, seed, cap)
