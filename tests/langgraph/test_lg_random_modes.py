"""The random-graph check's two modes, wired as for the other two frameworks
(tests/random_flows.py): in CI a fixed, bounded sample with a cap of 60 schedules and
eight seeds; in the long mode each shard checks graphs no shard has checked (marker
files beside the log), and a graph whose check failed is kept beside the log. The
searches are replaced by a recorder here: what is checked is which graphs are drawn
and how each is handed to the check, not the searches (the drawn test itself runs
them)."""

from __future__ import annotations

from typing import Any

import pytest
import random_flows
import test_lg_explore_random as lg_random
from random_flows import LOG_VAR, Checked

drawn_test = lg_random.test_seeded_outcomes_are_among_a_complete_explorations


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def record(target: Any, args: Any, source: str, **kwargs: Any) -> Checked:
        calls.append({"source": source, "args": args, **kwargs})
        if "fail me" in source:
            raise AssertionError("a counterexample")
        return Checked(complete=True, schedules=1, outcomes=1, seeded=1)

    monkeypatch.setattr(lg_random, "check_sound", record)
    monkeypatch.setattr(random_flows, "_claimed", set())
    return calls


@pytest.mark.skipif(random_flows.LONG, reason="checks the CI mode's sizes")
def test_ci_mode_draws_a_fixed_bounded_sample(recorded, monkeypatch):
    monkeypatch.delenv(LOG_VAR, raising=False)
    drawn_test(shard=0)
    first = [call["source"] for call in recorded]
    assert len(first) == random_flows.EXAMPLES == 3
    assert {call["max_schedules"] for call in recorded} == {random_flows.MAX_SCHEDULES} == {60}
    assert all(call["seeds"] == range(8) for call in recorded)
    assert all(call["test_id"] == "tests::random-graphs" for call in recorded)
    # async graphs are run and searched on the loop, sync ones on threads
    for call in recorded:
        is_async = "async def w0" in call["source"]
        assert call["options"] == ({"asynchronous": True} if is_async else {})
    recorded.clear()
    drawn_test(shard=0)
    assert [call["source"] for call in recorded] == first  # the same sample every run


def test_long_mode_shards_check_distinct_graphs_and_keep_failures(recorded, monkeypatch, tmp_path):
    log = tmp_path / "soundness.jsonl"
    monkeypatch.setenv(LOG_VAR, str(log))
    monkeypatch.setattr(random_flows, "LONG", True)
    drawn_test(shard=0)
    # another shard's worker: its own process (nothing claimed in it), the same log
    monkeypatch.setattr(random_flows, "_claimed", set())
    drawn_test(shard=1)
    sources = [call["source"] for call in recorded]
    assert len(sources) == 2 * random_flows.EXAMPLES
    assert len(set(sources)) == len(sources)  # no graph checked twice
    assert len(list((tmp_path / "soundness.jsonl.flows").iterdir())) == len(sources)

    source_of = lg_random.graph_source

    def failing(spec: Any) -> str:
        return source_of(spec) + "# fail me\n"

    monkeypatch.setattr(lg_random, "graph_source", failing)
    with pytest.raises(AssertionError, match="a counterexample"):
        drawn_test(shard=2)
    kept = (tmp_path / "soundness.jsonl.failures").read_text()
    assert "AssertionError: a counterexample\n" in kept and "# fail me" in kept
    assert "failures kept: 0" not in random_flows._failures(str(log))
