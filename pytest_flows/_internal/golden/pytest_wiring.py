"""The pytest side of golden replay: ``@pytest.mark.golden`` and ``--flows-golden-update``."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_flows._internal.stash import SESSION_KEY

__all__ = ["addoption", "configure"]


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("flows")
    group.addoption(
        "--flows-golden-update",
        action="store_true",
        default=False,
        help="record (or re-record) the golden files of @pytest.mark.golden tests: what "
        "their runs persisted, their traces and the replies they used",
    )


def configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "golden: record what this flows test's runs persist (--flows-golden-update) and, on "
        "every later run, restore and resume it on today's code; breaks are reported as "
        "codec, schema, topology or behaviour",
    )
    if not config.pluginmanager.has_plugin("pytest-flows-golden"):
        config.pluginmanager.register(_GoldenHooks(), "pytest-flows-golden")


class _GoldenHooks:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        if item.get_closest_marker("golden") is None:
            return (yield)
        from pytest_flows._internal.markers import marker_settings

        marker_settings(item, "golden", ())  # it takes no arguments: refuse any given
        session = item.stash.get(SESSION_KEY, None)
        if session is None:
            pytest.fail(
                f"{item.nodeid}: @pytest.mark.golden needs a flows test; request the `flows` "
                "fixture (and `flow_store` for what the runs persist).",
                pytrace=False,
            )
        # pydantic and the trace model: only when a golden test runs
        from pytest_flows._internal.golden import files
        from pytest_flows._internal.golden.breaks import GoldenMismatch, failure_message
        from pytest_flows._internal.golden.replay import (
            RunRecorder,
            check_document,
            record_document,
        )

        recorder = RunRecorder(session)
        recorder.install()
        try:
            result = yield  # the test itself: a failure of its own is reported as usual
        finally:
            recorder.uninstall()
        if recorder.unsupported:
            pytest.fail(
                f"{item.nodeid}: golden replay supports the flows of adapters that have a "
                f"golden part (AdapterBase.golden()), not {recorder.unsupported[0]} runs.",
                pytrace=False,
            )
        path = files.golden_path(item)
        if item.config.getoption("flows_golden_update"):
            document = record_document(session, recorder, getattr(item, "module", None))
            if not document["runs"]:
                pytest.fail(
                    f"{item.nodeid}: @pytest.mark.golden recorded nothing: the test ran no flow "
                    "through flows.run()/flows.arun()",
                    pytrace=False,
                )
            text = files.dump(document)
            _refuse_secrets(item, document, text)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return result
        if not path.exists():
            legacy = files.legacy_golden_path(item)
            moved = (
                f" (a file at the old, shared name {legacy.name} exists: golden files are "
                "now named from the full node id, class and parametrize id included; "
                "re-record to move it)"
                if legacy != path and legacy.exists()
                else ""
            )
            pytest.fail(
                f"{item.nodeid}: no golden recording at {path}{moved}; record it with "
                "pytest --flows-golden-update and commit it beside the test.",
                pytrace=False,
            )
        golden = files.load(path)
        breaks = check_document(session, recorder, golden, getattr(item, "module", None))
        if breaks:
            rel = (
                path.relative_to(item.config.rootpath)
                if path.is_relative_to(item.config.rootpath)
                else path
            )
            raise GoldenMismatch(files.scrub(failure_message(str(rel), breaks)), breaks)
        return result


def _refuse_secrets(item: pytest.Item, document: dict[str, Any], text: str) -> None:
    """Fail, writing nothing, if the golden would hold a secret (see ``secret_check``)."""
    from pytest_flows._internal.golden.adapters import adapter_named
    from pytest_flows._internal.secret_check import secret_fields, secret_values_in

    owned = {run["framework"]: adapter_named(run["framework"]).framework_fields
             for run in document["runs"]}  # fmt: skip
    everyone = [name for fields in owned.values() for name in fields]
    fields: list[str] = secret_fields(
        {k: v for k, v in document.items() if k != "runs"}, owned=everyone
    )
    for run in document["runs"]:
        own = owned[run["framework"]]
        for key, value in run.items():
            if key in ("saves", "checkpoints"):
                for stored in value:  # every stored state, decoded: "state.<field>"
                    fields += secret_fields(stored.get("raw"), "state", own)
            elif key == "pending" and value:
                fields += secret_fields(value.get("state"), "state", own)
                fields += secret_fields(value.get("context"), "context", own)
            else:
                fields += secret_fields(value, key, own)
    leaked = secret_values_in(text)
    if not fields and not leaked:
        return
    held = []
    if fields:
        held.append(f"secret-named fields ({', '.join(dict.fromkeys(fields))})")
    if leaked:
        held.append(f"the value of ${', $'.join(leaked)}")
    # Scrubbing would make the recording disagree with every later run.
    pytest.fail(
        f"{item.nodeid}: refusing to write a golden file: what the runs received, persisted "
        f"or traced holds {' and '.join(held)}. Keep credentials out of flow inputs, state "
        "and outputs (read them from the environment where they are used).",
        pytrace=False,
    )
