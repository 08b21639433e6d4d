"""``python -m pytest_flows.recorder export RECORD --to tests/``: one incident, one test.

Writes ``test_replay_<run id>.py`` and copies the record beside it (under
``flight_records/``, the test's golden input); the test replays the record on
today's code and fails on any divergence.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from pytest_flows._internal.flight.format import Record, read_record
from pytest_flows._internal.flight.targets import (
    TargetError,
    built_by_factory,
    check_target,
    replay_target,
)

__all__ = ["export", "module_text"]

RECORDS_DIR = "flight_records"


def _identifier(text: str) -> str:
    # ASCII only: a name made of a record's text must be a plain Python identifier.
    return re.sub(r"[^0-9A-Za-z_]", "_", text).strip("_") or "run"


def module_text(record: Record, record_name: str) -> str:
    """The test module's text. Every value taken from the record is written as a Python
    literal (``repr``), never into code or the docstring: a record cannot change what
    the module does. The import is written only for a target made of Python names."""
    target = replay_target(record)
    try:
        check_target(target)
    except TargetError as exc:
        raise ValueError(f"{record.path.name}: {exc}") from None
    module, _, qualname = target.partition(":")
    top = qualname.split(".")[0]
    replayed = f"{qualname}()" if built_by_factory(record) else qualname
    outcome = record.outcome
    if outcome == "failed":
        error = record.end.get("error") or {}
        what = f"failed with {error.get('type')}: {error.get('message')}"
    else:
        what = outcome
    run_id = _identifier(record.run_id)
    incident = {
        "run_id": record.run_id,
        "target": record.target,
        "started_at": record.header.get("started_at", "?"),
        "outcome": what,
    }
    lines = [f"    {key!r}: {str(value)!r}," for key, value in incident.items()]
    incident_text = "\n".join(lines)
    return f'''"""Regression test for one recorded production run (see INCIDENT).

Written by `python -m pytest_flows.recorder export`. The record is replayed on today's
code: every LLM call, tool and human answer taken from it, its method order rebuilt as
a schedule; the test fails on the first divergence (a changed prompt, tool call, route,
persisted state or outcome). Once the incident is fixed, assert the new behaviour
instead (see docs/recorder.md).
"""

from pathlib import Path

from {module} import {top}

#: What the record says about the run (values copied from it, as literals).
INCIDENT = {{
{incident_text}
}}

RECORD = Path(__file__).parent / {RECORDS_DIR!r} / {record_name!r}


def test_replay_{run_id}(flows):
    result = flows.replay(RECORD, {replayed})
    result.check()
'''


def export(record_path: str | Path, to: str | Path) -> Path:
    """Write the test module for ``record_path`` into directory ``to``; returns its path."""
    record = read_record(record_path)
    replay_target(record)
    if not record.target or ":" not in record.target:
        raise ValueError(f"{record_path}: the record names no flow (target {record.target!r})")
    directory = Path(to)
    (directory / RECORDS_DIR).mkdir(parents=True, exist_ok=True)
    copied = directory / RECORDS_DIR / Path(record_path).name
    if Path(record_path).resolve() != copied.resolve():
        shutil.copyfile(record_path, copied)
    test = directory / f"test_replay_{_identifier(record.run_id)}.py"
    test.write_text(module_text(record, copied.name), encoding="utf-8")
    return test
