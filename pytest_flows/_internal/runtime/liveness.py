"""The liveness guard: a thread that holds the baton and blocks outside the scheduler.

The scheduler sees a thread block only at its switch points. A thread that blocks
anywhere else (a lock or condition built before the test, a socket, a call into C)
keeps the baton while it waits, and if what it waits for needs another managed
thread to run, nothing would ever happen. So one watchdog thread per process samples
the thread holding each active scheduler's baton: when it has sat at the same
instruction, asleep in the OS, for longer than the scheduler's ``block_grace`` (real
seconds), the scheduler treats that as a switch point (see
``ThreadScheduler.blocked_outside``). If afterwards nothing can progress, the run is
reported as deadlocked with every thread's stack.

A thread running Python, or running in C on a CPU, is never taken for blocked: its
instruction moves, or the OS reports it running.
"""

from __future__ import annotations

import linecache
import os
import re
import stat
import sys
import traceback
import weakref
from types import FrameType
from typing import TYPE_CHECKING, Any

from pytest_flows._internal.runtime.frames import current_frames
from pytest_flows._internal.runtime.participants import (
    _by_thread,
    _get_ident,
    _real_sleep,
    _RealThread,
    real_monotonic,
)

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.threads import ThreadScheduler

__all__ = ["DEFAULT_BLOCK_GRACE", "check_block_grace", "describe_block", "others_frames", "watch"]

#: Real seconds the thread holding the baton may block outside the scheduler before
#: the others run meanwhile: far above a hand-off (tens of microseconds), far below
#: what a person waits for.
DEFAULT_BLOCK_GRACE = 0.25

_watched: weakref.WeakSet[ThreadScheduler] = weakref.WeakSet()
_started: list[_RealThread] = []

#: Where the scheduler itself waits (for a thread's bootstrap, for the world outside
#: the flow): never a block to act on.
_HARNESS = (
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "threads.py"),
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "thread_choice.py"),
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "stuck_threads.py"),
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "participants.py"),
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "stdlib_seams.py"),
    # the idle wait's holds for real work outside, and foreign work settling
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "real_work.py"),
    os.sep + os.path.join("pytest_flows", "_internal", "runtime", "foreign_work.py"),
)
_SOCKET_MODULES = ("socket", "ssl", "selectors", "http.client", "asyncio.selector_events")


def check_block_grace(value: object, what: str) -> float:
    """``value`` as a grace in real seconds (a number > 0), or a usage error naming ``what``."""
    from pytest_flows._internal.errors import FlowsUsageError

    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise FlowsUsageError(
            f"{what} got {value!r}: the grace is how many real seconds a thread may block "
            "outside the scheduler before the others run meanwhile, a number > 0 "
            f"(default {DEFAULT_BLOCK_GRACE})."
        )
    if value == float("inf"):
        raise FlowsUsageError(f"{what} got inf: a run must never wait for ever; pass seconds.")
    return float(value)


def watch(sched: ThreadScheduler) -> None:
    """Have the watchdog look after ``sched`` while it runs anything."""
    _watched.add(sched)
    if _started and _started[-1].is_alive():
        return
    # Started as the scheduler starts its own threads: the calling thread may be a
    # managed one (a session opened inside a flows test), and this start is no switch.
    ident = _get_ident()
    stack = _by_thread.pop(ident, None)
    try:
        thread = _RealThread(target=_watchdog, name="pytest-flows-liveness", daemon=True)
        _started.append(thread)
        thread.start()
    finally:
        if stack is not None:
            _by_thread[ident] = stack


def _watchdog() -> None:
    seen: dict[int, tuple[Any, float]] = {}
    idle_since: dict[int, float] = {}
    while True:
        try:
            _look(seen, idle_since)
        except Exception:  # a scheduler torn down while looked at: never the last look
            seen.clear()
            idle_since.clear()
            sys.stderr.write(f"pytest-flows liveness guard: {traceback.format_exc()}")


