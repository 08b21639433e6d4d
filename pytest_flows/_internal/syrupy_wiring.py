"""The pytest side of the snapshot extension: its ini option, and making it syrupy's default.

Light on purpose: this loads with the plugin, for every pytest run. syrupy imports the
extension itself (:mod:`pytest_flows._internal.syrupy_extension`, which subclasses
syrupy's amber classes) only when a test uses the ``snapshot`` fixture.
"""

from __future__ import annotations

import pytest

__all__ = ["EXTENSION_PATH", "addoption", "configure"]

EXTENSION_PATH = "pytest_flows._internal.syrupy_extension.FlowsSnapshotExtension"


def addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "flows_snapshots",
        "make pytest-flows' snapshot extension syrupy's default (amber, plus readable "
        "traces, runs, state histories, checkpoints and race outcomes)",
        type="bool",
        default=True,
    )


def configure(config: pytest.Config) -> None:
    """Make :class:`FlowsSnapshotExtension` syrupy's default unless the project chose one."""
    option = config.option
    if not hasattr(option, "default_extension"):
        return  # syrupy is not active (-p no:syrupy)
    from pytest_flows._internal.ini_checks import ini_bool

    if option.default_extension is None and ini_bool(config, "flows_snapshots"):
        option.default_extension = EXTENSION_PATH
