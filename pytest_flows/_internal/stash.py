"""Where the plugin keeps a test's open harness (a light module: no pydantic, no framework)."""

from __future__ import annotations

from typing import Any

import pytest

#: The open :class:`~pytest_flows._internal.session.FlowsSession` of a test item.
SESSION_KEY = pytest.StashKey[Any]()
#: Whether the test function itself raised (set by the plugin after the call phase).
CALL_RAISED_KEY = pytest.StashKey[bool]()
