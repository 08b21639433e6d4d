"""A production process recording crew-based flows, no pytest.

``python crew_flight_production.py OUT_DIR BASE_URL``: records WriterFlow (a good run,
a provider 500 inside a crew, a malformed reply inside a crew) and ResearchFlow into
OUT_DIR with ``with record_flows(...)``, then prints what each run returned or raised.
"""

from __future__ import annotations

import json
import os
import sys

out, base_url = sys.argv[1], sys.argv[2]
os.environ["OPENAI_BASE_URL"] = base_url
os.environ.setdefault("OPENAI_API_KEY", "sk-production-key-0123456789abcdef")
os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_DISABLE_VERSION_CHECK"] = "true"
os.environ["OTEL_SDK_DISABLED"] = "true"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from crew_flight_flows import ResearchFlow, WriterFlow  # noqa: E402

from pytest_flows.recorder import record_flows  # noqa: E402

results: dict[str, object] = {}
with record_flows(out, sample=1.0) as recorder:
    results["writer"] = WriterFlow().kickoff(inputs={"topic": "tides"})
    for name, topic in (("error", "provider-500"), ("malformed", "malformed-reply")):
        try:
            WriterFlow().kickoff(inputs={"topic": topic})
        except Exception as exc:
            results[name] = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    results["research"] = ResearchFlow().kickoff(inputs={"topic": "coral reefs"})
print(
    json.dumps(
        {
            "results": results,
            "written": sorted(str(p) for p in recorder.written),
            "test_modules": sorted(m for m in ("pytest", "_pytest") if m in sys.modules),
        },
        default=str,
    )
)
