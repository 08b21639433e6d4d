"""The look at threads outside the scheduler (real_work.py) before the clock jumps: each
outside thread's /proc stat file is kept open and read again, never opened per look,
and closed once the thread is gone."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from pytest_flows._internal.runtime import real_work

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc is Linux's: elsewhere there is no look"
)


def _kept_file(native: int) -> int | None:
    return real_work._stat_files.get((os.getpid(), native))


def _reads(fd: int, native: int) -> bool:
    """Whether ``fd`` is (still) open on thread ``native``'s stat file."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}").endswith(f"/task/{native}/stat")
    except OSError:
        return False


def test_an_outside_thread_is_read_again_from_one_open_file_and_forgotten_when_gone() -> None:
    stop = threading.Event()
    waiter = threading.Thread(target=stop.wait, name="outside-waiter")
    waiter.start()
    native = waiter.native_id
    assert native is not None
    try:
        state = real_work._task_stat(native)
        assert state is not None and state.split(b" ", 1)[0] == str(native).encode()
        fd = _kept_file(native)
        assert fd is not None and _reads(fd, native)
        for _ in range(20):
            assert real_work._task_stat(native) is not None
        assert _kept_file(native) == fd  # read again, not opened again
        real_work._forget_stat_files({native})
        assert _kept_file(native) == fd  # still an outside thread: kept
    finally:
        stop.set()
        waiter.join()
    real_work._forget_stat_files(set())  # no longer among the outside threads
    assert _kept_file(native) is None
    assert not _reads(fd, native)  # its file is closed with it


def test_a_thread_gone_between_two_looks_reads_as_gone_and_its_file_is_closed() -> None:
    stop = threading.Event()
    waiter = threading.Thread(target=stop.wait)
    waiter.start()
    native = waiter.native_id
    assert native is not None
    assert real_work._task_stat(native) is not None
    fd = _kept_file(native)
    assert fd is not None
    stop.set()
    waiter.join()
    # join() returns once Python is done with the thread; the OS task ends a moment later
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/self/task/{native}") and time.monotonic() < deadline:
        os.sched_yield()
    assert real_work._task_stat(native) is None  # the task is gone from /proc
    assert _kept_file(native) is None
    assert not _reads(fd, native)
