"""Deprecated alias of golden files' state migrations: import from :mod:`pytest_flows`
instead.

``pytest_flows.golden.migrations`` was a documented import path before pytest-flows
0.2.0 moved its code under ``pytest_flows._internal``. It re-exports the same objects
and warns once when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows import assert_resumes_old_states, old_states
from pytest_flows._internal.deprecation import missing_name, warn_moved

#: Where each name lives now.
HOMES = {
    "pytest_flows": ["assert_resumes_old_states", "old_states"],
}
__all__ = ["assert_resumes_old_states", "old_states"]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
