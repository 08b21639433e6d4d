"""Deprecated alias of the errors and warnings: import from :mod:`pytest_flows` instead.

``pytest_flows.errors`` was a documented import path before pytest-flows 0.2.0 moved its
code under ``pytest_flows._internal``. It re-exports the same objects and warns once
when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows import (
    FlowsDeadlockError,
    FlowsError,
    FlowsUsageError,
    FlowsWarning,
    NetworkBlockedError,
    NoMethodRanWarning,
)
from pytest_flows._internal.deprecation import missing_name, warn_moved

#: Where each name lives now.
HOMES = {
    "pytest_flows": [
        "FlowsDeadlockError",
        "FlowsError",
        "FlowsUsageError",
        "FlowsWarning",
        "NetworkBlockedError",
        "NoMethodRanWarning",
    ],
}
__all__ = [
    "FlowsDeadlockError",
    "FlowsError",
    "FlowsUsageError",
    "FlowsWarning",
    "NetworkBlockedError",
    "NoMethodRanWarning",
]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
