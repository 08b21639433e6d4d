"""Deprecated alias of the flow store and its errors: import from :mod:`pytest_flows` and
:mod:`pytest_flows.adapters` instead.

``pytest_flows.store`` was a documented import path before pytest-flows 0.2.0 moved its
code under ``pytest_flows._internal``. It re-exports the same objects and warns once
when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows import (
    CheckpointNotFoundError,
    CrashPoint,
    FlowStore,
    InvalidStateIdError,
    NotACheckpointError,
    SimulatedCrash,
    StateCodecError,
    StoreCorruptedError,
    StoreError,
)
from pytest_flows._internal.deprecation import missing_name, warn_moved
from pytest_flows.adapters import StoreBackend

#: Where each name lives now.
HOMES = {
    "pytest_flows": [
        "CheckpointNotFoundError",
        "CrashPoint",
        "FlowStore",
        "InvalidStateIdError",
        "NotACheckpointError",
        "SimulatedCrash",
        "StateCodecError",
        "StoreCorruptedError",
        "StoreError",
    ],
    "pytest_flows.adapters": ["StoreBackend"],
}
__all__ = [
    "CheckpointNotFoundError",
    "CrashPoint",
    "FlowStore",
    "InvalidStateIdError",
    "NotACheckpointError",
    "SimulatedCrash",
    "StateCodecError",
    "StoreBackend",
    "StoreCorruptedError",
    "StoreError",
]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
