"""A suite written against last month's docs (see test_round_one_docs.py); the
project's own run skips it: tests/test_legacy_suite.py runs a copy of this folder
in its own pytest process, as a user's project."""

import os

if not os.environ.get("PYTEST_FLOWS_LEGACY_SUITE"):
    collect_ignore_glob = ["*.py"]
