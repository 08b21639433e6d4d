"""Same test and seed, same LangGraph ids and trace: in another process, under another
hash seed, after other tests; and the id sources are reset per test."""

from __future__ import annotations

import json
from pathlib import Path

import lg_graphs
import pytest

pytest_plugins = ["pytester"]

HERE = Path(__file__).parent

PROJECT = """
import json, os

import lg_graphs
from langgraph.types import Command


def test_another_graph_first(flows):
    flows.run(lg_graphs.parallel_builder(3), {"notes": []})
    flows.run(lg_graphs.doubler, [5])


def test_target(flows, human):
    human.answer("yes")
    graph = lg_graphs.tour_builder().compile()
    run = flows.run(graph, {"notes": [], "x": 1})
    saved = run.graph.checkpointer.get_tuple(run.config)
    history = [s.created_at for s in run.graph.get_state_history(run.config)]
    out = {
        "trace": run.trace.render(),
        "checkpoints": run.checkpoints,
        "versions": saved.checkpoint["channel_versions"],
        "created_at": history,
        "interrupts": [h.request.data["interrupt_id"] for h in human.requests],
    }
    with open(os.environ["LG_OUT"], "a") as f:
        f.write(json.dumps(out, sort_keys=True) + "\\n")
"""


def _run(pytester, monkeypatch, out, hash_seed, *select):
    monkeypatch.setenv("PYTHONHASHSEED", hash_seed)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    monkeypatch.setenv("LG_OUT", str(out))
    result = pytester.runpytest_subprocess("-p", "pytest_flows.plugin", "-q", *select)
    result.assert_outcomes(passed=2 if not select else 1)


def test_ids_and_trace_are_the_same_bytes_across_processes_hash_seeds_and_order(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_project=PROJECT)
    out = pytester.path / "out.jsonl"
    _run(pytester, monkeypatch, out, "0", "-k", "test_target")
    _run(pytester, monkeypatch, out, "4242")  # another test's graphs run first
    _run(pytester, monkeypatch, out, "17", "-k", "test_target")
    first, *others = out.read_text().splitlines()
    assert others == [first, first]
    data = json.loads(first)
    # c1..c4 before the interrupt, c5 after the answer (c4 is loaded, not saved, again)
    assert len(data["checkpoints"]) == 5 and len(set(data["checkpoints"])) == 5
    # timestamps tick: newest first, never two alike (time travel orders by them)
    assert data["created_at"] == sorted(set(data["created_at"]), reverse=True)


def _clock_part(checkpoint_id: str) -> str:
    """The time and step of a uuid6 checkpoint id (its last 12 digits are seeded per test)."""
    return checkpoint_id[:23]


def test_two_identical_tests_mint_ids_from_the_same_clock(flows):
    # The uuid6 guard is emptied per test: without it the second test's ids would
    # continue after the first's (...-6007 where the first had ...-6003).
    run = flows.run(lg_graphs.parallel_builder(2), {"notes": []})
    _seen.append([_clock_part(c) for c in run.checkpoints])
    assert len(_seen) < 2 or _seen[0] == _seen[1]


test_two_identical_tests_mint_ids_from_the_same_clock_again = (
    test_two_identical_tests_mint_ids_from_the_same_clock
)
_seen: list[list[str]] = []


def test_checkpoint_ids_follow_a_thread_stored_under_a_later_clock(flows):
    # A thread stored under a later clock than the test's virtual epoch (production's)
    # is continued: new ids sort after the stored ones, or LangGraph (latest = greatest
    # id) would see the thread unchanged after the run.
    from langgraph.types import Command

    from pytest_flows.langgraph import _ids

    run = flows.run(lg_graphs.tour_builder(), {"notes": [], "x": 1})
    stored = "1f9a0000-0000-6000-8000-000000000000"  # a uuid6 of 2031
    _ids.ids_after([stored])
    resumed = flows.run(lg_graphs.tour_builder(), Command(resume="yes"), config=run.config)
    assert resumed.status == "finished"
    assert resumed.checkpoints and all(c > stored for c in resumed.checkpoints)
    assert resumed.get_state().values["notes"][-1] == "answer=yes"


def test_another_seed_mints_other_random_bits_on_the_same_clock():
    from pytest_flows import FlowsSession

    minted = {}
    for seed in (0, 0, 3):
        with FlowsSession(seed=seed, test_id="ids") as flows:
            run = flows.run(lg_graphs.parallel_builder(2), {"notes": []})
        minted.setdefault(seed, []).append(run.checkpoints)
    assert minted[0][0] == minted[0][1]
    assert [_clock_part(c) for c in minted[3][0]] == [_clock_part(c) for c in minted[0][0]]
    assert minted[3][0] != minted[0][0]
