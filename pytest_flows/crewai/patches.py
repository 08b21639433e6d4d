"""Deprecated alias of the seam check: import from :mod:`pytest_flows.crewai` instead.

``pytest_flows.crewai.patches`` was a documented import path before pytest-flows 0.2.0
made the adapter's own modules private (``pytest_flows.crewai._patches``). It re-exports
the same objects and warns once when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows.adapters import missing_name, warn_moved
from pytest_flows.crewai import check_patch_points

#: Where each name lives now.
HOMES = {
    "pytest_flows.crewai": ["check_patch_points"],
}
__all__ = ["check_patch_points"]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
