"""The production side: run the crew-based flow with the flight recorder on.

    python production.py                # against OPENAI_BASE_URL / OPENAI_API_KEY
    python production.py --stand-in     # against a stand-in server on 127.0.0.1

``with record_flows(...)`` records every run inside the block into ``recordings/``;
``test_post_incidents.py`` replays them, the crews running agent by agent.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pytest_flows.recorder import record_flows

HERE = Path(__file__).parent


class _StandIn(BaseHTTPRequestHandler):
    """Answers chat completions: a post for the writer, a verdict (JSON, never ready:
    the flow retries once) for the editor, and an HTTP 500 for a post about outages."""

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        prompt = str(body["messages"][-1]["content"])
        if "outages" in prompt:
            self._send(500, {"error": {"message": "upstream overloaded", "type": "server_error"}})
            return
        if body.get("response_format"):
            text = json.dumps({"ready": False, "feedback": "tighten it"})
        elif "Review" in prompt:
            text = "Ready: no. Tighten it."
        else:
            text = "Tides rise twice a day. The moon pulls them."
        message = {"role": "assistant", "content": text}
        self._send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
            },
        )

    def _send(self, status: int, reply: dict[str, object]) -> None:
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    if "--stand-in" in sys.argv:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
        os.environ.setdefault("OPENAI_API_KEY", "sk-stand-in-key-not-a-real-one")
    sys.path.insert(0, str(HERE))
    from post_flow import PostFlow

    with record_flows(HERE / "recordings", sample=1.0) as recorder:
        for topic in ("tides", "outages"):
            try:
                print(PostFlow().kickoff(inputs={"topic": topic}))
            except Exception as exc:
                print(f"incident: {type(exc).__name__}: {exc}")
    print("\n".join(str(path) for path in recorder.written))


if __name__ == "__main__":
    main()
