"""The flight recorder: record production runs of CrewAI Flows and Agent Framework
workflows, one file per run, to replay them as tests (``flows.replay(path)``).

Importable in production: it loads neither pytest nor any test dependency.

.. code-block:: python

    from pytest_flows.recorder import record_flows

    record_flows("recordings/", sample=0.1)   # or PYTEST_FLOWS_RECORD=recordings/,0.1

See docs/recorder.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence

from pytest_flows._internal.contract.registry import RecorderPart, recorder_parts
from pytest_flows._internal.flight.capture import (
    DEFAULT_MAX_BYTES,
    ENV_VAR,
    FlightRecorder,
    install,
    uninstall,
)
from pytest_flows._internal.flight.format import VERSION as FORMAT_VERSION
from pytest_flows._internal.flight.format import Record, RecordError, read_record

__all__ = [
    "ENV_VAR",
    "FORMAT_VERSION",
    "FlightRecorder",
    "Record",
    "RecordError",
    "read_record",
    "record_flows",
    "recording_from_env",
    "stop_recording",
]


def _in_use(framework: str, part: RecorderPart) -> bool:
    return (part.in_use or framework) in sys.modules


def _frameworks(frameworks: Sequence[str] | None) -> dict[str, RecorderPart]:
    """framework -> its recorder part (the adapter registry's: registered adapters too)."""
    parts = recorder_parts()
    if frameworks is not None:
        unknown = [name for name in frameworks if name not in parts]
        if unknown:
            raise ValueError(
                f"record_flows(frameworks={list(frameworks)!r}): unknown {unknown}; "
                f"the frameworks are {', '.join(parts)}."
            )
        return {name: parts[name] for name in frameworks}
    imported = {name: part for name, part in parts.items() if _in_use(name, part)}
    if imported:
        return imported
    # Nothing imported yet: every framework that is installed (its import is paid now).
    return {
        name: part
        for name, part in parts.items()
        if importlib.util.find_spec(name) is not None and importlib.util.find_spec(part.module)
    }


def record_flows(
    directory: str | os.PathLike[str] | None = None,
    *,
    sample: float = 1.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    queue_size: int = 64,
    frameworks: Sequence[str] | None = None,
    factories: Mapping[str, str] | None = None,
) -> FlightRecorder:
    """Record a ``sample`` share of the runs from now on into ``directory``.

    One gzip-compressed JSON-lines file per run (``*.flight.jsonl.gz``), written by
    a background thread; at most ``max_bytes`` (uncompressed) per run; at most
    ``queue_size`` finished runs waiting for the disk (more are dropped and logged).
    ``frameworks`` defaults to those already imported (else those installed).
    ``factories`` maps an Agent Framework workflow's name to the ``module:function``
    that builds it (needed where the recorder cannot see it: a workflow not built by a
    module-level function taking no arguments), so a test can rebuild it.
    Without ``directory``, the ``PYTEST_FLOWS_RECORD`` environment variable
    (``dir`` or ``dir,sample``) gives both. Calling it again replaces the settings.
    """
    if directory is None:
        recorder = recording_from_env(
            max_bytes=max_bytes, queue_size=queue_size, frameworks=frameworks
        )
        if recorder is not None and factories:
            recorder.factories.update(_checked_factories(factories))
        if recorder is None:
            raise ValueError(
                f"record_flows() needs a directory: record_flows('recordings/', sample=0.1), "
                f"or set {ENV_VAR}=recordings/,0.1"
            )
        return recorder
    if not isinstance(sample, int | float) or isinstance(sample, bool) or not 0 <= sample <= 1:
        raise ValueError(
            f"record_flows(sample={sample!r}): sample is the share of runs recorded, "
            "a number from 0 to 1 (0.1 records one run in ten)."
        )
    if not isinstance(max_bytes, int) or max_bytes < 1024:
        raise ValueError(f"record_flows(max_bytes={max_bytes!r}): give at least 1024 bytes.")
    if not isinstance(queue_size, int) or queue_size < 1:
        raise ValueError(f"record_flows(queue_size={queue_size!r}): give at least 1.")
    checked = _checked_factories(factories or {})
    stop_recording()
    recorder = FlightRecorder(
        directory,
        sample=float(sample),
        max_bytes=max_bytes,
        queue_size=queue_size,
        factories=checked,
    )
    for name, part in _frameworks(frameworks).items():
        recorder.hooks[name] = importlib.import_module(part.module).install()
    install(recorder)
    return recorder


def _checked_factories(factories: Mapping[str, str]) -> dict[str, str]:
    for name, path in factories.items():
        module, _, function = str(path).partition(":")
        if not module or not function:
            raise ValueError(
                f"record_flows(factories={{{name!r}: {path!r}}}): name the function that "
                "builds the workflow as 'package.module:build_workflow'."
            )
    return {str(name): str(path) for name, path in factories.items()}


def recording_from_env(
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    queue_size: int = 64,
    frameworks: Sequence[str] | None = None,
) -> FlightRecorder | None:
    """Start recording as ``PYTEST_FLOWS_RECORD`` (``dir[,sample]``) says; None if unset."""
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return None
    directory, _, share = value.rpartition(",") if "," in value else (value, "", "")
    try:
        sample = float(share) if share.strip() else 1.0
    except ValueError:
        raise ValueError(
            f"{ENV_VAR}={value!r}: the sample after the comma is not a number; "
            f"write {ENV_VAR}=recordings/,0.1"
        ) from None
    return record_flows(
        directory.strip(),
        sample=sample,
        max_bytes=max_bytes,
        queue_size=queue_size,
        frameworks=frameworks,
    )


def stop_recording() -> FlightRecorder | None:
    """Stop recording (runs already finished are still written); the recorder that was on."""
    return uninstall()
