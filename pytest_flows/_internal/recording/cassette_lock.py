"""One writer per cassette: a test that may record holds ``<cassette>.lock``.

Two xdist workers recording one cassette at once would each write what they
recorded, the last write winning and the other's interactions lost without a
word. The lock file (created exclusively) names the test and the process that
holds it; a second writer fails at once naming them. A lock whose process is
gone (a killed run) is taken over.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from pytest_flows._internal.errors import FlowsUsageError

__all__ = ["CassetteBusyError", "may_write", "writing"]


class CassetteBusyError(FlowsUsageError):
    """Another test (another xdist worker) is recording this cassette now."""


def may_write(path: Path, record_mode: str) -> bool:
    """Whether a block in ``record_mode`` may write the cassette at ``path``."""
    return record_mode in ("all", "new_episodes") or (record_mode == "once" and not path.exists())


def _holder() -> str:
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] or "a test"
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"{test} (xdist worker {worker})" if worker else test


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _claim(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"test": _holder(), "pid": os.getpid()}, handle)
    return True


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Hold the cassette at ``path`` for writing during the block, or fail naming the holder."""
    lock = path.with_name(path.name + ".lock")
    # folders made for the lock alone go again if nothing was recorded into them
    made = [p for p in [lock.parent, *lock.parent.parents] if not p.exists()]
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        if _claim(lock):
            break
        try:
            held = json.loads(lock.read_text(encoding="utf-8"))
            test, pid = str(held["test"]), int(held["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            test, pid = "an unknown test", -1
        if pid > 0 and _alive(pid):
            raise CassetteBusyError(
                f"the cassette {path} is being recorded by {test} (process {pid}) right now; "
                "two tests recording one cassette at once would lose one's interactions. Give "
                "each test its own cassette (@pytest.mark.recorded(cassette=...)), or record "
                "them one at a time (-n 0), then replay in parallel."
            )
        with contextlib.suppress(FileNotFoundError):  # stale: its process is gone
            lock.unlink()
    else:
        raise CassetteBusyError(f"the cassette {path} is locked by {lock}; delete the lock file.")
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
        for folder in made:  # deepest first
            with contextlib.suppress(OSError):  # not empty: the cassette was written
                folder.rmdir()
