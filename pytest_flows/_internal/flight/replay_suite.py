"""The tests ``--flows-replay=DIR`` collects: one ``test_replay[<run id>]`` per flight record.

A record names the flow it was made from; it is imported only if its module is
allowed (``--flows-replay-allow`` / ini ``flows_replay_allow``): reading a record never
decides on its own what gets imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.flight.format import RecordError, read_record, record_paths
from pytest_flows._internal.flight.targets import TargetError, replay_target, resolve


def _records(config: pytest.Config) -> list[Path]:
    paths: list[Path] = []
    for directory in config.getoption("flows_replay", None) or []:
        where = Path(directory)
        if not where.is_dir():
            raise pytest.UsageError(f"--flows-replay={directory}: no such directory")
        paths.extend(record_paths(where))  # not empty: checked at configure
    return paths


def _run_id(path: Path) -> str:
    # The header line only: the whole record is read once, by its test.
    try:
        return read_record(path, header_only=True).run_id
    except RecordError:
        return path.name


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "flight_record" in metafunc.fixturenames:
        paths = _records(metafunc.config)
        metafunc.parametrize("flight_record", paths, ids=[_run_id(p) for p in paths])


def allow_list(config: pytest.Config) -> list[str]:
    given = config.getoption("flows_replay_allow", None) or []
    return [*given, *config.getini("flows_replay_allow")]


def test_replay(flows: Any, flight_record: Path, request: pytest.FixtureRequest) -> None:
    try:
        record = read_record(flight_record)
    except RecordError as exc:
        raise FlowsUsageError(str(exc)) from None
    try:
        target = replay_target(record)
    except ValueError as exc:
        raise FlowsUsageError(str(exc)) from None
    try:
        # Resolved and checked before anything it names is called (or, for a module
        # not allowed, imported).
        resolved = resolve(target, allow_list(request.config))
    except TargetError as exc:
        module = target.partition(":")[0]
        raise FlowsUsageError(
            f"{flight_record.name} was recorded from {target}; replaying it is refused: "
            f"{exc}. If you trust it, allow the module with --flows-replay-allow={module} "
            f"or, in your ini file, flows_replay_allow = {module}"
        ) from None
    flows.replay(record, resolved).check()
