"""Deprecated alias of the crew fake: import from :mod:`pytest_flows.crewai` and
:mod:`pytest_flows` and :mod:`pytest_flows.adapters` instead.

``pytest_flows.crewai.crews`` was a documented import path before pytest-flows 0.2.0
made the adapter's own modules private (``pytest_flows.crewai._crews``). It re-exports
the same objects and warns once when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows.adapters import RUN_FOR_REAL, FakeCrews, missing_name, warn_moved
from pytest_flows.crewai import crew_output

#: Where each name lives now.
HOMES = {
    "pytest_flows.crewai": ["crew_output"],
    "pytest_flows": ["FakeCrews"],
    "pytest_flows.adapters": ["RUN_FOR_REAL"],
}
__all__ = ["RUN_FOR_REAL", "FakeCrews", "crew_output"]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
