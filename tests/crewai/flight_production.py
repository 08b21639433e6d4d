"""A production process: runs flows with the flight recorder on, no pytest.

``python flight_production.py OUT_DIR BASE_URL``: records TicketFlow (a long and a
short ticket, and the short ticket that fails) and RaceFlow into OUT_DIR, then
prints which modules were loaded (the test checks no test dependency was).
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

# As the tests import it: tests/crewai on the path, the flows module by its own name.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

os.environ["FLIGHT_DB"] = os.path.join(out, "production.db")

from flight_flows import (  # noqa: E402
    AgentFlow,
    PersistFlow,
    RaceFlow,
    StreamFlow,
    TicketFlow,
    ToolFlow,
)

from pytest_flows.recorder import record_flows  # noqa: E402

recorder = record_flows(out, sample=1.0)
results = {}
results["long"] = TicketFlow().kickoff(
    inputs={"ticket": "the export job has been failing every night since the upgrade"}
)
results["short"] = TicketFlow().kickoff(inputs={"ticket": "reset my password"})
try:
    TicketFlow().kickoff(inputs={"ticket": "Explode now"})
except ValueError as exc:
    results["failed"] = str(exc)
results["race"] = RaceFlow().kickoff()
streamed = TicketFlow()
streamed.stream = True  # Flow(stream=True): kickoff returns a StreamSession of frames
session = streamed.kickoff(inputs={"ticket": "streamed: my screen is blank"})
results["streamed_frames"] = len(list(session))
results["streamed"] = session.result
drafting = StreamFlow()
drafting.stream = True  # its LLM streams too: the chunks reach the consumer as frames
frames = list(drafting.kickoff(inputs={"ticket": "my invoice shows the wrong amount"}))
results["chunks"] = [f.content for f in frames if f.type == "llm_stream_chunk"]
results["stream_frames"] = [f.type for f in frames]
results["tool"] = ToolFlow().kickoff(inputs={"order": "A-17"})
results["agent"] = AgentFlow().kickoff(inputs={"order": "B-5"})
results["persist"] = PersistFlow().kickoff(inputs={"ticket": "reset my password"})
recorder.flush()
print(
    json.dumps(
        {
            "results": results,
            "written": sorted(str(p) for p in recorder.written),
            "test_modules": sorted(
                m
                for m in ("pytest", "_pytest", "hypothesis", "syrupy", "vcr", "freezegun")
                if m in sys.modules
            ),
        }
    )
)
