"""The plugin's ini options, checked once at start-up with the option named.

pytest's own message for ``flows_all = maybe`` is ``invalid truth value
'maybe'``, naming neither the option nor the file; a URL in
``flows_allow_hosts`` used to fail every flows test with a message about
``FlowsSession(allow_hosts=...)``; an unknown ``flows_record_mode`` was
accepted for the whole session. Each is a usage error here, before any test runs.
"""

from __future__ import annotations

import re

import pytest

__all__ = ["BOOLEAN_INIS", "check_ini", "ini_bool"]

BOOLEAN_INIS = ("flows_all", "flows_snapshots")


def ini_bool(config: pytest.Config, name: str) -> bool:
    """The boolean ini option ``name``, parsed by pytest; a bad value names the option."""
    try:
        return bool(config.getini(name))
    except (ValueError, pytest.UsageError) as exc:  # pytest 9 raises UsageError itself
        raise pytest.UsageError(
            f"ini option {name}: {exc}; use true or false (or 1/0, yes/no, on/off)."
        ) from None


def check_ini(config: pytest.Config) -> None:
    """Refuse a bad value of any of the plugin's ini options, naming it."""
    from pytest_flows._internal.recording.cassette_file import RECORD_MODES

    for name in BOOLEAN_INIS:
        ini_bool(config, name)
    mode = str(config.getini("flows_record_mode") or "once").strip()
    if mode not in RECORD_MODES:
        raise pytest.UsageError(
            f"ini option flows_record_mode = {mode!r} is not a record mode; use one of "
            f"{', '.join(RECORD_MODES)}."
        )
    hosts = config.getini("flows_allow_hosts")
    if not hosts:
        return  # the network guard's module loads with the first flows test, not here
    from pytest_flows._internal.errors import FlowsUsageError
    from pytest_flows._internal.runtime.network import check_allow_hosts

    try:
        check_allow_hosts(hosts, "ini option flows_allow_hosts")
    except FlowsUsageError as exc:
        # the ini spelling of the fix: host names alone, one a line
        fix = re.sub(r"allow_hosts=\[([^\]]*)\]", r"flows_allow_hosts = \1", str(exc))
        raise pytest.UsageError(fix.replace("'", "")) from None
