"""Deprecated alias of the scripted-reply engine's errors and constants: import from
:mod:`pytest_flows` and :mod:`pytest_flows.adapters` instead.

``pytest_flows.script`` was a documented import path before pytest-flows 0.2.0 moved its
code under ``pytest_flows._internal``. It re-exports the same objects and warns once
when imported; it goes in 0.4.0 (CHANGELOG.md).
"""

from pytest_flows import ALWAYS, ScriptError, UnscriptedRequest, UnusedReplies
from pytest_flows._internal.deprecation import missing_name, warn_moved
from pytest_flows.adapters import Request, plain

#: Where each name lives now.
HOMES = {
    "pytest_flows": ["ALWAYS", "ScriptError", "UnscriptedRequest", "UnusedReplies"],
    "pytest_flows.adapters": ["Request", "plain"],
}
__all__ = ["ALWAYS", "Request", "ScriptError", "UnscriptedRequest", "UnusedReplies", "plain"]

warn_moved(__name__, HOMES)
__getattr__ = missing_name(__name__, HOMES)
