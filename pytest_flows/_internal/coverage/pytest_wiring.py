"""``--flows-cov``: its options, and the collector registered when it is asked for."""

from __future__ import annotations

import argparse

import pytest

__all__ = ["addoption", "configure"]


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(
            f"--flows-cov-fail-under expects a percentage from 0 to 100, got {text!r}"
        )
    return value


def addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("flows")
    group.addoption(
        "--flows-cov",
        action="store_true",
        default=False,
        help="flow-graph coverage: methods, router labels, listener edges, feedback outcomes, "
        "conversational routes, executors and edges the tests took",
    )
    group.addoption(
        "--flows-cov-fail-under",
        type=_percent,
        default=None,
        metavar="N",
        help="fail the run if flow-graph coverage is below N percent (implies --flows-cov; "
        "ini: flows_cov_fail_under)",
    )
    group.addoption(
        "--flows-cov-html",
        default=None,
        metavar="DIR",
        help="write an HTML flow-graph coverage report to DIR (implies --flows-cov)",
    )
    group.addoption(
        "--flows-cov-json",
        default=None,
        metavar="FILE",
        help="write flow-graph coverage as JSON to FILE (implies --flows-cov)",
    )
    parser.addini(
        "flows_cov_fail_under",
        "with --flows-cov: fail the run below this flow-graph coverage percentage",
        default="",
    )


def configure(config: pytest.Config) -> None:
    option = config.option
    wanted = (
        option.flows_cov
        or option.flows_cov_fail_under is not None
        or option.flows_cov_html
        or option.flows_cov_json
    )
    if not wanted:
        return
    threshold = option.flows_cov_fail_under
    if threshold is None:
        raw = str(config.getini("flows_cov_fail_under")).strip()
        if raw:
            try:
                threshold = _percent(raw)
            except argparse.ArgumentTypeError as exc:
                raise pytest.UsageError(f"ini option flows_cov_fail_under: {exc}") from None
    # Counting and its data model load only when coverage is asked for.
    from pytest_flows._internal.coverage.collector import FlowsCoverage

    config.pluginmanager.register(FlowsCoverage(config, threshold), "pytest-flows-coverage")
