"""Production: run LangGraph graphs with the flight recorder on (no pytest).

``python flight_lg_production.py OUT_DIR BASE_URL`` runs the writer graph (a model
call to the loopback server, then an ``interrupt()`` answered by a second invocation
with ``Command(resume=...)``), the fan-out graph (three parallel nodes and a join) and
the writer again, left paused on its interrupt, and the teller (a node streaming its
model's reply, and a second call streamed by ``stream_mode="messages"``);
prints the outputs, the records written and the test modules loaded (none may be).
"""

from __future__ import annotations

import json
import os
import sys

out, base_url = sys.argv[1], sys.argv[2]
os.environ["FLIGHT_LG_BASE_URL"] = base_url
os.environ["FLIGHT_LG_API_KEY"] = "sk-production-key-lg-0123456789"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from flight_lg_graphs import fanout, teller, writer  # noqa: E402
from langgraph.types import Command  # noqa: E402

from pytest_flows.recorder import record_flows  # noqa: E402

recorder = record_flows(out, frameworks=["langgraph"])

config = {"configurable": {"thread_id": "ticket-7", "user": "ada"}}
paused = writer.invoke({"topic": "tides and the moon"}, config)
finished = writer.invoke(Command(resume="yes"), config)
fanned = fanout.invoke({"notes": []})
# a run that pauses and is never answered (production moved on): recorded as paused
writer.invoke({"topic": "rivers"}, {"configurable": {"thread_id": "ticket-8"}})
# a chat UI's backend: the model's tokens as they come
tokens = [
    (meta["langgraph_node"], str(message.content))
    for message, meta in teller.stream({"topic": "a lighthouse"}, stream_mode="messages")
    if message.content
]
recorder.flush()
print(
    json.dumps(
        {
            "outputs": {
                "paused": sorted(paused),
                "writer": finished["notes"],
                "fanout": fanned["notes"],
                "tokens": tokens,
            },
            "written": sorted({str(p) for p in recorder.written}),
            "test_modules": sorted(
                m
                for m in ("pytest", "_pytest", "hypothesis", "syrupy", "vcr", "freezegun")
                if m in sys.modules
            ),
        }
    )
)
