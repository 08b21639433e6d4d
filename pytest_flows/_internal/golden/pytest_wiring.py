"""The pytest side of golden replay: ``@pytest.mark.golden`` and ``--flows-golden-update``."""

from __future__ import annotations

from collections.abc import Generator

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
                f"{item.nodeid}: golden replay supports CrewAI flows and Agent Framework "
                f"workflows, not {recorder.unsupported[0]} runs.",
                pytrace=False,
            )
        path = files.golden_path(item)
        if item.config.getoption("flows_golden_update"):
            document = record_document(session, recorder)
            if not document["runs"]:
                pytest.fail(
                    f"{item.nodeid}: @pytest.mark.golden recorded nothing: the test ran no flow "
                    "through flows.run()/flows.arun()",
                    pytrace=False,
                )
            _refuse_secret_fields(item, document)
            text = files.dump(document)
            leaked = files.secrets_in(text)
            if leaked:
                # Scrubbing would make the recording disagree with every later run.
                pytest.fail(
                    f"{item.nodeid}: refusing to write a golden file: what the runs persisted "
                    f"or traced contains the value of ${', $'.join(leaked)}. Keep credentials "
                    "out of flow state, inputs and outputs.",
                    pytrace=False,
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return result
        if not path.exists():
            pytest.fail(
                f"{item.nodeid}: no golden recording at {path}; record it with "
                "pytest --flows-golden-update and commit it beside the test.",
                pytrace=False,
            )
        golden = files.load(path)
        breaks = check_document(session, recorder, golden)
        if breaks:
            rel = (
                path.relative_to(item.config.rootpath)
                if path.is_relative_to(item.config.rootpath)
                else path
            )
            raise GoldenMismatch(files.scrub(failure_message(str(rel), breaks)), breaks)
        return result


def _refuse_secret_fields(item: pytest.Item, document: dict[str, object]) -> None:
    import json

    from pytest_flows._internal.golden import files

    found: list[str] = []
    for run in document["runs"]:  # type: ignore[attr-defined]
        # every stored state: saves, crewai checkpoints (whole documents) and pending feedback
        stored = [save["raw"] for save in run.get("saves", [])]
        stored += [checkpoint["raw"] for checkpoint in run.get("checkpoints", [])]
        if run.get("pending"):
            stored += [run["pending"]["state"], run["pending"]["context"]]
        for raw in stored:
            try:
                found.extend(files.secret_fields(json.loads(raw), "state"))
            except ValueError:
                continue
    if found:
        pytest.fail(
            f"{item.nodeid}: refusing to write a golden file: the persisted state has "
            f"secret-named fields ({', '.join(sorted(set(found)))}). Keep credentials out of "
            "flow state (read them from the environment where they are used).",
            pytrace=False,
        )
