"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for recording tests.

It answers ``POST /v1/chat/completions`` (plain JSON, or server-sent events when
the request says ``"stream": true``) with a reply computed from the last user
message, so the same prompt always gets the same answer; a prompt with ``lookup:``
and tools offered is answered with a call of the first tool. ``POST /v1/echo``
answers with the headers, query and body it received (a provider that echoes a key
in an error message). Every request is kept in ``server.requests``.

A request asking for a JSON schema (``response_format``) gets an object made from the
schema (strings from the prompt, booleans false, numbers 1). A prompt containing
``provider-500`` is answered with an HTTP 500, one containing ``malformed-reply`` with a
body that is not JSON (the provider incidents a replay must reproduce).
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["LoopbackOpenAI"]


def _from_schema(schema: dict[str, Any], text: str, defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return _from_schema(defs.get(schema["$ref"].rpartition("/")[2], {}), text, defs)
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _from_schema(sub, text, defs) for name, sub in properties.items()}
    if kind == "array":
        return [_from_schema(schema.get("items") or {}, text, defs)]
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 1
    return text


def structured_reply(payload: dict[str, Any]) -> str | None:
    """The JSON text answering a request that asks for a JSON schema, else None."""
    response_format = payload.get("response_format")
    if not isinstance(response_format, dict) or "json_schema" not in response_format:
        return None
    schema = response_format["json_schema"].get("schema") or {}
    text = reply_to(payload.get("messages", []))
    return json.dumps(_from_schema(schema, text, schema.get("$defs") or {}))


def reply_to(messages: list[dict[str, Any]]) -> str:
    """The server's answer: a short, deterministic function of the last user message."""
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    content = str(last.get("content", ""))
    words = content.split()
    return f"{len(words)} words, starting {' '.join(words[:4])!r}"


class LoopbackOpenAI:
    """``with LoopbackOpenAI() as server:`` then point a client at ``server.base_url``."""

    def __init__(self, delays: dict[str, float] | None = None) -> None:
        #: prompt text -> seconds the answer is held back (a slow provider call, for
        #: races decided by production timing); the wait happens on the server's thread.
        self.delays = dict(delays or {})
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> LoopbackOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(entry)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _send(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.send_header("x-request-id", "req-" + hashlib.sha256(body).hexdigest()[:8])
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                url = urlsplit(self.path)
                is_json = "json" in self.headers.get("content-type", "application/json")
                payload = json.loads(raw or b"{}") if is_json else {}
                server._record({"path": url.path, "headers": dict(self.headers), "json": payload})
                if url.path == "/v1/echo":
                    echoed = {
                        "headers": dict(self.headers),
                        "query": dict(parse_qsl(url.query)),
                        "body": raw.decode("utf-8", "replace"),
                    }
                    self._send(200, "application/json", json.dumps(echoed).encode())
                    return
                if url.path != "/v1/chat/completions":
                    self._send(404, "application/json", b'{"error": "not found"}')
                    return
                self._chat(payload, raw)

            def _chat(self, payload: dict[str, Any], raw: bytes) -> None:
                text = structured_reply(payload) or reply_to(payload.get("messages", []))
                last = str((payload.get("messages") or [{}])[-1].get("content", ""))
                if "provider-500" in last:
                    error = {"error": {"message": "upstream overloaded", "type": "server_error"}}
                    self._send(500, "application/json", json.dumps(error).encode())
                    return
                if "malformed-reply" in last:
                    self._send(200, "application/json", b'{"id": "chatcmpl-x", "choices": [')
                    return
                hold = max((s for p, s in server.delays.items() if p in last), default=0.0)
                if hold:
                    threading.Event().wait(hold)
                ident = "chatcmpl-" + hashlib.sha256(raw).hexdigest()[:12]
                base = {"id": ident, "created": 1735689600, "model": payload.get("model")}
                tools = payload.get("tools") or []
                if tools and "lookup:" in last and not payload.get("stream"):
                    # A tool-calling reply: the first tool offered, with the rest of the
                    # prompt after it as its ``query`` (only for prompts with "lookup:").
                    name = tools[0].get("function", {}).get("name")
                    query = last.partition("lookup:")[2].strip()
                    call = {
                        "id": "call_" + hashlib.sha256(raw).hexdigest()[:8],
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps({"query": query})},
                    }
                    body = {
                        **base,
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {
                                    "role": "assistant",
                                    "content": None,
                                    "tool_calls": [call],
                                },
                                "finish_reason": "tool_calls",
                            }
                        ],
                        "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14},
                    }
                    self._send(200, "application/json", json.dumps(body).encode())
                    return
                if not payload.get("stream"):
                    body = {
                        **base,
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14},
                    }
                    self._send(200, "application/json", json.dumps(body).encode())
                    return
                pieces = [text[i : i + 10] for i in range(0, len(text), 10)]
                chunks = [
                    {
                        **base,
                        "object": "chat.completion.chunk",
                        "choices": [
                            {
                                "index": 0,
                                "delta": {"role": "assistant", "content": piece}
                                if n == 0
                                else {"content": piece},
                                "finish_reason": None,
                            }
                        ],
                    }
                    for n, piece in enumerate(pieces)
                ]
                chunks.append(
                    {
                        **base,
                        "object": "chat.completion.chunk",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    }
                )
                events = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks)
                self._send(200, "text/event-stream", (events + "data: [DONE]\n\n").encode())

        return Handler
