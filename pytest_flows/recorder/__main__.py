"""``python -m pytest_flows.recorder export RECORD --to tests/`` and ``show RECORD``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pytest_flows._internal.flight.export import export
from pytest_flows._internal.flight.format import RecordError, read_record


def _detail(entry: dict[str, Any]) -> str:
    """Where an entry happened: its method (or flow), crew, agent, task and tool."""
    parts = [str(entry.get("method") or entry.get("flow") or "")]
    for key in ("crew", "agent", "task", "tool"):
        value = entry.get(key)
        if key == "task" and not str(entry.get("kind", "")).startswith("llm."):
            continue  # elsewhere ``task`` is the asyncio task the entry ran in
        if value:
            text = " ".join(str(value).split())
            parts.append(f"{key}={text[:60]!r}" if key == "task" else f"{key}={text}")
    return " ".join(part for part in parts if part)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_flows.recorder")
    commands = parser.add_subparsers(dest="command", required=True)
    out = commands.add_parser("export", help="write a test module replaying one record")
    out.add_argument("record", help="a *.flight.jsonl.gz file")
    out.add_argument("--to", required=True, help="the test directory to write into")
    show = commands.add_parser("show", help="summarize a record")
    show.add_argument("record")
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            path = export(args.record, args.to)
            print(f"wrote {path}")
            return 0
        record = read_record(args.record)
    except (RecordError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{record.target} run {record.run_id} ({record.framework}): {record.outcome}")
    for entry in record.entries:
        print(f"  {entry.get('seq'):>4} {entry.get('t'):>10} {entry.get('kind')} {_detail(entry)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
