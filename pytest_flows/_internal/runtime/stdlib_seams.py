"""Every stdlib patch pytest-flows makes, declared in one place, with its check.

While a flows scheduler is active, primitives *created* by anyone become
scheduler-aware: ``threading.Lock`` (and with it Condition, Event, Semaphore,
Barrier, ``queue.Queue`` and ``concurrent.futures.Future``, all built on it),
``threading.RLock``, ``queue.SimpleQueue`` (thread pools' work queues; like
``threading.Lock``, a switch for the session, see ``queue_factory.py``), and the
calls ``time.sleep``, ``Thread.start`` and ``Thread.join``. A primitive used by a
thread the harness does not manage behaves exactly like the real one, so
objects that outlive the test stay correct.

Patching at this level (rather than each primitive) is what makes every
higher-level primitive a switch point: they all block in
``threading._allocate_lock()``/``threading.Lock()`` locks.

``Thread.start`` is patched once for two jobs: the scheduler adopts a thread a
managed thread starts, and while :func:`inheriting_context` is active a started
thread runs in a copy of its starter's context (see ``thread_context.py``).
:data:`SEAMS` also declares the other stdlib patches (the network guard's
``socket`` functions, the human fake's ``input``); :func:`check_stdlib_seams`
resolves them all.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import queue
import threading
from collections.abc import Iterator
from typing import Any

from pytest_flows._internal.contract.seams import Registry, Seam, check
from pytest_flows._internal.runtime import lock_factory as _lock_factory
from pytest_flows._internal.runtime import queue_factory as _queue_factory
from pytest_flows._internal.runtime.participants import (
    FlowsAborted,
    Participant,
    _by_thread,
    _get_ident,
    _real_lock,
    _real_sleep,
    _real_thread_start,
    _RealThread,
    current,
)
from pytest_flows._internal.runtime.real_work import (
    follow_sleeps,
    forget_test_threads,
    outside_sleep,
)
from pytest_flows._internal.runtime.rlock import SchedRLock

__all__ = [
    "FREEZEGUN",
    "PYDANTIC",
    "SEAMS",
    "QuietLock",
    "SchedLock",
    "check_stdlib_seams",
    "inheriting_context",
    "patched",
]

_real_join = threading.Thread.join


class SchedLock:
    """A ``threading.Lock`` whose blocking acquire is a switch point for managed threads."""

    __slots__ = ("__weakref__", "_real", "number")

    def __init__(self) -> None:
        self._real = _real_lock()
        ident = _get_ident()
        self.number = next(_lock_factory.numbers) if ident not in _lock_factory.starting else None

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if timeout == -1:
            # The hot path (an uncontended lock in a plain thread or at seed 0, where
            # taking a free lock is never a switch point), inlined: Conditions, Futures
            # and RLocks come through here hundreds of times a run.
            stack = _by_thread.get(_get_ident())
            if not stack or stack[-1].sched.seed == 0:
                if self._real.acquire(False):
                    return True
                if not blocking:
                    return False
        me = current()
        if me is None:
            if me is None and timeout == -1:
                return self._real.acquire(blocking)
            return self._real.acquire(blocking, timeout)
        if not blocking:
            if timeout != -1:
                raise ValueError("can't specify a timeout for a non-blocking call")
            return self._real.acquire(False)
        if timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be a non-negative number")
        sched = me.sched
        if sched.seed != 0:
            sched.switch(me, why="lock")
        if self._real.acquire(False):
            return True
        deadline = None if timeout == -1 else sched.clock.after(timeout)
        while True:
            ready = sched.block(me, self._free, deadline, "a lock (see its stack)")
            if self._real.acquire(False):
                return True
            if current() is None:  # the test ended meanwhile: an ordinary thread now
                return self._real.acquire(True, -1 if deadline is None else timeout)
            if not ready:
                return False

    def _free(self) -> bool:
        return not self._real.locked()

    def release(self) -> None:
        self._real.release()
        stack = _by_thread.get(_get_ident())
        if not stack:  # from outside the flow
            _poke_idle()
            return
        top = stack[-1]
        # ``top.let_go``, inlined: Conditions and Futures release hundreds of times a run
        if top.generation != top.sched.generation and current() is None:
            _poke_idle()

    def locked(self) -> bool:
        return self._real.locked()

    def _at_fork_reinit(self) -> None:
        self._real = _real_lock()

    # ``threading.Condition`` takes these three from its lock where the lock has them,
    # and tries each (an AttributeError raised and caught) where it does not: three
    # errors for every Condition, Event, Semaphore and Queue made during a run, most of
    # what making one cost. They do what Condition's own fallbacks do, call for call.
    def _release_save(self) -> None:
        self.release()

    def _acquire_restore(self, state: object) -> None:
        self.acquire()

    def _is_owned(self) -> bool:
        # A take that does not block is never a switch point, under any seed: the real
        # lock's, straight (Condition.notify asks this of a held lock, each notify).
        if self._real.acquire(False):
            self.release()
            return False
        return True

    def __enter__(self) -> bool:
        # acquire()'s hot path, inlined: a ``with`` block is how Conditions and Futures
        # take their locks, hundreds of times a run
        stack = _by_thread.get(_get_ident())
        if (not stack or stack[-1].sched.seed == 0) and self._real.acquire(False):
            return True
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        # release(), inlined (see __enter__)
        self._real.release()
        stack = _by_thread.get(_get_ident())
        if not stack:
            _poke_idle()
            return
        top = stack[-1]
        if top.generation != top.sched.generation and current() is None:
            _poke_idle()

    acquire_lock = acquire
    release_lock = release
    locked_lock = locked

    def __repr__(self) -> str:
        state = "locked" if self._real.locked() else "unlocked"
        return f"<pytest-flows lock {state} at {id(self):#x}>"


class QuietLock(SchedLock):
    """A managed lock whose take of a free lock is never a switch point, under any seed;
    a held one still blocks through the scheduler (a switch point, as a
    :class:`SchedLock`'s blocking acquire is).

    For a framework's own bookkeeping whose locks decide nothing a program can see (a
    pool's work queue, a future's condition): taking them free at every seed would make
    each a choice a search branches on, none of which changes the outcome."""

    __slots__ = ()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self._real.acquire(False):  # a non-blocking take is never a switch point
            return True
        if not blocking:
            return False
        return SchedLock.acquire(self, True, timeout)

    def __enter__(self) -> bool:
        if self._real.acquire(False):
            return True
        return SchedLock.acquire(self)

    acquire_lock = acquire

    def __repr__(self) -> str:
        return f"<quiet {SchedLock.__repr__(self)}>"


_idle_schedulers: list[Any] = []


def _poke_idle() -> None:
    for sched in list(_idle_schedulers):
        if sched.idle:
            sched.poke()


def _sleep(seconds: float) -> None:
    me = current()
    if me is None:
        if isinstance(seconds, int | float) and 0 < seconds < math.inf:
            # real work in flight: it holds virtual time, and outside a run the clock
            # follows it if the thread is the test's own (real_work.py)
            outside_sleep(seconds, _idle_schedulers[-1] if _idle_schedulers else None)
        else:
            _real_sleep(seconds)
        return
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        _real_sleep(seconds)  # the real error for a non-number
        return
    if math.isnan(seconds) or seconds < 0:
        raise ValueError("sleep length must be non-negative")
    me.sched.sleep(me, float(seconds))


#: threads_inherit_context() blocks open: while > 0, started threads copy the context.
_inheriting = 0
_POOL_WORKER_MODULE = "concurrent.futures.thread"


def _start(self: threading.Thread) -> None:
    if _inheriting:
        # Pool workers are left alone: a pool outlives the work that started it,
        # and each work item carries its own context (asyncio.to_thread does).
        target: Any = getattr(self, "_target", None)
        if getattr(target, "__module__", None) != _POOL_WORKER_MODULE:
            context = contextvars.copy_context()
            in_context = self.run
            self.run = lambda: context.run(in_context)  # type: ignore[method-assign]
    me = current()
    if me is None or isinstance(self, _RealThread) or me.sched.aborted:
        # After a run was aborted its loops run on as plain loops: a thread they start
        # (asyncio's default executor) is an ordinary one, or nobody would schedule it.
        if me is None and _depth and not isinstance(self, _RealThread):
            follow_sleeps(self)  # started by the test, outside any run (real_work.py)
        _real_thread_start(self)
        return
    sched = me.sched
    child = sched.adopt(self.name)
    self._flows_participant = child  # type: ignore[attr-defined]
    body = self.run

    def run() -> None:
        try:
            # Inside the try: a run aborted before this thread's first turn raises
            # FlowsAborted here, and the thread must still leave (threads.py, _unbind).
            sched.begin(child)
            body()
        except FlowsAborted:
            pass
        finally:
            sched.leave(child)

    self.run = run  # type: ignore[method-assign]
    sched.start(self, child)


def _join(self: threading.Thread, timeout: float | None = None) -> None:
    me = current()
    child: Participant | None = getattr(self, "_flows_participant", None)
    if me is None or child is None or child.sched is not me.sched:
        _real_join(self, timeout)
        return
    sched = me.sched
    deadline = None if timeout is None else sched.clock.after(max(timeout, 0))
    if sched.block(me, lambda: child.done, deadline, f"Thread.join({self.name!r})"):
        _real_join(self)  # the OS thread is past its last managed step
    elif current() is None:  # the test ended meanwhile
        _real_join(self, timeout)


_SCHEDULER = "the thread scheduler"
_SOCKET_WHY = "the network guard refuses hosts outside allow_hosts"

SEAMS = Registry(
    "Python standard library",
    __name__,
    Seam(
        "threading:Lock",
        "patch",
        f"{_SCHEDULER}: for the session, a factory that builds managed locks while a "
        "scheduler is active, even bound at import (lock_factory.py)",
    ),
    Seam(
        "threading:_allocate_lock",
        "patch",
        f"{_SCHEDULER}: Condition, Event and friends build their waiters on it",
    ),
    Seam(
        "threading:Condition.wait",
        "read",
        f"{_SCHEDULER} sees a Condition block only through _allocate_lock()",
        source=("_allocate_lock()",),
    ),
    Seam(
        "threading:_CRLock",
        "patch",
        f"{_SCHEDULER}: None while active, so RLock() (however it was bound) builds the "
        "pure-Python RLock, which builds on Lock",
    ),
    Seam(
        "threading:RLock",
        "read",
        f"{_SCHEDULER}: RLock() picks the C RLock only when _CRLock is set",
        source=("if _CRLock is None:",),
    ),
    Seam(
        "threading:_PyRLock",
        "patch",
        f"{_SCHEDULER}: the RLock that builds on Lock; while active, SchedRLock (the same "
        "class, its hot paths inlined)",
        source=("self._block = _allocate_lock()", "self._owner = None", "self._count = 0"),
    ),
    Seam(
        "queue:SimpleQueue",
        "patch",
        f"{_SCHEDULER}: for the session, a class that builds the queue on Lock (pools' "
        "work queues, aiosqlite's) while a scheduler is active, even bound at import "
        "(queue_factory.py)",
    ),
    Seam("queue:_PySimpleQueue", "read", f"{_SCHEDULER}: the SimpleQueue that builds on Lock"),
    Seam("time:sleep", "patch", f"{_SCHEDULER}: a managed thread sleeps on virtual time"),
    Seam(
        "time:time", "patch", "while frozen: the epoch plus the virtual clock (virtual_clocks.py)"
    ),
    Seam("time:time_ns", "patch", "the same, in exact nanoseconds (virtual_clocks.py)"),
    Seam(
        "threading:Thread.start",
        "patch",
        f"{_SCHEDULER} adopts threads; a thread started in a test inherits its context",
        params=("self",),
    ),
    Seam("threading:Thread.join", "patch", f"{_SCHEDULER}: joining is a switch point"),
    Seam(
        "threading:Thread.__init__",
        "read",
        "a pool worker is told apart by its _target",
        source=("self._target = ",),
    ),
    *(
        Seam(f"socket:socket.{name}", "patch", _SOCKET_WHY)
        for name in ("connect", "connect_ex", "sendto", "sendmsg")
    ),
    Seam("socket:SocketType", "patch", _SOCKET_WHY),
    Seam("_socket:SocketType", "patch", _SOCKET_WHY),
    Seam("_socket:socket", "patch", _SOCKET_WHY),
    # socket.getaddrinfo wraps _socket's; the other lookups are _socket's, imported by name.
    Seam("_socket:getaddrinfo", "patch", _SOCKET_WHY),
    *(
        Seam(f"{module}:{name}", "patch", _SOCKET_WHY)
        for module in ("_socket", "socket")
        for name in ("gethostbyname", "gethostbyname_ex", "gethostbyaddr", "getnameinfo")
    ),
    Seam(
        "concurrent.futures._base:Future.__init__",
        "read",
        "crewai's inline bus settles its futures on a real, shared condition (crewai/patches.py)",
        source=("self._condition = threading.Condition()",),
    ),
    Seam("builtins:input", "patch", "the human fake answers input() in flow code"),
    Seam("uuid:os", "patch", "uuid4() reads os.urandom through it: seeded ids (identity.py)"),
    Seam(
        "asyncio.base_events:BaseEventLoop.time",
        "patch",
        "loops that are not the harness's keep real time under the frozen clock",
    ),
    Seam(
        "asyncio.events:AbstractEventLoopPolicy.new_event_loop",
        "patch",
        "the policy pytest-asyncio kept hands out deterministic loops (shadowed per policy)",
    ),
)

#: freezegun's internals the frozen wall clock (identity.py) relies on.
FREEZEGUN = Registry(
    "freezegun",
    __name__,
    Seam("freezegun.api:ignore_lists", "patch", "only the harness's modules read real time"),
    Seam("freezegun.api:freeze_factories", "patch", "now() follows the virtual clock"),
    Seam(
        "freezegun.api:call_stack_inspection_limit",
        "patch",
        "only a call's direct caller decides whether it reads real time (pytest, hypothesis)",
    ),
    Seam("freezegun.api:FakeDatetime", "patch", "renamed while frozen so pickles name datetime"),
    Seam(
        "freezegun.api:_get_fake_monotonic",
        "patch",
        "monotonic() and perf_counter() read the virtual clock's seconds (virtual_clocks.py)",
    ),
    Seam(
        "freezegun.api:_get_fake_monotonic_ns",
        "patch",
        "their _ns forms read its nanoseconds (virtual_clocks.py)",
    ),
    Seam("freezegun.api:FakeDate", "patch", "renamed while frozen so pickles name date"),
    Seam(
        "freezegun.api:_get_cached_module_attributes",
        "patch",
        "start() finds each module's clock functions once per namespace size (clock_scan.py)",
        params=("module",),
        source=("_get_module_attributes_hash(module) == module_hash",),
    ),
    Seam("freezegun.api:real_date", "read", "the real date class pydantic compares with"),
    Seam("freezegun.api:real_datetime", "read", "the real datetime class pydantic compares with"),
)

#: pydantic's internals the frozen wall clock (frozen_dates.py) relies on.
PYDANTIC = Registry(
    "pydantic",
    __name__,
    Seam(
        "pydantic._internal._generate_schema:datetime",
        "patch",
        "while frozen, a field's class is compared with the real date classes",
        probe=lambda module: (
            None
            if getattr(module, "__name__", None) == "datetime"
            else "is no longer the datetime module"
        ),
    ),
    Seam(
        "pydantic._internal._generate_schema:GenerateSchema.match_type",
        "read",
        "a date field's schema is picked by comparing its class with datetime's by identity",
        source=("obj is datetime.date", "obj is datetime.datetime"),
    ),
)

#: What :func:`patched` installs while a scheduler is active (Thread.start: see _start_users).
# Each keeps the kind of what it replaces (a function stays a function, a class a
# class): annotations, isinstance checks and pydantic schemas see what they see bare.
_SCHEDULER_PATCHES: tuple[tuple[str, Any], ...] = (
    ("threading:_allocate_lock", _lock_factory.lock),
    ("threading:_CRLock", None),
    ("threading:_PyRLock", SchedRLock),
    ("time:sleep", _sleep),
    ("threading:Thread.join", _join),
)


def check_stdlib_seams() -> None:
    """Fail loudly if a Python (or freezegun) version moved what pytest-flows patches."""
    import platform
    from importlib.metadata import version

    check(
        SEAMS,
        owner="stdlib",
        installed=f"Python {platform.python_version()}",
        supported="the Python versions in pyproject.toml's classifiers",
    )
    check(
        FREEZEGUN,
        owner="freezegun",
        installed=f"freezegun {version('freezegun')}",
        supported="freezegun>=1.5",
    )
    check(
        PYDANTIC,
        owner="pydantic",
        installed=f"pydantic {version('pydantic')}",
        supported="pydantic>=2.7",
    )


_depth = 0
_scheduler_patches = contextlib.ExitStack()
_start_users = 0
_start_patch = contextlib.ExitStack()


@contextlib.contextmanager
def _thread_start_patched() -> Iterator[None]:
    """``Thread.start`` is ours while anyone needs it: the scheduler or context inheritance."""
    global _start_users
    _start_users += 1
    if _start_users == 1:
        _start_patch.enter_context(SEAMS["threading:Thread.start"].replace(_start))
    try:
        yield
    finally:
        _start_users -= 1
        if _start_users == 0:
            _start_patch.close()


@contextlib.contextmanager
def inheriting_context() -> Iterator[None]:
    """Until exit, a started thread runs in a copy of the starting thread's context."""
    global _inheriting
    _inheriting += 1
    try:
        with _thread_start_patched():
            yield
    finally:
        _inheriting -= 1


