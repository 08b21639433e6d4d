"""Shared test configuration for pytest-flows' own suite."""

# Loaded before any in-process pytester run: such a run drops, when it ends, every
# module first imported during it, and a hypothesis imported there and again later
# makes two SearchStrategy classes ("Expected a SearchStrategy but got LazyStrategy").
import hypothesis.strategies  # noqa: F401

import pytest_flows._internal.strategies  # noqa: F401

pytest_plugins = ["pytester"]
