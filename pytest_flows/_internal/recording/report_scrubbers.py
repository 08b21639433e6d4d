"""Which scrubbers the running test's report goes through: a light module of its own.

The plugin sets this for every test, recording or not (``use_cassette`` inside the
test body registers its cassette's scrubber here), so it lives apart from the
scrubber itself, which loads only when a report or a cassette needs it.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_flows._internal.recording.scrub import Scrubber

__all__ = ["TEST_SCRUBBERS"]

#: The scrubbers of the cassettes the running test opened (marker or ``use_cassette``):
#: pytest's report of the test goes through each of them.
TEST_SCRUBBERS: contextvars.ContextVar[list[Scrubber] | None] = contextvars.ContextVar(
    "pytest_flows_test_scrubbers", default=None
)
