"""Deprecated alias of hypothesis strategies and the state properties: import from
:mod:`pytest_flows` and :mod:`pytest_flows.adapters` instead.

``pytest_flows.strategies`` was a documented import path before pytest-flows 0.2.0 moved
its code under ``pytest_flows._internal``. It re-exports the same objects and warns once
when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows import (
    CrashPoint,
    assert_crash_resume,
    assert_fork_isolated,
    assert_time_travel,
    check_crash_resume,
    check_fork_isolation,
    check_time_travel,
    crash_points,
    scheduler_seeds,
    schedules,
)
from pytest_flows._internal.deprecation import missing_name, warn_moved
from pytest_flows.adapters import Outcome

#: Where each name lives now.
HOMES = {
    "pytest_flows": [
        "CrashPoint",
        "assert_crash_resume",
        "assert_fork_isolated",
        "assert_time_travel",
        "check_crash_resume",
        "check_fork_isolation",
        "check_time_travel",
        "crash_points",
        "scheduler_seeds",
        "schedules",
    ],
    "pytest_flows.adapters": ["Outcome"],
}
__all__ = [
    "CrashPoint",
    "Outcome",
    "assert_crash_resume",
    "assert_fork_isolated",
    "assert_time_travel",
    "check_crash_resume",
    "check_fork_isolation",
    "check_time_travel",
    "crash_points",
    "scheduler_seeds",
    "schedules",
]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
