"""Real work the scheduler cannot see holds virtual time; a thread that never blocks yields.

Virtual time jumps to the next deadline when no flow thread can run. That is only
true to the runtime when nothing else is about to make one runnable. Three kinds of
real work run outside the scheduler and may do so:

- a thread the harness does not manage (a pool built at import, a client library's
  I/O thread) that is running, or sleeping for a moment of real time;
- a child process of the test that is still alive;
- (the loop's sockets are already waited for: see ``ThreadScheduler._watches_sockets``).

While such work is in flight, :func:`hold` lets the clock follow real time instead of
jumping: a moment of real sleep, the clock moved by as much (never past the deadline),
and the scheduler looks again. A hold is bounded by the scheduler's ``block_grace`` per
idle wait: work that takes longer is let go and the clock jumps (a ``FlowsWarning``
names it, once per kind of work). Each hold is written to ``ThreadScheduler.held``.

A flow thread the liveness guard found blocked outside the scheduler (it waits in a
queue or lock the harness does not manage, say a lock a library built at import or a C
``_queue.SimpleQueue``) runs outside it from then on: its real work holds virtual time
as an outside thread's does, or a timer would fire while that work was still in
progress (a connection thread answering a query that a step timeout awaits; aiosqlite's
own now waits in a managed queue, see queue_factory.py). Such holds are kept
in ``held`` but not written to the trace: they are the flow's own threads (the liveness
guard's warning names them), and whether a look catches one running is the OS's
timing, not the flow's behaviour.

Outside any run, virtual time follows the real sleeps of the test's own threads
(:func:`follow_sleeps`): the test's thread and the threads started during the test that
the harness does not manage (a graph or pool the test body drives itself). Nobody is
there to hold the clock for them, and a test that times such a sleep with
``perf_counter`` must see it pass, as it would bare. While the scheduler is at rest (no
flow thread runs or waits for a deadline) the clock moves, when such a sleep ends, to
where the sleep's own span from its start puts it: sleeps that overlap count once, one
after another add up, and the readings are the same on every run (the span asked for,
not the real time the OS took). A library's background thread started before the test
(a heartbeat) moves nothing.

The other half: a flow thread that keeps running Python without reaching a switch
point (a busy poll on ``queue.get_nowait()`` in a ``time.monotonic()`` deadline loop)
never lets the thread it polls for run, and reading the clock never moves it. So each
read of a virtual clock is counted (:func:`note_read`); after :data:`SPIN_READS` reads
during which the baton never changed hands and the clock never moved, the thread is
preempted as the interpreter's switch interval would preempt it: a yield, where the
seed picks who runs. When nobody else can run, the clock moves on by
:data:`SPIN_QUANTUM` (the interpreter's default switch interval) for each such
preemption, as real time passes for a real spinning thread: a deadline loop then ends
when its deadline is due. A thread that spins alone for ``spin_limit`` virtual seconds
with nothing that could ever end it is reported (:class:`FlowsDeadlockError` naming
the spinning method and every thread's stack), never left to spin for ever.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_flows._internal.runtime.liveness import others_frames
from pytest_flows._internal.runtime.participants import (
    _by_thread,
    _get_ident,
    _real_sleep,
    _RealThread,
    internal_lock,
    real_monotonic,
)

if TYPE_CHECKING:
    from pytest_flows._internal.runtime.participants import Participant
    from pytest_flows._internal.runtime.threads import ThreadScheduler

__all__ = [
    "DEFAULT_SPIN_LIMIT",
    "SPIN_QUANTUM",
    "SPIN_READS",
    "Hold",
    "RealWork",
    "RealWorld",
    "check_spin_limit",
    "faked",
    "follow_sleeps",
    "hold",
    "in_flight",
    "note_read",
    "outside_sleep",
]

#: Clock reads with no hand-off and no clock move before a spinning thread yields.
SPIN_READS = 1000
#: Virtual seconds the clock moves for each preemption of a thread spinning alone
#: (``sys.getswitchinterval()``'s default: how long CPython lets a thread run).
SPIN_QUANTUM = 0.005
#: Virtual seconds a thread may spin alone (nobody else runnable, no deadline, no
#: outside work) before the run is reported: about 1,000 preemptions.
DEFAULT_SPIN_LIMIT = 5.0
#: Real seconds of one look while holding the clock for outside work.
_PAUSE = 0.001
#: Real seconds a look first gives threads outside to take the GIL (see hold).
_GIL_TURN = 0.0001

#: Prefix of a hold's ``what`` for a flow thread running outside the scheduler.
_FLOW_THREAD = "flow thread "

#: Threads the harness does not manage, sleeping in real time now: ident -> real end.
_sleeping: dict[int, float] = {}
#: ... and when each of those sleeps began (real).
_slept_since: dict[int, float] = {}


@dataclass(frozen=True)
class RealWorld:
    """What the rules here read of real time and of the OS, and how they wait in real
    time. The suite substitutes parts (:func:`faked`) to exercise the rules without
    waiting on real time; the harness never does."""

    #: A real sleep: a thread outside sleeping, a hold's moment, a turn of the GIL.
    sleep: Callable[[float], None]
    #: The real clock the holds and the outside sleeps are measured on.
    monotonic: Callable[[], float]
    #: The OS's one-letter state of this process's thread ``native`` (``b"R"``:
    #: running), None when it is gone.
    state: Callable[[int], bytes | None]
    #: The CPU time thread ``native`` has run, in nanoseconds (None: unknown).
    cpu_ns: Callable[[int], int | None]


def _task_state(native: int) -> bytes | None:
    text = _task_stat(native)
    if text is None:
        return None
    return text[text.rfind(b")") + 2 : text.rfind(b")") + 3]


#: The world the rules look at now (see faked).
_world: list[RealWorld] = []


@contextlib.contextmanager
def faked(
    *,
    sleep: Callable[[float], None] | None = None,
    monotonic: Callable[[], float] | None = None,
    state: Callable[[int], bytes | None] | None = None,
    cpu_ns: Callable[[int], int | None] | None = None,
) -> Iterator[RealWorld]:
    """For the block, the rules here sleep, read the real clock and look at threads
    through the parts given (the others stay real). For the suite's own tests."""
    previous = _world[0]
    _world[0] = RealWorld(
        sleep or previous.sleep,
        monotonic or previous.monotonic,
        state or previous.state,
        cpu_ns or previous.cpu_ns,
    )
    try:
        yield _world[0]
    finally:
        _world[0] = previous


