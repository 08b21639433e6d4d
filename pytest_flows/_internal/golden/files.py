"""Golden files: where they live, and their stable, readable, secret-free JSON form."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.file_names import item_file_stem
from pytest_flows._internal.golden.versions import FORMAT, READABLE, WRITTEN_BY
from pytest_flows._internal.secret_check import (
    secret_env_values,
    secret_fields,
    secret_values_in,
)

__all__ = [
    "FORMAT",
    "GOLDEN_DIR",
    "dump",
    "golden_path",
    "legacy_golden_path",
    "load",
    "scrub",
    "secret_fields",
    "secrets_in",
]

GOLDEN_DIR = "__goldens__"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def golden_path(item: pytest.Item) -> Path:
    """``<test dir>/__goldens__/<module>/<test>.json``, like syrupy's ``__snapshots__``;
    ``<test>`` is the node id below the module (classes included, parametrize ids
    escaped), so no two tests share a file."""
    module = Path(str(item.path))
    return module.parent / GOLDEN_DIR / module.stem / f"{item_file_stem(item)}.json"


def legacy_golden_path(item: pytest.Item) -> Path:
    """Where versions before 0.2 kept the file (the test name squashed, class dropped)."""
    module = Path(str(item.path))
    name = _UNSAFE.sub("_", item.name).strip("_") or "test"
    return module.parent / GOLDEN_DIR / module.stem / f"{name}.json"


def dump(document: dict[str, Any]) -> str:
    # sort_keys and fixed separators: the same run writes the same bytes on
    # any machine, hash seed or xdist worker.
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FlowsUsageError(
            f"no golden file at {path}; give the path of a file a @pytest.mark.golden test "
            "recorded (pytest --flows-golden-update writes them under __goldens__/)."
        ) from None
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise FlowsUsageError(
            f"golden file {path} is not valid JSON ({exc}); it was edited by hand or "
            "merged badly. Re-record it with --flows-golden-update."
        ) from None
    if not isinstance(document, dict):
        raise FlowsUsageError(
            f"golden file {path} is not a pytest-flows golden (not a JSON object); "
            "re-record it with --flows-golden-update."
        )
    fmt = document.get("format")
    if isinstance(fmt, int) and not isinstance(fmt, bool) and fmt > FORMAT:
        raise FlowsUsageError(
            f"golden file {path} has format {fmt}, written by a newer pytest-flows than this "
            f"one (which reads formats {', '.join(map(str, READABLE))}); upgrade pytest-flows."
        )
    if fmt not in READABLE or isinstance(fmt, bool):
        raise FlowsUsageError(
            f"golden file {path} is not a pytest-flows golden (formats "
            f"{', '.join(f'{n}: {WRITTEN_BY[n]}' for n in READABLE)}); "
            "re-record it with --flows-golden-update."
        )
    problem = _shape_problem(document)
    if problem:
        raise FlowsUsageError(
            f"golden file {path} is damaged: {problem}. It was edited by hand or merged badly; "
            "restore it from version control, or re-record it with --flows-golden-update."
        )
    return document


#: what golden replay reads of every run (a framework's golden part adds its own keys)
_RUN_KEYS = {"flow": str, "trace": list, "output": str}
_RECORD_KEYS = {
    "saves": ("state_id", "index", "method", "raw"),
    "checkpoints": ("id", "raw"),
}


def _shape_problem(document: dict[str, Any]) -> str | None:
    """What is missing or mistyped in a golden document, or None: checked before replay
    reads it, so a damaged file is named instead of failing with a bare KeyError."""
    from pytest_flows._internal.contract.adapters import adapter_specs
    from pytest_flows._internal.golden.adapters import run_keys

    runs = document.get("runs")
    if not isinstance(runs, list):
        return "it has no 'runs' list"
    for n, run in enumerate(runs, start=1):
        if not isinstance(run, dict):
            return f"run {n} is not an object"
        framework = run.get("framework")
        known = [spec.framework for spec in adapter_specs()]
        if framework not in known:
            return f"run {n} names the framework {framework!r} (known: {', '.join(sorted(known))})"
        for key, kind in (run_keys(framework) or _RUN_KEYS).items():
            if not isinstance(run.get(key), kind):
                return f"run {n} has no {kind.__name__} {key!r}"
        for key, needed in _RECORD_KEYS.items():
            for k, record in enumerate(run.get(key) or [], start=1):
                if not isinstance(record, dict) or not all(f in record for f in needed):
                    return f"run {n}, {key[:-1]} {k} lacks one of {', '.join(needed)}"
        for k, resumed in enumerate(run.get("resumes") or [], start=1):
            if not isinstance(resumed, dict) or not {"from", "trace", "output"} <= set(resumed):
                return f"run {n}, resume {k} lacks one of from, trace, output"
    return None


def scrub(text: str) -> str:
    """``text`` without the value of any secret environment variable of this process."""
    for name, value in secret_env_values():
        text = text.replace(value, f"<secret:{name}>")
    return text


def secrets_in(text: str) -> list[str]:
    """Names of the secret environment variables whose values occur in ``text``, in any
    spelling the plugin produces (see :mod:`pytest_flows._internal.secret_check`)."""
    return secret_values_in(text)
