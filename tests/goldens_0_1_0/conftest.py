"""Goldens recorded by pytest-flows 0.1.0 (see README.md); the project's own run skips
this folder: tests/test_goldens_0_1_0.py runs a copy of it in its own pytest process,
as a user's project that upgraded."""

import os

if not os.environ.get("PYTEST_FLOWS_OLD_GOLDENS"):
    collect_ignore_glob = ["*.py"]
