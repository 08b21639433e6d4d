"""A suite written against last month's docs (see test_round_one_docs.py); the
project's own run skips it: tests/test_legacy_suite.py runs a copy of this folder
in its own pytest process, as a user's project."""

import os

if not os.environ.get("PYTEST_FLOWS_LEGACY_SUITE"):
    collect_ignore_glob = ["*.py"]
else:
    # As a project's CI would: on a loaded machine, hypothesis' one-second health
    # check on input generation is about the machine, not about the suite.
    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", suppress_health_check=[HealthCheck.too_slow], deadline=None)
    settings.load_profile("ci")
