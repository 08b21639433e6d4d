"""Marks for tests of behaviour that only some supported crewai versions have.

crewai 1.15.20-1.15.22 encode a saved state with ``json.dumps`` and no default, so
a state holding a set, datetime or Decimal cannot be saved at all (crewai raises,
and flow_store with it); they also make one attempt per LLM call, with no
rate-limit retry. Tests of the newer behaviour are skipped there, saying why
(``tests/crewai/test_compat.py`` tests the older branches).
"""

from __future__ import annotations

from importlib.metadata import version

import pytest
from packaging.version import Version

from pytest_flows.crewai import _compat as compat

CREWAI = Version(version("crewai"))

needs_json_default = pytest.mark.skipif(
    not compat.HAS_SQLITE_JSON_DEFAULT,
    reason="crewai < 1.15.23 cannot save states holding sets, datetimes or Decimals "
    "(SQLiteFlowPersistence has no json default)",
)
needs_rate_limit_retry = pytest.mark.skipif(
    not compat.HAS_RATE_LIMIT_RETRY,
    reason="crewai < 1.15.23 does not retry rate-limited LLM calls",
)


def _pending_context_has(field: str) -> bool:
    import dataclasses

    from crewai.flow.async_feedback.types import PendingFeedbackContext

    return field in {f.name for f in dataclasses.fields(PendingFeedbackContext)}


needs_trace_context = pytest.mark.skipif(
    not _pending_context_has("trace_context"),
    reason="the snapshot holds a pending-feedback context of crewai >= 1.15.23 (trace_context)",
)

#: why a test of conversational flows is skipped (the reason of an importorskip)
needs_conversational_flows = (
    "conversational flows need crewai >= 1.15 (crewai 1.14's are experimental: "
    "crewai.experimental.conversational_mixin)"
)

needs_declarative_flows = pytest.mark.skipif(
    compat.agent_action() is None,
    reason="declarative flows (Flow.from_declaration, `call: agent` steps) need crewai >= 1.15",
)


def crewai_114_differs(reason: str) -> pytest.MarkDecorator:
    """Skip on crewai 1.14.x a test of crewai 1.15's own behaviour, saying how 1.14 differs."""
    return pytest.mark.skipif(Version("1.15") > CREWAI, reason=f"crewai {CREWAI}: {reason}")
