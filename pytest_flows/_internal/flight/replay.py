"""``flows.replay(record, Flow)``: a recorded production run, on today's code, on the harness.

Every LLM call, tool, crew and human answer comes from the record
(:mod:`~pytest_flows._internal.flight.answers`, with the recorded wall-clock latency
of each LLM call as virtual latency, so orders that production's timing decided
come back). While it runs, the framework's recorder part records the replay in
memory; the two records are compared (:mod:`~pytest_flows._internal.flight.compare`):
the first request whose prompt differs (with a diff), a tool call, a method or route,
a persisted state, the order of methods, the outcome. The recorded order is searched
for among the scheduler's schedules, then its seeds
(:mod:`~pytest_flows._internal.flight.interleaving`); the report says which gave it,
or that the scheduler could not express it.
"""

from __future__ import annotations

import importlib
import inspect
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

from pytest_flows._internal.contract.registry import recorder_part
from pytest_flows._internal.errors import FlowsUsageError, FlowsWarning
from pytest_flows._internal.fakes.llm_script import LLMScript
from pytest_flows._internal.flight.answers import bound_or_new
from pytest_flows._internal.flight.capture import FlightRecorder
from pytest_flows._internal.flight.format import Record, RecordError, read_record
from pytest_flows._internal.flight.interleaving import Attempts, by_schedule, by_seed, timed
from pytest_flows._internal.flight.result import Divergence, ReplayDivergenceError, ReplayResult
from pytest_flows._internal.flight.targets import TargetError, resolve

__all__ = ["Divergence", "ReplayDivergenceError", "ReplayResult", "replay"]


def _target_path(target: Any) -> str:
    cls = target if isinstance(target, type) else type(target)
    return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(target: Any, record: Record) -> Any:
    if isinstance(target, str):
        try:
            return resolve(target)
        except TargetError as exc:
            raise FlowsUsageError(f"flows.replay(..., {target!r}): {exc}") from None
    return target


def replay(
    session: Any,
    record: str | os.PathLike[str] | Record,
    target: Any = None,
    *,
    seeds: int = 8,
    schedules: int = 160,
) -> ReplayResult:
    """Replay ``record`` with ``target`` (the flow or workflow class it was made from)."""
    if not isinstance(record, Record):
        try:
            record = read_record(record)
        except RecordError as exc:
            raise FlowsUsageError(str(exc)) from None
    part = recorder_part(record.framework)
    if part is None:
        raise FlowsUsageError(
            f"{record.path.name}: no adapter with a recorder part is registered for the "
            f"framework {record.framework!r}; register it (pytest_flows.register_adapter) "
            "with AdapterSpec(..., recorder=RecorderPart(...))."
        )
    if target is None:
        if part.target == "factory":
            factory = record.header.get("factory")
            example = f"{factory!r}" if factory else "build_workflow()"
            says = (
                f"built by {factory}"
                if factory
                else f"of workflow {record.header.get('workflow')!r}"
            )
        else:
            example = record.target.rpartition(":")[2] or "MyFlow"
            says = f"made from {record.target}"
        raise FlowsUsageError(
            f"flows.replay({str(record.path)!r}, ...): name what the record was made from, "
            f"e.g. flows.replay(path, {example}) (the record says it was {says}); a record "
            "is data, it never decides what gets imported."
        )
    target = _resolve(target, record)
    if part.target == "factory" and inspect.isfunction(target):
        # A factory (the record's ``factory``, or the test's): the workflow it builds.
        target = target()
    if record.target and _target_path(target) != record.target:
        raise FlowsUsageError(
            f"flows.replay: the record was made from {record.target}, not "
            f"{_target_path(target)}; pass the recorded flow class."
        )
    if record.truncated:
        raise FlowsUsageError(
            f"{record.path.name} is truncated (the run was larger than the recorder's "
            "max_bytes): it cannot be replayed in full. Record with a larger max_bytes."
        )
    # The recorder part that can record a replay in memory (``shadow(run)``).
    shadow = importlib.import_module(part.module)
    session.ensure(record.framework)
    fake = bound_or_new(session, "llm", LLMScript)
    attempts = Attempts(session, record, target, fake, shadow)
    with tempfile.TemporaryDirectory() as scratch:
        attempts.memory = FlightRecorder(Path(scratch), max_bytes=2**40)
        found = by_schedule(attempts, schedules)
        if found is None and not attempts.stopped:
            found = by_seed(attempts, seeds)
        if found is None:
            found = timed(attempts, schedules, seeds)
    for note in attempts.people.notes():
        # Never silently: a crew the replay could not run is said in the report and here.
        warnings.warn(f"flows.replay({record.path.name}): {note}", FlowsWarning, stacklevel=3)
    if found is not None:
        return found
    if attempts.same_order is not None:
        # The recorded order came back, other results stayed: they are today's code's.
        return attempts.same_order
    first = attempts.first
    assert first is not None
    if not first.interleaving:
        first.interleaving = (
            "The recorded order of method starts and finishes did not come back: today's "
            "code does something else (see the divergences), so no other order was tried."
        )
    return first