@dataclass
class RealWork:
    """One scheduler's state for holds and preemption (``ThreadScheduler.real_work``)."""

    #: Virtual seconds a thread may spin alone before the run is reported.
    spin_limit: float = DEFAULT_SPIN_LIMIT
    #: Every hold of virtual time for outside work, in order.
    held: list[Hold] = field(default_factory=list)
    spin_mark: tuple[int, int] = (-1, -1)
    spin_reads: int = 0
    spin_alone: float = 0.0
    hold_started: tuple[float, str] = (0.0, "")
    warned: set[str] = field(default_factory=set)
    #: Told of each hold as it ends (the session writes it to the trace: ``clock.held``).
    on_hold: Callable[[Hold], None] | None = None


@dataclass(frozen=True)
class Hold:
    """The clock waited for real work outside the scheduler."""

    at: float  #: the virtual time the wait began
    real_seconds: float  #: how long it waited, in real seconds
    what: str  #: the work it waited for
    gave_up: bool  #: the bound ran out before the work ended (the clock then jumped)


def check_spin_limit(value: object, what: str) -> float:
    """``value`` as a spin limit in virtual seconds (a number > 0), or a usage error
    naming ``what``."""
    from pytest_flows._internal.errors import FlowsUsageError

    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise FlowsUsageError(
            f"{what} got {value!r}: the limit is how many virtual seconds a flow thread may "
            "spin alone (no other thread runnable, no deadline, no work outside in flight) "
            f"before the run is reported, a finite number > 0 (default {DEFAULT_SPIN_LIMIT:g})."
        )
    return float(value)


#: The test's threads the harness does not manage (see follow_sleeps): while any
#: scheduler is active, the thread that activated it and the threads started since by
#: threads the harness does not manage.
_test_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


def follow_sleeps(thread: threading.Thread) -> None:
    """``thread`` is one of the running test's own: virtual time follows its real sleeps
    while the scheduler is at rest (see the module's docstring)."""
    _test_threads.add(thread)


