"""Deprecated alias of declaring and patching a framework's private seams: import from
:mod:`pytest_flows.adapters` instead.

``pytest_flows.seams`` was a documented import path before pytest-flows 0.2.0 moved its
code under ``pytest_flows._internal``. It re-exports the same objects and warns once
when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows._internal.deprecation import missing_name, warn_moved
from pytest_flows.adapters import Registry, Seam, replaced

#: Where each name lives now.
HOMES = {
    "pytest_flows.adapters": ["Registry", "Seam", "replaced"],
}
__all__ = ["Registry", "Seam", "replaced"]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
