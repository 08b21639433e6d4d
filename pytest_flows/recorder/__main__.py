"""``python -m pytest_flows.recorder export RECORD --to tests/`` and ``show RECORD``."""

from __future__ import annotations

import argparse
import sys

from pytest_flows._internal.flight.export import export
from pytest_flows._internal.flight.format import RecordError, read_record


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
        detail = entry.get("method") or entry.get("flow") or entry.get("tool") or ""
        print(f"  {entry.get('seq'):>4} {entry.get('t'):>10} {entry.get('kind')} {detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