@contextlib.contextmanager
def patched(sched: Any) -> Iterator[None]:
    """Route the stdlib primitives through the scheduler for the block."""
    global _depth
    _idle_schedulers.append(sched)
    _depth += 1
    if current() is None:
        follow_sleeps(threading.current_thread())  # the test's own thread
    try:
        if _depth == 1:
            for target, value in _SCHEDULER_PATCHES:
                _scheduler_patches.enter_context(SEAMS[target].replace(value))
            if threading.Lock is not _lock_factory.lock:  # no plugin installed it
                _scheduler_patches.enter_context(
                    SEAMS["threading:Lock"].replace(_lock_factory.lock)
                )
            _lock_factory.build_with(SchedLock, SchedLock)
            _scheduler_patches.callback(_lock_factory.build_with, None)
            if queue.SimpleQueue is not _queue_factory.SimpleQueue:  # no plugin installed it
                _scheduler_patches.enter_context(
                    SEAMS["queue:SimpleQueue"].replace(_queue_factory.SimpleQueue)
                )
            _queue_factory.build_managed(True)
            _scheduler_patches.callback(_queue_factory.build_managed, False)
        with _thread_start_patched():
            yield
    finally:
        _depth -= 1
        if _depth == 0:
            _scheduler_patches.close()
            forget_test_threads()
        _idle_schedulers.remove(sched)
