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
from pytest_flows._internal.flight.export import replay_target
from pytest_flows._internal.flight.format import RecordError, read_record, record_paths


def _records(config: pytest.Config) -> list[Path]:
    paths: list[Path] = []
    for directory in config.getoption("flows_replay", None) or []:
        where = Path(directory)
        if not where.is_dir():
            raise pytest.UsageError(f"--flows-replay={directory}: no such directory")
        paths.extend(record_paths(where))
    return paths


def _run_id(path: Path) -> str:
    try:
        return read_record(path).run_id
    except RecordError:
        return path.name


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "flight_record" in metafunc.fixturenames:
        paths = _records(metafunc.config)
        metafunc.parametrize("flight_record", paths, ids=[_run_id(p) for p in paths])


def allowed(config: pytest.Config, target: str) -> bool:
    given = config.getoption("flows_replay_allow", None) or []
    allow = [*given, *config.getini("flows_replay_allow")]
    module = target.partition(":")[0]
    return any(module == name or module.startswith(name + ".") for name in allow)


def test_replay(flows: Any, flight_record: Path, request: pytest.FixtureRequest) -> None:
    try:
        record = read_record(flight_record)
    except RecordError as exc:
        raise FlowsUsageError(str(exc)) from None
    try:
        target = replay_target(record)
    except ValueError as exc:
        raise FlowsUsageError(str(exc)) from None
    if not allowed(request.config, target):
        module = target.partition(":")[0]
        raise FlowsUsageError(
            f"{flight_record.name} was recorded from {target}; replaying it imports "
            f"{module}. Allow it with --flows-replay-allow={module} or, in your ini file, "
            f"flows_replay_allow = {module}"
        )
    flows.replay(record, target).check()
