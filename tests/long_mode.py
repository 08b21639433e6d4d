"""The suite's long mode: ``PYTEST_FLOWS_LONG=1`` widens the bounded checks CI runs
(more hash seeds, more examples, more generated flows)."""

from __future__ import annotations

import os

#: Whether the long mode is on (``PYTEST_FLOWS_LONG`` set to anything but "" or "0").
LONG = os.environ.get("PYTEST_FLOWS_LONG", "") not in ("", "0")