def _look(seen: dict[int, tuple[Any, float]], idle_since: dict[int, float]) -> None:
    """One look at every active scheduler's baton holder, after a short real pause."""
    scheds = [s for s in list(_watched) if not s.detached and not s.aborted]
    pause = min((s.block_grace for s in scheds), default=0.2) / 4
    _real_sleep(min(max(pause, 0.005), 0.05))
    if not scheds:
        seen.clear()
        idle_since.clear()
        return
    now = real_monotonic()
    frames: dict[int, FrameType] | None = None
    for sched in scheds:
        key = id(sched)
        holder = sched.holder
        if holder is None:
            seen.pop(key, None)
            if sched.has_outside():
                since = idle_since.setdefault(key, now)
                if now - since >= sched.outside_patience():
                    idle_since.pop(key, None)
                    sched.outside_deadlock()
            else:
                idle_since.pop(key, None)
            continue
        idle_since.pop(key, None)
        if frames is None:
            frames = others_frames()
        frame = frames.get(holder.ident) if holder.ident is not None else None
        if frame is None:
            seen.pop(key, None)
            continue
        # The frame by its id, never the frame: a frame held from one look to the next
        # would keep its locals alive after its function returned (LangGraph's
        # test_pregel_loop_refcount counts live loop objects, and found one). A function
        # called again and again that waits at the same place may get the same id each
        # time: it is taken for one wait, which it is to the scheduler (the harness's
        # own waits are _HARNESS's, never acted on).
        mark = (holder, sched.switches, id(frame), frame.f_lasti)
        last = seen.get(key)
        if last is None or last[0] != mark:
            seen[key] = (mark, now)
            continue
        if now - last[1] < sched.block_grace:
            continue
        if frame.f_code.co_filename.endswith(_HARNESS) or not _asleep(holder.native):
            continue
        if sched.chooser is not None:
            # Exploring or replaying a schedule: a switch the schedule did not make
            # would break its replay (and, measured, slowed an exploration of 584
            # schedules from 74 s to over 420 s); the deadlock report still stands.
            continue
        seen.pop(key, None)
        what, in_socket = describe_block(frame)
        sched.blocked_outside(holder, frame, frame.f_lasti, what, in_socket)


def others_frames() -> dict[int, FrameType]:
    """``sys._current_frames()`` (through :func:`current_frames`: see its module)
    without the calling thread's own frame. Kept in a
    local, the full dict would hold the frame that holds it: a reference cycle, which
    keeps every frame it sampled (and their locals, a flow's objects) alive until the
    cyclic collector runs, and for ever with ``gc.disable()``."""
    me = _get_ident()
    return {ident: frame for ident, frame in current_frames().items() if ident != me}


def _asleep(native: int | None) -> bool:
    """Whether the OS has the thread asleep (waiting), not running: Linux tells; elsewhere
    the unmoved instruction is all there is to go by."""
    if native is None:
        return True
    try:
        with open(f"/proc/self/task/{native}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return True
    state = text[text.rfind(b")") + 2 : text.rfind(b")") + 3]
    return state in (b"S", b"D")


#: ``with NAME:`` or ``NAME.acquire(`` / ``NAME.wait(``: a primitive named in the line.
_NAMED = re.compile(r"with\s+([A-Za-z_]\w*)\s*:|([A-Za-z_]\w*)\.(?:acquire|wait)\(")


def describe_block(frame: FrameType) -> tuple[str, bool]:
    """What the thread at ``frame`` blocks on, as the user's code names it, and whether it
    is a socket (which may take a while to answer)."""
    module = str(frame.f_globals.get("__name__", ""))
    in_socket = module in _SOCKET_MODULES
    user: FrameType | None = frame
    while user is not None and (_stdlib(user) or user.f_code.co_filename.endswith(_HARNESS)):
        user = user.f_back
    where = user or frame
    line = linecache.getline(where.f_code.co_filename, where.f_lineno).strip()
    site = f"{where.f_code.co_filename}:{where.f_lineno}"
    if in_socket and _pipes_only(frame):
        # A pipe (multiprocessing's Connection, a pool's change notifier): only this
        # process's threads and children write it, none of them across a network.
        in_socket = False
        kind = f"a pipe ({module})"
    elif in_socket:
        kind = f"a socket ({module})"
    elif module == "threading":
        kind = "a threading primitive the harness does not manage (built before the test)"
    else:
        kind = "a lock or call the harness does not manage"
    made = _made_where(where, line)
    return f"{kind}, at {site}: {line}{made}", in_socket


def _pipes_only(frame: FrameType) -> bool:
    """Whether ``frame`` waits in a selector whose every file is a pipe."""
    selector = frame.f_locals.get("self") if frame.f_code.co_name == "select" else None
    get_map = getattr(selector, "get_map", None)
    if get_map is None:
        return False
    try:
        fds = [key.fd for key in list(get_map().values())]
        return bool(fds) and all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in fds)
    except (OSError, RuntimeError, ValueError, TypeError, AttributeError):
        return False


def _stdlib(frame: FrameType) -> bool:
    name = str(frame.f_globals.get("__name__", ""))
    return name.split(".")[0] in sys.stdlib_module_names and name != "__main__"


def _made_where(frame: FrameType, line: str) -> str:
    """Where the object the line names comes from, when a dictionary lookup can tell
    (nothing of the user's code runs): a module-level name was built at its import."""
    match = _NAMED.search(line)
    if match is None:
        return ""
    name = match.group(1) or match.group(2)
    module = frame.f_globals.get("__name__")
    if name in frame.f_code.co_varnames or name not in frame.f_globals or not module:
        return ""
    value = frame.f_globals[name]
    return (
        f" ({name} is a {type(value).__name__} of module {module}, built when it was "
        "imported, before the test)"
    )
