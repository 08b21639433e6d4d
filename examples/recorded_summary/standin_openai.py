"""A stand-in for the OpenAI chat-completions API on 127.0.0.1, used only to
(re)record this example's cassette without a key. Its answers are a fixed
function of the prompt. With a real key, record against api.openai.com instead
(see docs/recording.md); the cassette would look the same.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def answer(messages: list[dict[str, Any]]) -> str:
    prompt = str(messages[-1]["content"])
    if prompt.startswith("Summarize"):
        return "This release adds dark mode, faster sync and export to PDF, and fixes login."
    if prompt.startswith("Shorten"):
        return "Dark mode, faster sync, PDF export."
    lines = [line.strip("- ") for line in prompt.splitlines() if line.strip()]
    return "\n".join(f"- {line}" for line in lines)


class StandInOpenAI:
    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StandInOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {**base, "object": "chat.completion.chunk", "choices": [choice]}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        text = answer(request["messages"])
        base = {"id": "chatcmpl-standin", "created": 1735689600, "model": request["model"]}
        if request.get("stream"):
            words = text.split(" ")
            pieces = [word + " " for word in words[:-1]] + words[-1:]
            chunks = [_chunk(base, {"content": piece}, None) for piece in pieces]
            chunks.append(_chunk(base, {}, "stop"))
            body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send("text/event-stream", body.encode())
            return
        reply = {
            **base,
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 20, "completion_tokens": 12, "total_tokens": 32},
        }
        self._send("application/json", json.dumps(reply).encode())

    def _send(self, content_type: str, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
