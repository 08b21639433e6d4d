"""Two tests recording one cassette at once: the second fails naming the first (issue 26 #6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vcr")

from pytest_flows._internal.recording.cassette import use_cassette
from pytest_flows._internal.recording.cassette_lock import CassetteBusyError


def _lock(cassette: Path, test: str, pid: int) -> Path:
    lock = cassette.with_name(cassette.name + ".lock")
    lock.write_text(json.dumps({"test": test, "pid": pid}), encoding="utf-8")
    return lock


def test_a_second_writer_fails_naming_the_test_that_records(tmp_path: Path) -> None:
    cassette = tmp_path / "shared.yaml"
    _lock(cassette, "test_a.py::test_one (xdist worker gw0)", os.getpid())

    with (
        pytest.raises(CassetteBusyError, match=r"being recorded by test_a.py::test_one"),
        use_cassette(cassette, record_mode="all"),
    ):
        pass
    assert not cassette.exists()


def test_the_lock_is_held_while_recording_and_released_after(tmp_path: Path) -> None:
    cassette = tmp_path / "mine.yaml"
    lock = cassette.with_name("mine.yaml.lock")
    with use_cassette(cassette, record_mode="all"):
        assert json.loads(lock.read_text(encoding="utf-8"))["pid"] == os.getpid()
        with pytest.raises(CassetteBusyError), use_cassette(cassette, record_mode="all"):
            pass
    assert not lock.exists()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    cassette = tmp_path / "stale.yaml"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    lock = _lock(cassette, "test_gone.py::test_killed", int(dead.stdout))
    with use_cassette(cassette, record_mode="all"):
        assert "test_gone" not in lock.read_text(encoding="utf-8")
    assert not lock.exists()


def test_replaying_takes_no_lock(tmp_path: Path) -> None:
    cassette = tmp_path / "replayed.yaml"
    cassette.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    _lock(cassette, "test_a.py::test_one", os.getpid())
    with use_cassette(cassette, record_mode="none"):
        pass
