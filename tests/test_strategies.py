"""Framework-neutral parts of flow state testing: strategies, the codec helpers, the store."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.runtime.loop import Scheduler
from pytest_flows._internal.state.codec import (
    diff_snapshots,
    differences,
    find_unserializable,
    format_path,
)
from pytest_flows._internal.state.store import FlowStore
from pytest_flows._internal.state.store_records import (
    CheckpointNotFoundError,
    CrashPoint,
    InvalidStateIdError,
    SimulatedCrash,
    StoreCorruptedError,
)
from pytest_flows._internal.state.strategies import (
    crash_points,
    reseeded,
    runtime_view,
    scheduler_seeds,
)
from pytest_flows._internal.trace import Trace, TraceEvent


# -- strategies ---------------------------------------------------------------------
def test_crash_points_shrink_to_right_after_the_first_save():
    assert find(crash_points(5), lambda p: True) == CrashPoint(save=1, when="after")
    assert find(crash_points(5), lambda p: p.save >= 3) == CrashPoint(save=3, when="after")
    assert find(crash_points(5, when=("before",)), lambda p: True).when == "before"


@given(crash_points(4))
@settings(max_examples=30, deadline=None, database=None)
def test_crash_points_stay_within_the_run(point):
    assert 1 <= point.save <= 4
    assert point.when in ("after", "before")


def test_crash_points_of_a_run_that_saved_nothing_is_a_usage_error():
    with pytest.raises(FlowsUsageError, match="@persist"):
        crash_points(0)
    with pytest.raises(FlowsUsageError, match="pass 'after', 'before'"):
        crash_points(3, when=())


def test_scheduler_seeds_shrink_to_the_runtime_order():
    assert find(scheduler_seeds(), lambda s: True) == 0
    with pytest.raises(FlowsUsageError):
        scheduler_seeds(-1)


def test_crash_point_validation_and_text():
    assert str(CrashPoint(2, "before")) == "before save 2"
    for bad in (0, -1, True, 1.5):
        with pytest.raises(FlowsUsageError, match="whole number >= 1"):
            CrashPoint(bad)  # type: ignore[arg-type]
    with pytest.raises(FlowsUsageError, match="'after'"):
        CrashPoint(1, "during")  # type: ignore[arg-type]


def test_reseeded_swaps_the_seed_for_the_block_and_restores_it():
    scheduler = Scheduler(seed=0)
    with reseeded(scheduler, 7):
        assert scheduler.seed == 7
        inside = [scheduler.choose(10) for _ in range(5)]
    assert scheduler.seed == 0
    assert [scheduler.choose(10) for _ in range(5)] == [0] * 5
    with reseeded(scheduler, 7):
        assert [scheduler.choose(10) for _ in range(5)] == inside  # same seed, same stream
    with reseeded(scheduler, None):
        assert scheduler.seed == 0


def test_runtime_view_keeps_what_the_flow_did():
    trace = Trace.of(
        [
            TraceEvent(kind="flow.started", name="F", fields=(("inputs", "{}"),)),
            TraceEvent(kind="state.restored", name="a", fields=(("mode", "resume"),)),
            TraceEvent(kind="method.started", name="b", fields=(("trigger", "a (resumed)"),)),
            TraceEvent(kind="method.finished", name="b", fields=(("output", "1"),)),
            TraceEvent(kind="checkpoint.saved", name="x", fields=(("n", "1"),)),
            TraceEvent(kind="flow.finished", name="F", fields=(("output", "1"),)),
        ]
    )
    assert runtime_view(trace) == [
        "method started b",
        "method finished b output=1",
        "flow finished F output=1",
    ]


# -- codec helpers -------------------------------------------------------------------
def test_find_unserializable_names_the_deepest_field():
    def probe(value: object) -> str:
        return json.dumps(value)

    where = find_unserializable({"a": [1, {"b": {1, 2}}]}, probe, root="state")
    assert where is not None
    assert where.path == "state.a[1].b"
    assert where.describe() == "field 'state.a[1].b' holds a value of type set ({1, 2})"

    key = find_unserializable({"ok": {(1, 2): "x"}}, probe)
    assert key is not None and key.is_key and key.path == "ok[(1, 2)]"

    loop: list[object] = []
    loop.append(loop)
    cycle = find_unserializable({"loop": loop}, probe)
    assert cycle is not None and cycle.reason == "reference cycle"
    assert find_unserializable({"fine": [1, "2"]}, probe) is None


def test_differences_report_type_changes_per_field():
    when = dt.datetime(2025, 1, 1)
    changes = differences(
        {"when": when, "pair": (1, 2), "n": 1, "gone": 1, "keys": {1: "a"}},
        {"when": when.isoformat(), "pair": [1, 2], "n": 1.0, "keys": {"1": "a"}, "new": 2},
    )
    described = [c.describe() for c in changes]
    assert described[0].startswith("when: datetime.datetime came back as str")
    assert described[1].startswith("pair: tuple came back as list")
    assert described[2].startswith("n: int came back as float")
    assert described[3] == "gone: int was lost (1)"
    assert described[4].startswith("keys[1] (key): int came back as str")
    assert described[5] == "new: appeared (int 2)"
    assert differences({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []
    assert differences(float("nan"), float("nan")) == []


def test_diff_snapshots_is_one_line_per_field():
    before = {"id": "1", "counter": 1, "log": ["a"], "scratch": 3}
    after = {"id": "2", "counter": 2, "log": ["a", "b"]}
    assert diff_snapshots(before, after, ignore=("id",)) == (
        "~ counter: 1 -> 2\n- scratch: 3\n+ log[1]: 'b'\n"
    )
    assert diff_snapshots(before, before) == ""


def test_format_path():
    assert format_path(("a", 0)) == "a[0]"
    assert format_path(("a", "b c"), root="state") == "state.a['b c']"
    assert format_path(()) == "<root>"


# -- the store without a framework ------------------------------------------------------
def test_history_latest_and_ids():
    store = FlowStore()
    store.append_save("a", "one", '{"id": "a", "n": 1}')
    store.append_save("b", "one", '{"id": "b", "n": 1}')
    store.append_save("a", "two", '{"id": "a", "n": 2}')
    assert store.ids == ["a", "b"]
    assert store.methods("a") == ["one", "two"]
    assert store.latest("a").snapshot == {"id": "a", "n": 2}  # type: ignore[union-attr]
    assert [s.index for s in store.history("a")] == [1, 2]
    assert store.diff(store.history("a")[0], store.history("a")[1]) == "~ n: 1 -> 2\n"


def test_corruption_is_local_to_one_record():
    store = FlowStore()
    store.append_save("a", "one", '{"id": "a", "n": 1}')
    store.append_save("a", "two", '{"id": "a", "n": 2}')
    store.append_save("b", "one", '{"id": "b", "n": 1}')
    store.tamper("a", lambda raw: raw[:5])
    with pytest.raises(StoreCorruptedError, match=r"save 2 of state id 'a' \(after 'two'\)"):
        _ = store.latest("a").snapshot  # type: ignore[union-attr]
    assert store.history("a")[0].snapshot["n"] == 1
    assert store.latest("b").snapshot["n"] == 1  # type: ignore[union-attr]
    with pytest.raises(FlowsUsageError, match="no state id or checkpoint 'zzz'"):
        store.tamper("zzz", "{}")
    store.tamper(store.history("a")[0], "[1, 2]")
    with pytest.raises(StoreCorruptedError, match="not an object of state fields"):
        _ = store.history("a")[0].snapshot


@pytest.mark.parametrize("bad", ["a/b", "..\\x", "..", "", "x\x00y", None])
def test_unsafe_ids_are_refused(bad):
    with pytest.raises(InvalidStateIdError, match="refuses state id"):
        FlowStore.check_id(bad)
    assert FlowStore.check_id("order-42") == "order-42"
    assert FlowStore.check_id(42) == "42"


def test_crash_at_stops_on_the_chosen_save_and_disarms():
    store = FlowStore()
    with store.crash_at(CrashPoint(2, "before")):
        store.append_save("a", "one", '{"id": "a"}')
        with pytest.raises(SimulatedCrash) as crash:
            store.append_save("a", "two", '{"id": "a"}')
    assert crash.value.state_id == "a" and crash.value.point == CrashPoint(2, "before")
    assert store.methods("a") == ["one"]  # "before": the save never landed
    store.append_save("a", "three", '{"id": "a"}')  # disarmed
    with store.crash_at(CrashPoint(1)), pytest.raises(SimulatedCrash):
        store.append_save("a", "four", '{"id": "a"}')
    assert store.methods("a") == ["one", "three", "four"]  # "after": it landed


def test_checkpoint_records_lineage_and_pruning():
    store = FlowStore()
    for n, parent in enumerate([None, "c1", "c2"], start=1):
        store.add_checkpoint(
            id=f"c{n}", location=f"loc/c{n}", parent_id=parent, branch="main", trigger="t", raw="{}"
        )
    store.add_checkpoint(
        id="f1", location="loc/f1", parent_id="c1", branch="fork", trigger="t", raw="{}"
    )
    assert [c.id for c in store.lineage("f1")] == ["c1", "f1"]
    assert [c.id for c in store.lineage(3)] == ["c1", "c2", "c3"]
    assert store.branches() == ["main", "fork"]
    assert store.find_checkpoint("loc/c2").id == "c2"  # type: ignore[union-attr]
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint 'nope'"):
        store.checkpoint("nope")
    assert store.prune_checkpoints("", "main", 1) == 2
    assert [c.id for c in store.checkpoints()] == ["c3", "f1"]


def test_unread_checkpoint_failures_fail_verify():
    store = FlowStore()
    store.verify()
    store.note_checkpoint_failure("checkpoint on x: field 'state.a' ...")
    with pytest.raises(AssertionError, match="1 checkpoint"):
        store.verify()
    assert store.checkpoint_failures() == ["checkpoint on x: field 'state.a' ..."]
    store.verify()


def test_importing_the_neutral_modules_does_not_import_a_framework():
    code = (
        "import sys, pytest_flows, pytest_flows._internal.plugin, "
        "pytest_flows._internal.state.store, pytest_flows._internal.state.strategies, "
        "pytest_flows._internal.state.codec; "
        "assert 'crewai' not in sys.modules and 'agent_framework' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=5))
@settings(max_examples=40, deadline=None, database=None)
def test_json_native_states_round_trip_without_differences(state):
    assert differences(state, json.loads(json.dumps(state))) == []
