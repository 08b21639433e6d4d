"""The pytest side of the flight recorder: ``--flows-replay=DIR`` collects every flight
record in DIR as ``test_replay[<run id>]`` (the suite in ``replay_suite.py``).

Light imports only: this module loads with the plugin.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["SUITE", "addoption", "configure"]

SUITE = Path(__file__).with_name("replay_suite.py")


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("flows")
    group.addoption(
        "--flows-replay",
        action="append",
        default=[],
        metavar="DIR",
        help="replay every flight record (pytest_flows.recorder) in DIR as a test, "
        "test_replay[<run id>]; the flows they name must be allowed (flows_replay_allow)",
    )
    group.addoption(
        "--flows-replay-allow",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module (or package) whose flows the records in --flows-replay may name "
        "(ini: flows_replay_allow)",
    )
    parser.addini(
        "flows_replay_allow",
        "modules (or packages) whose flows --flows-replay records may name: replaying a "
        "record imports the flow it names only from these",
        type="linelist",
    )


def configure(config: pytest.Config) -> None:
    directories = config.getoption("flows_replay", None)
    if not directories:
        return
    from pytest_flows._internal.flight.format import SUFFIX, record_paths

    for directory in directories:
        if not Path(directory).is_dir():
            raise pytest.UsageError(f"--flows-replay={directory}: no such directory")
        if next(record_paths(directory), None) is None:
            # A CI job pointed at the wrong folder must not stay green.
            raise pytest.UsageError(
                f"--flows-replay={directory}: no flight record (*{SUFFIX}) in it or "
                "below; point it at the directory record_flows() writes into"
            )
    if str(SUITE) not in config.args:
        config.args.append(str(SUITE))
