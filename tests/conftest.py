"""Shared test configuration for pytest-flows' own suite."""

pytest_plugins = ["pytester"]
