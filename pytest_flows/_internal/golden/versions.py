"""Golden files written by earlier pytest-flows releases keep their meaning.

A golden's ``format`` says which release wrote it. Format 2 is today's; format
1 was written by pytest-flows 0.1.0 (and by 0.2.0's development versions before
this module). What 0.1.0 wrote differs from today's text for reasons of the
plugin's, not of the user's flow:

* run-specific values: 0.1.0 stored some raw (a paused crewAI run's flow id in
  ``HumanFeedbackPending(...)``, a sub-workflow request's id inside a message,
  cut in half where a long value was elided) and numbered others as
  ``<uuid:N>`` / ``occ-call-<n>-<k>`` in its own order; today's normal form
  numbers every one (``<uuid:N>``, ``occ-<call:N>``) by first appearance;
* lines it never wrote: a sub-workflow's own lines (today indented under the
  ``WorkflowExecutor`` that ran it);
* a line it wrote twice: ``checkpoint restored`` of a crewAI resume.

So a format-1 golden is compared in a form both versions agree on: every
run-specific value is the bare kind (``<uuid>``, ``<call>``, ``<id>``), today's
indented lines are left out, a line cut with an ellipsis matches any line it
begins, and a repeated ``checkpoint restored`` counts once. Everything else -
which methods and executors ran, in what order, with what values and outputs -
is compared as for a golden of today's format, so a real behaviour change is
still a break. Re-recording (``--flows-golden-update``) writes today's format,
compared exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pytest_flows._internal.normal_form import ELLIPSIS, comparable

__all__ = ["FORMAT", "READABLE", "WRITTEN_BY", "same_lines", "same_text", "trace_form"]

#: The format today's code writes.
FORMAT = 2
#: Formats today's code reads (older ones through :func:`trace_form`).
READABLE = (1, 2)
#: Which releases wrote each format (for messages and the changelog check).
WRITTEN_BY = {1: "pytest-flows 0.1.0", 2: "pytest-flows 0.2.0"}

_PLACEHOLDER = re.compile(r"<(uuid|call|id|hex):\d+>")
# What may precede a cut: the half of a uuid 0.1.0 cut (it measured the cut on the
# raw text), which no normal form can number.
_HALF_ID = re.compile(r"[0-9a-fA-F-]*$")
_RESTORED = "checkpoint restored "


def _line(line: str) -> str:
    return _PLACEHOLDER.sub(lambda m: f"<{m.group(1)}>", comparable(line))


def trace_form(lines: Iterable[str], fmt: int) -> list[str]:
    """``lines`` as a golden of format ``fmt`` is compared (today's: unchanged)."""
    if fmt >= FORMAT:
        return list(lines)
    form: list[str] = []
    for line in lines:
        if line.startswith("  "):  # a sub-workflow's line: 0.1.0 never wrote one
            continue
        text = _line(line)
        if text.startswith(_RESTORED) and form and form[-1] == text:
            continue
        form.append(text)
    return form


def _same_line(old: str, new: str) -> bool:
    if old == new:
        return True
    cut = [_HALF_ID.sub("", s[: -len(ELLIPSIS)]) for s in (old, new) if s.endswith(ELLIPSIS)]
    if not cut:
        return False
    shortest = min(cut, key=len)
    return old.startswith(shortest) and new.startswith(shortest)


def same_lines(recorded: list[str], today: list[str], fmt: int) -> bool:
    """Whether today's trace is the recorded one, as format ``fmt`` is compared."""
    if fmt >= FORMAT:
        return recorded == today
    old, new = trace_form(recorded, fmt), trace_form(today, fmt)
    return len(old) == len(new) and all(_same_line(a, b) for a, b in zip(old, new, strict=True))


def same_text(recorded: str, today: str, fmt: int) -> bool:
    """Whether an output (a rendered value) is the recorded one."""
    if fmt >= FORMAT:
        return comparable(recorded) == comparable(today)
    return _same_line(_line(recorded), _line(today))
