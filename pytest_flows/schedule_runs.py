"""Running one flow under a schedule: what ``flows.run(..., schedule=...)`` wraps its run in."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pytest_flows.run import FlowRun
from pytest_flows.schedule import Chooser, decode

if TYPE_CHECKING:
    from pytest_flows.session import FlowsSession

__all__ = ["following_schedule", "noted"]


@contextlib.contextmanager
def following_schedule(
    session: FlowsSession,
    schedule: str | None,
    call: tuple[Any, tuple[Any, ...], dict[str, Any]] | None = None,
) -> Iterator[Chooser | None]:
    """Replay ``schedule`` (or the test's, or record the default one when the test checks
    for races) for the block; a chooser already driving the scheduler (``explore``) wins."""
    scheduler = session.scheduler
    if scheduler.threads.chooser is not None and schedule is None:
        yield scheduler.threads.chooser
        return
    text = schedule if schedule is not None else session.schedule
    if text is None and getattr(session, "races", "off") == "off":
        yield None
        return
    text = text or "s"
    chooser = Chooser(decode(text), schedule=text, wrap=text.startswith("w"))
    with scheduler.following(chooser):
        yield chooser
    if getattr(session, "races", None) not in (None, "off"):
        session.recorded_schedules.append(chooser)
        if call is not None and isinstance(call[0], type):
            # A flow class can run again: races="fail" explores it to show outcomes.
            chooser.rerun = call


def noted(run: FlowRun, chooser: Chooser | None) -> FlowRun:
    """Keep the schedule a run followed (``run.schedule``) and what it accessed."""
    if chooser is not None:
        run.extras["schedule"] = chooser.schedule
        run.extras["chooser"] = chooser
    return run
