"""Production: run the writer workflow with the flight recorder on (no pytest).

``python flight_af_production.py OUT_DIR BASE_URL`` prints the outputs, the records
written and the test modules loaded (none may be).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

out, base_url = sys.argv[1], sys.argv[2]
os.environ["OPENAI_BASE_URL"] = base_url
os.environ.setdefault("OPENAI_API_KEY", "sk-production-key-af-0123456789")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from flight_af import build_writer  # noqa: E402

from pytest_flows.recorder import record_flows  # noqa: E402

recorder = record_flows(out, frameworks=["agent_framework"])
result = asyncio.run(build_writer().run("tides and the moon"))
recorder.flush()
print(
    json.dumps(
        {
            "outputs": [str(o) for o in result.get_outputs()],
            "written": [str(p) for p in recorder.written],
            "test_modules": sorted(
                m
                for m in ("pytest", "_pytest", "hypothesis", "syrupy", "vcr", "freezegun")
                if m in sys.modules
            ),
        }
    )
)
