"""What a deadlocked run reports: each blocked thread with its stack, each pending task."""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.runtime.frames import current_frames

if TYPE_CHECKING:
    import asyncio

    from pytest_flows._internal.runtime.participants import Participant

__all__ = ["deadlock_report"]


def deadlock_report(now: float, parts: list[Participant]) -> str:
    frames = current_frames()
    lines = [
        "every thread of the flow is blocked, the event loop has nothing ready and no "
        f"timer is due (virtual time {now:g} s): the run can never "
        "finish. A real thread pool would hang here too.",
        "",
    ]
    for p in parts:
        if p.idle:
            continue
        kind = "event loop thread" if p.is_loop else "worker thread"
        lines.append(f"{kind} {p.name!r} is blocked on {p.what or 'the scheduler'}:")
        frame = frames.get(p.ident) if p.ident is not None else None
        if frame is not None and not p.is_loop:  # a loop's stack is asyncio's; its tasks tell
            lines.extend("  " + line for line in _user_stack(frame))
        for loop in p.loops:
            lines.extend(_pending_tasks(loop))
    lines.append(
        "Look for a lock taken in a different order, a wait for something no thread "
        "will ever set, or a barrier with more parties than threads."
    )
    return "\n".join(lines)


_INTERNAL = (
    "pytest_flows/_internal/runtime/threads.py",
    "pytest_flows/_internal/runtime/thread_choice.py",
    "pytest_flows/_internal/runtime/stuck_threads.py",
    "pytest_flows/_internal/runtime/participants.py",
    "pytest_flows/_internal/runtime/stdlib_seams.py",
    "pytest_flows/_internal/runtime/loop.py",
    "threading.py",
)


def _user_stack(frame: Any) -> list[str]:
    text = traceback.format_stack(frame)
    kept = [t for t in text if not any(part in t for part in _INTERNAL)]
    return "".join(kept[-12:]).rstrip("\n").splitlines()


def _pending_tasks(loop: asyncio.AbstractEventLoop) -> list[str]:
    import asyncio

    lines: list[str] = []
    try:
        tasks = sorted(asyncio.all_tasks(loop), key=lambda t: t.get_name())
    except RuntimeError:
        return lines
    for task in tasks:
        coro = task.get_coro()
        name = getattr(coro, "__qualname__", repr(coro))
        frame = getattr(coro, "cr_frame", None)
        where = f" at line {frame.f_lineno} of {frame.f_code.co_filename}" if frame else ""
        lines.append(f"  pending task {task.get_name()}: {name}{where}")
    return lines