def forget_test_threads() -> None:
    """No test runs any more: the threads it started are nobody's now."""
    _test_threads.clear()


def _at_rest(sched: ThreadScheduler) -> bool:
    """No flow thread runs, and none waits for a virtual deadline: moving the clock
    changes nothing the scheduler decides."""
    return sched.holder is None and sched.next_deadline() is None


def outside_sleep(seconds: float, sched: ThreadScheduler | None = None) -> None:
    """``time.sleep`` on a thread the harness does not manage: real, and known to be
    real work in flight while it lasts. ``sched``: the active scheduler, when the thread
    is the test's own (:func:`follow_sleeps`): at rest, its clock follows the sleep."""
    ident = _get_ident()
    follows = sched is not None and _test_threads and threading.current_thread() in _test_threads
    end = sched.clock.after(seconds) if sched is not None and follows and _at_rest(sched) else None
    world = _world[0]
    now = world.monotonic()
    _slept_since[ident] = now
    _sleeping[ident] = now + seconds
    try:
        world.sleep(seconds)
    finally:
        _sleeping.pop(ident, None)
        _slept_since.pop(ident, None)
        if end is not None and sched is not None and _at_rest(sched):
            sched.clock.advance_to(end)


def in_flight(horizon: float) -> str | None:
    """The real work outside the scheduler that may still wake a flow thread within
    ``horizon`` real seconds, or None."""
    now = _world[0].monotonic()
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, end in list(_sleeping.items()):
        if end - now <= horizon:
            return f"thread {names.get(ident, ident)!r} (sleeping in real time)"
    child = _living_child()
    if child is not None:
        return child
    return _running_thread(names)


def _fresh_long_sleep(grace: float) -> str | None:
    """A thread outside that began a real sleep within the last ``grace`` seconds,
    which ends later than ``grace`` from now. A sleep that began after now was read on
    another clock (a faked one's block began meanwhile): it says nothing on this one."""
    now = _world[0].monotonic()
    for ident, since in list(_slept_since.items()):
        end = _sleeping.get(ident)
        if end is not None and 0 <= now - since <= grace and end - now > grace:
            name = next((t.name for t in threading.enumerate() if t.ident == ident), ident)
            return f"thread {name!r} (sleeping in real time)"
    return None


def _living_child() -> str | None:
    try:
        # WNOWAIT: an exited child stays for its own waiter to reap.
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (ChildProcessError, AttributeError, OSError):
        return None  # no child (or no waitid on this platform)
    if info is None:
        return "a child process (still running)"
    return "a child process (exited, not yet waited for)"


def _outside_threads() -> list[threading.Thread]:
    """The threads the harness does not manage (nor runs itself), and the flow threads
    blocked outside the scheduler, but this one."""
    me = _get_ident()
    found = []
    for thread in threading.enumerate():
        ident = thread.ident
        if ident is None or ident == me:
            continue
        if _blocked_outside(ident) or not (
            isinstance(thread, _RealThread) or _by_thread.get(ident)  # the scheduler sees it
        ):
            found.append(thread)
    return found


def _blocked_outside(ident: int) -> bool:
    """Whether thread ``ident`` is a flow thread the liveness guard found blocked outside
    the scheduler (it runs outside it until its next switch point)."""
    try:
        stack = _by_thread.get(ident)
        return bool(stack) and stack[-1].outside  # type: ignore[index]
    except IndexError:  # the stack emptied meanwhile: the thread left
        return False


#: Modules whose waits are I/O waits: a thread in one is woken by the OS or another
#: process, not by what a flow thread just did (a lock it released, a queue it fed).
_IO_WAITS = frozenset({"selectors", "socket", "ssl", "select", "multiprocessing.connection"})


def _may_wait_for_gil() -> bool:
    """Whether a thread outside the harness may have just been woken by a flow thread
    (it waits on a lock, a queue, a future): it would wait for the GIL, asleep to the
    OS. A thread in an I/O wait (crewai's event-bus loop in its selector) is not."""
    threads = _outside_threads()
    if not threads:
        return False
    frames = others_frames()
    for thread in threads:
        frame = frames.get(thread.ident) if thread.ident is not None else None
        if frame is None or frame.f_globals.get("__name__") not in _IO_WAITS:
            return True
    return False


