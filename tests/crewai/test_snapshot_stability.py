"""Snapshots are byte-for-byte stable across PYTHONHASHSEED values, pytest-xdist workers,
random test order and scheduler seeds that do not change the order (subprocess runs)."""

from __future__ import annotations

import shutil

import pytest
from crewai_versions import needs_json_default
from long_mode import LONG

FLOWS = """
from crewai.flow.flow import Flow, listen, or_, start
from crewai.flow.persistence import persist
from pydantic import BaseModel


class LedgerState(BaseModel):
    entries: list[str] = []
    tags: set[str] = set()
    total: int = 0


@persist()
class LedgerFlow(Flow[LedgerState]):
    @start()
    def open(self):
        self.state.entries.append("open")
        self.state.tags |= {"zeta", "alpha", "mu", "beta", "kappa", "omega"}
        return sorted(self.state.tags)

    @listen(open)
    def add(self, _):
        self.state.total += 5
        return {"total": self.state.total, "tags": len(self.state.tags)}

    @listen(add)
    def close(self, _):
        self.state.entries.append("close")
        return "closed"


class SyncRace(Flow):
    @start()
    def kick(self):
        return "go"

    @listen(kick)
    def alpha(self, _):
        return "alpha"

    @listen(kick)
    def beta(self, _):
        return "beta"

    @listen(kick)
    def gamma(self, _):
        return "gamma"

    @listen(or_(alpha, beta, gamma))
    def crown(self, value):
        return value
"""

TESTS = """
from stable_flows import LedgerFlow, SyncRace

from pytest_flows import explore
from pytest_flows._internal.snapshot import checkpoint_round_trip


def test_trace(flows, snapshot):
    assert flows.run(LedgerFlow).trace == snapshot


def test_run(flows, snapshot):
    assert flows.run(LedgerFlow) == snapshot


def test_history(flows, flow_store, snapshot):
    run = flows.run(LedgerFlow)
    assert flow_store.history(run.state.id) == snapshot


def test_checkpoint_round_trip(flows, flow_store, snapshot):
    assert checkpoint_round_trip(flows, flow_store, LedgerFlow, checkpoint=0) == snapshot


def test_race_outcomes(flows, snapshot):
    assert explore(flows, SyncRace, seeds=range(10)) == snapshot
"""


def _project(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(stable_flows=FLOWS, test_stable=TESTS)


def _snapshot_bytes(pytester: pytest.Pytester) -> bytes:
    return (pytester.path / "__snapshots__" / "test_stable.ambr").read_bytes()


@needs_json_default
def test_snapshots_are_byte_identical_across_hash_seeds_workers_and_orders(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester)

    # Written first in this process (its own hash seed: random unless set), ...
    serial = pytester.runpytest_inprocess("--snapshot-update", "-p", "no:randomly")
    serial.assert_outcomes(passed=5)
    written = _snapshot_bytes(pytester)
    text = written.decode()
    assert '"alpha", "beta", "kappa", "mu", "omega", "zeta"' in text  # sets: sorted
    assert "or(alpha, beta, gamma): won" in text

    # Written from scratch under another hash seed, random order and another
    # scheduler seed (one that does not change the order), and in the long mode by
    # two xdist workers (three interpreters): the same bytes, so every snapshot of
    # the first run matches there too.
    shutil.rmtree(pytester.path / "__snapshots__")
    monkeypatch.setenv("PYTHONHASHSEED", "4242")
    workers = ["-n", "2"] if LONG else ["-p", "no:xdist"]
    rewritten = pytester.runpytest_subprocess(
        "--snapshot-update", *workers, "-p", "randomly", "--randomly-seed=99", "--flows-seed=3"
    )
    rewritten.assert_outcomes(passed=5)
    assert _snapshot_bytes(pytester) == written
