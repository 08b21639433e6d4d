"""Every framework attribute the flight recorder replaces is declared as a seam of its
adapter (``RECORDER_SEAMS`` in the adapter's ``_seams.py``), so ``check_patch_points()``
notices when a framework release moves one. The recorder patches through
``capture.Patches`` (it imports no harness), so the declarations are matched against
its source: each ``patches.replace(Owner, "name", ...)``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def replaced_in(source: str) -> set[str]:
    """``Owner.name`` for each ``<x>.replace(Owner, name, ...)`` of ``source``; a name
    that is a loop variable over a tuple of strings counts every string."""
    tree = ast.parse(source)
    loops: dict[int, tuple[str, list[str]]] = {}
    for loop in ast.walk(tree):
        if (
            isinstance(loop, ast.For)
            and isinstance(loop.target, ast.Name)
            and isinstance(loop.iter, ast.Tuple)
        ):
            names = [e.value for e in loop.iter.elts if isinstance(e, ast.Constant)]
            for inner in ast.walk(loop):
                loops[id(inner)] = (loop.target.id, [str(n) for n in names])
    found: set[str] = set()
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "replace"
            and len(call.args) == 3
            and isinstance(call.args[0], ast.Name)
        ):
            continue
        owner, name = call.args[0].id, call.args[1]
        if isinstance(name, ast.Constant):
            found.add(f"{owner}.{name.value}")
        elif isinstance(name, ast.Name) and loops.get(id(call), ("", []))[0] == name.id:
            found.update(f"{owner}.{n}" for n in loops[id(call)][1])
        else:
            found.add(f"{owner}.<{ast.unparse(name)}>")  # cannot tell: declare it plainly
    return found


def declared(registry: object) -> set[str]:
    return {seam.target.partition(":")[2] for seam in registry}  # type: ignore[attr-defined]


@pytest.mark.parametrize("framework", ["crewai", "agent_framework"])
def test_every_attribute_the_recorder_replaces_is_a_declared_seam(framework: str) -> None:
    pytest.importorskip(framework)
    import importlib

    seams = importlib.import_module(f"pytest_flows.{framework}._seams")
    source = (ROOT / "pytest_flows" / "recorder" / f"_{framework}.py").read_text()
    patched = replaced_in(source)
    assert patched, "the scan found no patch: it would pass for any recorder"
    assert patched - declared(seams.RECORDER_SEAMS) == set()
    # and the adapter hands them to the seam checks with its own
    adapter = importlib.import_module(f"pytest_flows.{framework}._adapter").ADAPTER
    assert set(seams.RECORDER_SEAMS) <= set(adapter.seams())


def test_the_scan_sees_constant_looped_and_unknown_names() -> None:
    source = (
        "patches.replace(Flow, 'kickoff', k)\n"
        "for name in ('astream', 'stream_events'):\n"
        "    patches.replace(Flow, name, w)\n"
        "patches.replace(Builder, pick(), b)\n"
        "text.replace('a', 'b')\n"
    )
    assert replaced_in(source) == {
        "Flow.kickoff",
        "Flow.astream",
        "Flow.stream_events",
        "Builder.<pick()>",
    }
