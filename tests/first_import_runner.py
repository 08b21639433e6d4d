"""Import each named module as the first import of a test module, each in a process that
has imported nothing of it yet: ``python first_import_runner.py WORKDIR MODULE...``.

A fresh interpreter per module costs an interpreter's start and pytest's import each
time; here one interpreter imports pytest and the plugin (what ``-p`` does first), then
forks a child per module, which runs pytest on a test module whose first line imports
it. The child starts from the parent's state, so nothing it imports was imported before.
Prints one JSON line per module: its name, pytest's exit code and, on failure, its output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

import pytest_flows._internal.plugin  # noqa: F401  (as -p does before collection)

PYTEST_ARGS = ["-q", "-p", "pytest_flows._internal.plugin", "-p", "no:cacheprovider"]


def _write_test(folder: Path, module: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # `import *` also resolves the lazily loaded names of a package's __all__.
    (folder / "test_first_import.py").write_text(
        f"from {module} import *  # noqa: F403\n\n\ndef test_imported():\n    pass\n"
    )


def _in_child(folder: Path, body: Callable[[], int]) -> tuple[int, str]:
    """``body()`` in a forked child, its output to a file: the exit code and output."""
    out = folder / "output.txt"
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.chdir(folder)
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            code = body()
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.read_text() if out.exists() else ""


def _forked(folder: Path) -> tuple[int, str]:
    """pytest on the test module, in a forked child."""
    return _in_child(folder, lambda: int(pytest.main([*PYTEST_ARGS, "test_first_import.py"])))


def _bare(folder: Path, module: str) -> tuple[int, str]:
    """The import alone, in a forked child: for modules that import no framework, which
    no hook of the plugin's pytest session can re-enter (import-linter keeps the core
    free of the frameworks), so a session around the import adds nothing but its cost."""

    def body() -> int:
        exec(f"from {module} import *", {})
        framework = {"crewai", "agent_framework", "langgraph"} & set(sys.modules)
        if framework:  # then a hook could re-enter it: it needs the pytest run
            print(f"{module} imported {sorted(framework)}: check it in a framework group")
        return 1 if framework else 0

    return _in_child(folder, body)


def _fresh(folder: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST_ARGS, "test_first_import.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout + done.stderr


def _preload() -> None:
    # Libraries a framework imports and that pytest-flows never hooks (only the
    # frameworks' own packages are): importing them once here spares each child
    # that part of the framework's import, and changes no order that matters.
    for name in filter(None, os.environ.get("FIRST_IMPORT_PRELOAD", "").split(",")):
        __import__(name)


def main(workdir: str, modules: list[str]) -> None:
    _preload()
    # Forking a process that has started no thread is safe; where there is no fork,
    # a fresh interpreter per module does the same, slower.
    run = _forked if hasattr(os, "fork") else _fresh
    bare = os.environ.get("FIRST_IMPORT_BARE") == "1" and hasattr(os, "fork")
    for index, module in enumerate(modules):
        folder = Path(workdir) / str(index)
        _write_test(folder, module)
        code, output = _bare(folder, module) if bare else run(folder)
        line = {"module": module, "code": code, "output": "" if code == 0 else output}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
