"""Deprecated alias of the syrupy extension: import from :mod:`pytest_flows` instead.

``pytest_flows.syrupy_extension`` was a documented import path before pytest-flows 0.2.0
moved its code under ``pytest_flows._internal``. It re-exports the same objects and
warns once when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows import FlowsSnapshotExtension
from pytest_flows._internal.deprecation import missing_name, warn_moved

#: Where each name lives now.
HOMES = {
    "pytest_flows": ["FlowsSnapshotExtension"],
}
__all__ = ["FlowsSnapshotExtension"]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
