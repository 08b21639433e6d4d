"""Golden files: where they live, and their stable, readable, secret-free JSON form."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.secrets import (
    MIN_SECRET_LENGTH,
    is_secret_env_name,
    is_secret_field_name,
)

__all__ = [
    "FORMAT",
    "GOLDEN_DIR",
    "dump",
    "golden_path",
    "load",
    "scrub",
    "secret_fields",
    "secrets_in",
]

GOLDEN_DIR = "__goldens__"
FORMAT = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def golden_path(item: pytest.Item) -> Path:
    """``<test dir>/__goldens__/<module>/<test name>.json``, like syrupy's ``__snapshots__``."""
    module = Path(str(item.path))
    name = _UNSAFE.sub("_", item.name).strip("_") or "test"
    return module.parent / GOLDEN_DIR / module.stem / f"{name}.json"


def dump(document: dict[str, Any]) -> str:
    # sort_keys and fixed separators: the same run writes the same bytes on
    # any machine, hash seed or xdist worker.
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise FlowsUsageError(
            f"golden file {path} is not valid JSON ({exc}); it was edited by hand or "
            "merged badly. Re-record it with --flows-golden-update."
        ) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise FlowsUsageError(
            f"golden file {path} is not a pytest-flows golden of format {FORMAT}; "
            "re-record it with --flows-golden-update."
        )
    return document


def _secret_values() -> list[tuple[str, str]]:
    from pytest_flows._internal.recording.pytest_wiring import _STARTED_KEYS

    found = {**_STARTED_KEYS, **os.environ}
    return sorted(
        (
            (name, value)
            for name, value in found.items()
            if value and len(value) >= MIN_SECRET_LENGTH and is_secret_env_name(name)
        ),
        key=lambda pair: -len(pair[1]),
    )


def scrub(text: str) -> str:
    """``text`` without the value of any secret environment variable of this process."""
    for name, value in _secret_values():
        text = text.replace(value, f"<secret:{name}>")
    return text


def secrets_in(text: str) -> list[str]:
    """Names of the secret environment variables whose values occur in ``text``."""
    return sorted({name for name, value in _secret_values() if value in text})


def secret_fields(value: Any, path: str = "") -> list[str]:
    """Paths of fields whose names say they hold secrets (``api_key``, ``password``...)."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and is_secret_field_name(key) and item not in (None, ""):
                found.append(where)
            found.extend(secret_fields(item, where))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(secret_fields(item, f"{path}[{index}]"))
    return found
