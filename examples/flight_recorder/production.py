"""The production side: run the flow with the flight recorder on, as a service would.

    python production.py                # against OPENAI_BASE_URL / OPENAI_API_KEY
    python production.py --stand-in     # against a stand-in server on 127.0.0.1

One line turns recording on (here every run; in production, say, ``sample=0.1``).
Each run becomes one file in ``recordings/``; ``test_support_incidents.py`` replays them.
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
    """Answers chat completions: billing for invoices, and a refund promise for them; a
    status check gets a call of the ``check_status`` tool."""

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        prompt = body["messages"][-1]["content"]
        message: dict[str, object] = {"role": "assistant"}
        if prompt.startswith("Check") and body.get("tools"):
            call = {"name": "check_status", "arguments": json.dumps({"service": "login"})}
            message["tool_calls"] = [{"id": "call_1", "type": "function", "function": call}]
            message["content"] = None
            self._reply(body, message, "tool_calls")
            return
        if prompt.startswith("Classify"):
            text = "billing" if "invoice" in prompt else "technical"
        elif prompt.startswith("Draft"):
            text = "We are sorry; a refund is on its way." if "twice" in prompt else "Done."
        else:
            text = "Users cannot log in since 09:00."
        message["content"] = text
        self._reply(body, message, "stop")

    def _reply(self, body: dict[str, object], message: dict[str, object], finish: str) -> None:
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


def main() -> None:
    if "--stand-in" in sys.argv:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
        os.environ.setdefault("OPENAI_API_KEY", "sk-stand-in-key-not-a-real-one")
    sys.path.insert(0, str(HERE))
    from support_flow import SupportFlow

    recorder = record_flows(HERE / "recordings", sample=1.0)
    for ticket in ("Login fails with error 500", "I was charged twice on my invoice"):
        try:
            print(SupportFlow().kickoff(inputs={"ticket": ticket}))
        except ValueError as exc:
            print(f"incident: {exc}")
    recorder.flush()
    print("\n".join(str(path) for path in recorder.written))


if __name__ == "__main__":
    main()
