"""Run one script in fresh interpreters under several PYTHONHASHSEED values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from long_mode import LONG

#: Two hash seeds show a trace does not depend on it; the long mode adds more.
HASH_SEEDS = ("0", "4242", "1", "987") if LONG else ("0", "4242")
#: What a fresh interpreter running crewai needs to be quiet and offline.
QUIET_CREWAI = {
    "CREWAI_TESTING": "true",
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
    "CREWAI_DISABLE_VERSION_CHECK": "true",
}


def outputs_under_hash_seeds(script: Path) -> list[str]:
    """``script``'s stdout in one subprocess per hash seed (crewai quiet and offline)."""
    outputs = []
    for hash_seed in HASH_SEEDS:
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, **QUIET_CREWAI}
        done = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
    return outputs
