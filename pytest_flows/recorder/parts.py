"""For a framework's part of the flight recorder: what it records a run with.

Import-light, as the recorder: a part runs in production, so it loads no pytest and
nothing of the harness. A part is the module an adapter's
``AdapterSpec(recorder=RecorderPart(module=...))`` names; it defines

* ``install() -> undo``: wrap the framework so each run, while a recorder is on,
  :func:`begin` s a :class:`RunRecording`, notes its entries (``run.note(kind, ...)``:
  ``flow.started``, ``method.started``/``method.finished``, ``llm.request``/
  ``llm.response``, ``tool.started``/``tool.finished``, ``human.answered``,
  ``state.saved``) and :meth:`~RunRecording.finish` es it; and
* ``shadow(run, *, answer_tool=None) -> done``: the same, into ``run``, for the runs of
  this context (``flows.replay`` records the replay so and compares the two).

Replace framework attributes through :class:`Patches` (undone by ``undo``), and
declare each in the adapter's seams so a framework release that moves one is noticed.
The toy adapter in the project's tests (its recorder part) is a complete example:
docs/contributing.md, "Adding a framework".
"""

from __future__ import annotations

from pytest_flows._internal.flight.capture import (
    Patches,
    RunRecording,
    active,
    begin,
    current,
    distribution_version,
    error_fields,
    exception_fields,
    recording,
)
from pytest_flows._internal.flight.writer import LOG
from pytest_flows._internal.trace import render_value

__all__ = [
    "LOG",
    "Patches",
    "RunRecording",
    "active",
    "begin",
    "current",
    "distribution_version",
    "error_fields",
    "exception_fields",
    "recording",
    "render_value",
]
