"""Production: run Agent Framework workflows with the flight recorder on (no pytest).

``python flight_af_production.py OUT_DIR BASE_URL`` runs the writer workflow (plain,
then streamed), the review workflow (it pauses on ``request_info``; the answer is sent
with ``run(responses=...)``), a workflow built by a function that needs an
argument, the clerk workflow (its agent calls a tool) and one that checkpoints; prints
the outputs, the records written and the test modules loaded (none may be).
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

from flight_af import (  # noqa: E402
    Verdict,
    build_checkpointed,
    build_clerk,
    build_review,
    build_titled,
    build_writer,
)

from pytest_flows.recorder import record_flows  # noqa: E402

recorder = record_flows(out, frameworks=["agent_framework"])


async def main() -> dict[str, object]:
    outputs: dict[str, object] = {}
    result = await build_writer().run("tides and the moon")
    outputs["writer"] = [str(o) for o in result.get_outputs()]
    streamed = [
        str(event.data)
        async for event in build_writer().run("rivers and the sea", stream=True)
        if event.type == "output"
    ]
    outputs["streamed"] = streamed
    review = build_review()
    paused = await review.run("a lighthouse")
    (request,) = paused.get_request_info_events()
    answered = await review.run(
        responses={request.request_id: Verdict(approved=True, note="ship it")}
    )
    outputs["review"] = [str(o) for o in answered.get_outputs()]
    titled = await build_titled("titled-flow").run("clouds")
    outputs["titled"] = [str(o) for o in titled.get_outputs()]
    clerk = await build_clerk().run("lookup: A-17")
    outputs["clerk"] = [str(o) for o in clerk.get_outputs()]
    checkpointed = await build_checkpointed().run("the tide comes in twice a day")
    outputs["checkpointed"] = [str(o) for o in checkpointed.get_outputs()]
    return outputs


outputs = asyncio.run(main())
recorder.flush()
print(
    json.dumps(
        {
            "outputs": outputs,
            "written": [str(p) for p in recorder.written],
            "test_modules": sorted(
                m
                for m in ("pytest", "_pytest", "hypothesis", "syrupy", "vcr", "freezegun")
                if m in sys.modules
            ),
        }
    )
)
