"""The harness reads other threads' frames with the cyclic collector off (issue 40).

``sys._current_frames()`` holds the interpreter's lock on its thread list while it makes
frame objects; a collection started by one of those allocations can run a weak
reference's callback, which lets go of the GIL, and a thread starting meanwhile (a
LangGraph pool's new worker) takes the GIL and waits for that lock for ever (CPython
gh-106883, fixed in 3.11.12). The long random-graph check hung that way on 3.11.7: the
liveness watchdog in ``weakref.remove`` under ``others_frames()``, a pool worker in
``Thread.start``, every thread in a futex wait, no CPU.
"""

from __future__ import annotations

import ast
import gc
import subprocess
import sys
import threading
from pathlib import Path
from types import FrameType

import pytest

from pytest_flows._internal.runtime import liveness
from pytest_flows._internal.runtime.frames import current_frames

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_flows"

#: Frames read while another thread starts threads, each read with a collection likely
#: (a low threshold, fresh cycles) whose weakref callback lets go of the GIL. With
#: ``sys._current_frames`` itself, CPython 3.11.7 hung within 50 reads, every time
#: (three runs, no CPU, killed after 20 s); through ``current_frames`` 1,000 reads took
#: 0.3 to 1.2 s.
_READS_WHILE_THREADS_START = """
import gc, sys, threading, time, weakref
from pytest_flows._internal.runtime.frames import current_frames

gc.set_threshold(5)

class Cycle:
    pass

def let_go(_):
    time.sleep(0)  # a callback that lets go of the GIL

done = threading.Event()

def starter():
    while not done.is_set():
        thread = threading.Thread(target=lambda: None)
        thread.start()
        thread.join()

threading.Thread(target=starter, daemon=True).start()
refs = []
for _ in range(1000):
    for _ in range(20):
        cycle = Cycle()
        cycle.me = cycle
        refs.append(weakref.ref(cycle, let_go))
        del cycle
    current_frames()
    if len(refs) > 500:
        refs.clear()
done.set()
print("read 1000 times")
"""


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Replace ``sys._current_frames`` with one that notes whether the collector was on."""
    seen: list[bool] = []
    real = sys._current_frames

    def noting() -> dict[int, FrameType]:
        seen.append(gc.isenabled())
        return real()

    monkeypatch.setattr(sys, "_current_frames", noting)
    return seen


def test_the_collector_is_off_while_the_frames_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    assert gc.isenabled()
    seen = _recording(monkeypatch)
    frames = current_frames()
    assert seen == [False]
    assert gc.isenabled()  # on again after
    assert threading.get_ident() in frames


def test_a_collector_the_test_turned_off_stays_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # LangGraph's test_pregel_loop_refcount runs with gc.disable(): the watchdog must
    # not turn the collector on under it.
    seen = _recording(monkeypatch)
    gc.disable()
    try:
        current_frames()
        assert seen == [False]
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_watchdog_reads_frames_with_the_collector_off(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _recording(monkeypatch)
    frames = liveness.others_frames()
    assert seen == [False]
    assert threading.get_ident() not in frames


def _raw_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_current_frames"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "sys"
    ]


def test_no_module_of_the_harness_calls_sys_current_frames_itself() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "frames.py" and (lines := _raw_calls(path))
    }
    assert found == {}, f"call pytest_flows._internal.runtime.frames.current_frames(): {found}"
    assert _raw_calls(PACKAGE / "_internal" / "runtime" / "frames.py")


def test_frames_read_while_threads_start_never_hang() -> None:
    # the hang itself, in a process of its own (a hung one is killed at the timeout)
    done = subprocess.run(
        [sys.executable, "-c", _READS_WHILE_THREADS_START],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=PACKAGE.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "read 1000 times"
