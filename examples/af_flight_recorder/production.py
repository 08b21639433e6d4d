"""The production side: run the workflow with the flight recorder on, as a service would.

    python production.py                # against OPENAI_BASE_URL / OPENAI_API_KEY
    python production.py --stand-in     # against a stand-in server on 127.0.0.1

One line turns recording on (here every run; in production, say, ``sample=0.1``).
Each run becomes one file in ``recordings/``; ``test_order_incidents.py`` replays them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pytest_flows.recorder import record_flows

HERE = Path(__file__).parent


class _StandIn(BaseHTTPRequestHandler):
    """Answers chat completions: a question gets a call of ``lookup_order``; the
    tool's result gets an answer that repeats it."""

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        last = body["messages"][-1]
        message: dict[str, object] = {"role": "assistant", "content": None}
        if last["role"] == "user" and body.get("tools"):
            order = last["content"].split()[-1].strip("?")
            call = {"name": "lookup_order", "arguments": json.dumps({"order": order})}
            message["tool_calls"] = [{"id": "call_1", "type": "function", "function": call}]
            finish = "tool_calls"
        else:
            message["content"] = f"Your {last['content']}."
            finish = "stop"
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


async def serve(questions: list[str]) -> None:
    from order_desk import build_workflow

    for question in questions:
        try:
            result = await build_workflow().run(question)
            print(result.get_outputs())
        except RuntimeError as exc:
            print(f"incident: {exc}")


def main() -> None:
    if "--stand-in" in sys.argv:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
        os.environ.setdefault("OPENAI_API_KEY", "sk-stand-in-key-not-a-real-one")
    sys.path.insert(0, str(HERE))
    recorder = record_flows(HERE / "recordings", sample=1.0, frameworks=["agent_framework"])
    asyncio.run(serve(["Where is order A-17?", "Where is order B-12?"]))
    recorder.flush()
    print("\n".join(str(path) for path in recorder.written))


if __name__ == "__main__":
    main()