#: Each flow thread blocked outside the scheduler: its CPU time (ns) at the last look
#: of this idle wait (native id -> ns; emptied as an idle wait begins, see hold).
_cpu_seen: dict[int, int] = {}


def _cpu_ns(native: int) -> int | None:
    """The CPU time thread ``native`` has run, in nanoseconds (Linux's schedstat)."""
    try:
        with open(f"/proc/self/task/{native}/schedstat", "rb") as stat:
            return int(stat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _working(native: int, running: bool) -> bool:
    """Whether a flow thread blocked outside is at work: running, or it ran since the
    last look. Running Python, it waits for the GIL whenever the looking thread holds
    it (the OS says asleep then), so its CPU time is what tells."""
    cpu = _world[0].cpu_ns(native)
    before = _cpu_seen.get(native)
    if cpu is not None:
        _cpu_seen[native] = cpu
    return running or (before is not None and cpu is not None and cpu > before)


def _running_thread(names: dict[int | None, str]) -> str | None:
    """A thread the harness does not manage that the OS reports running, or a flow thread
    blocked outside the scheduler at work (Linux only)."""
    threads = _outside_threads()
    _forget_stat_files({getattr(thread, "native_id", None) for thread in threads})
    for thread in threads:
        ident = thread.ident
        native = getattr(thread, "native_id", None)
        if native is None:
            continue
        state = _world[0].state(native)
        if state is None:
            continue
        running = state == b"R"
        if ident is not None and _blocked_outside(ident):
            if _working(native, running):
                return f"{_FLOW_THREAD}{names.get(ident, ident)!r} (running outside the scheduler)"
        elif running:
            return f"thread {names.get(ident, ident)!r} (running)"
    return None


#: Each outside thread's ``/proc`` stat file, kept open and read again at each look: an
#: idle clock jump looks at every outside thread, and opening and closing the file cost
#: ten times the read (about 60 µs against 5), most of a schedule's look. Keyed by the
#: process too: a child forked since must not read its parent's threads.
_stat_files: dict[tuple[int, int], int] = {}
_stat_lock = internal_lock()


def _task_stat(native: int) -> bytes | None:
    """The ``/proc`` stat line of thread ``native`` of this process (None: it is gone)."""
    key = (os.getpid(), native)
    with _stat_lock:
        fd = _stat_files.get(key)
        try:
            if fd is None:
                fd = os.open(f"/proc/self/task/{native}/stat", os.O_RDONLY | os.O_CLOEXEC)
                _stat_files[key] = fd
            return os.pread(fd, 4096, 0)
        except OSError:
            # the thread ended (its native id may come back for another thread: open anew)
            stale = _stat_files.pop(key, None)
            if stale is not None:
                os.close(stale)
            return None


def _forget_stat_files(alive: set[int | None]) -> None:
    """Close the stat files of threads that are no longer outside threads (ended, or
    managed now): one file per live outside thread at most."""
    pid = os.getpid()
    with _stat_lock:
        for key in [k for k in _stat_files if k[0] != pid or k[1] not in alive]:
            fd = _stat_files.pop(key)
            if key[0] == pid:
                os.close(fd)


_world.append(RealWorld(_real_sleep, real_monotonic, _task_state, _cpu_ns))


def hold(sched: ThreadScheduler, due: float, held: float) -> float | None:
    """Before the clock jumps to ``due``: if real work outside the scheduler is in flight
    and this idle wait has held for less than the block grace (``held`` real seconds so
    far), wait a moment of real time, let the clock follow (never past ``due``) and
    return the new total; None: jump now."""
    if held >= sched.block_grace:
        return None
    if not held:
        _cpu_seen.clear()  # a flow thread outside is at work if it runs from now on
    what = in_flight(sched.block_grace - held)
    if what is None and not held and sched.chooser is None and _may_wait_for_gil():
        # A thread outside that a flow thread just woke (a queue.put) waits for the GIL
        # this thread holds, asleep to the OS: let it take the GIL once, then look again.
        _world[0].sleep(_GIL_TURN)
        what = in_flight(sched.block_grace)
        if what is None and sched.has_ready(None):
            # It did its work in that turn and woke a flow thread (aiosqlite's thread
            # answered the loop): that thread runs before the clock may jump.
            return 0.0
    if what is None:
        # Work just begun that cannot end within the grace (a long real sleep) is let
        # go: the clock jumps without it, and the warning says so. (A thread sleeping
        # since long before, a library's heartbeat, is not this run's work.)
        still = _fresh_long_sleep(sched.block_grace)
        if held or still is not None:
            if not held:
                sched.real_work.hold_started = (sched.clock.monotonic(), still or "")
            _note(sched, what=still or "", held=held, gave_up=still is not None)
        return None
    world = _world[0]
    started = world.monotonic()
    if not held:
        sched.real_work.hold_started = (sched.clock.monotonic(), what)
    world.sleep(_PAUSE)
    slept = world.monotonic() - started
    sched.clock.advance_to(min(due, sched.clock.monotonic() + slept))
    total = held + slept
    if total >= sched.block_grace:
        _note(sched, what=what, held=total, gave_up=True)
    return total


def held_until_ready(sched: ThreadScheduler, held: float) -> None:
    """A flow thread became runnable during a hold: the hold ends, noted."""
    if held:
        _note(sched, what="", held=held, gave_up=False)


def _note(sched: ThreadScheduler, *, what: str, held: float, gave_up: bool) -> None:
    from pytest_flows._internal.errors import FlowsWarning

    state = sched.real_work
    at, first = state.hold_started
    done = Hold(at=at, real_seconds=held, what=first or what, gave_up=gave_up)
    state.held.append(done)
    if state.on_hold is not None and not done.what.startswith(_FLOW_THREAD):
        state.on_hold(done)
    kind = first.split(" (")[0]
    if gave_up and kind not in state.warned:
        state.warned.add(kind)
        warnings.warn(
            FlowsWarning(
                f"virtual time waited {sched.block_grace:g} real seconds for {first}, outside "
                "the scheduler, then moved on without it: a flow thread waiting for it may "
                "time out where the real runtime would not. Raise the grace with "
                "@pytest.mark.flows(block_grace=...), or build the thread or pool during "
                "the test (it is then managed)."
            ),
            stacklevel=2,
        )


def note_read(me: Participant) -> None:
    """A virtual clock was read on ``me``'s thread: count it towards a preemption."""
    sched = me.sched
    state = sched.real_work
    mark = (sched.switches, sched.clock.monotonic_ns())
    if mark != state.spin_mark:  # the baton changed hands or the clock moved: progress
        state.spin_mark = mark
        state.spin_reads = 0
        state.spin_alone = 0.0
        return
    state.spin_reads += 1
    if state.spin_reads >= SPIN_READS and not sched.aborted and sched.chooser is None:
        state.spin_reads = 0
        _preempt(sched, me)
        # the clock this preemption moved is no progress of anyone else's
        state.spin_mark = (sched.switches, sched.clock.monotonic_ns())


def _preempt(sched: ThreadScheduler, me: Participant) -> None:
    """``me`` ran :data:`SPIN_READS` clock reads with nothing changing: it yields."""
    if sched.has_ready(me):
        # Its quantum is used up: as an OS would, the others ready go first (under a
        # seed the spinner's priority drops below theirs, by a seeded draw).
        sched.spent_quantum(me)
        sched.switch(me, why="yield")
        return
    # Alone: real time passes for a real spinning thread; so does virtual time.
    clock = sched.clock
    due = sched.next_deadline()
    if due is not None or in_flight(sched.block_grace) is not None or sched.has_outside():
        target = clock.monotonic() + SPIN_QUANTUM
        clock.advance_to(target if due is None else min(due, target))
        sched.real_work.spin_alone = 0.0
        sched.switch(me, why="yield")
        return
    state = sched.real_work
    state.spin_alone += SPIN_QUANTUM
    clock.advance(SPIN_QUANTUM)
    if state.spin_alone >= state.spin_limit:
        state.spin_alone = 0.0
        sched.spinning(me, spinning_method(sys._getframe(2)), state.spin_limit)


def spinning_method(frame: object) -> str:
    """The innermost frame of the user's code on the spinning thread's stack."""
    for entry in reversed(traceback.extract_stack(frame)):  # type: ignore[arg-type]
        path = entry.filename.replace(os.sep, "/")
        if "/pytest_flows/" in path or "/freezegun/" in path or path.endswith("/time.py"):
            continue
        return f"{entry.name} ({entry.filename}:{entry.lineno})"
    return "an unknown method"
