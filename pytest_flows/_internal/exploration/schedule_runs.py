"""Running one flow under a schedule: what ``flows.run(..., schedule=...)`` wraps its run in."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.fakes.rewind import ScriptMark
from pytest_flows._internal.run import FlowRun
from pytest_flows._internal.runtime.schedule import Chooser, decode

if TYPE_CHECKING:
    from pytest_flows._internal.session import FlowsSession

__all__ = ["following_schedule", "noted", "rerun_of"]


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
    racing = getattr(session, "races", "off") not in (None, "off")
    if text is None and not racing:
        yield None
        return
    if text is None and scheduler.seed != 0:
        # races= under --flows-seed: record the seeded run itself.
        chooser = Chooser(passive=True)
    else:
        text = text or "s"
        chooser = Chooser(decode(text), schedule=text, wrap=text.startswith("w"))
    # races="fail" may run the flow again at teardown: from the scripts as they stand now.
    mark = ScriptMark(session) if racing and call is not None else None
    with scheduler.following(chooser):
        yield chooser
    if chooser.misfit is not None:
        raise chooser.misfit
    if getattr(session, "races", None) not in (None, "off"):
        session.recorded_schedules.append(chooser)
        if call is not None:
            # races="fail" explores the flow again to show how outcomes differ.
            chooser.rerun = rerun_of(session, *call, mark=mark)


def rerun_of(
    session: FlowsSession,
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    mark: ScriptMark | None = None,
) -> tuple[str, Callable[[], FlowRun]] | None:
    """The name of the flow a test ran and how to run it afresh: a class as it is; an
    instance through its class, when that builds without arguments (a run leaves the
    instance's state behind, so it cannot run again as it is). ``mark``: where the
    scripts stood when the test ran it; each run again answers from there."""
    flow = target if isinstance(target, type) else type(target)
    if flow is not target:
        try:
            inspect.signature(flow).bind()
        except (TypeError, ValueError):
            return None

    def again() -> FlowRun:
        def run() -> FlowRun:
            return session.run(flow, *args, raise_on_error=False, **kwargs)

        return run() if mark is None else mark.replay(run)

    return flow.__name__, again


def noted(run: FlowRun, chooser: Chooser | None) -> FlowRun:
    """Keep the schedule a run followed (``run.schedule``) and what it accessed."""
    if chooser is not None:
        if not chooser.passive:
            run.extras["schedule"] = chooser.schedule
        run.extras["chooser"] = chooser
    return run
