"""What a recorded request is matched on: the prompt part of its body, in a canonical form."""

from __future__ import annotations

import dataclasses
import json
from typing import Any
from urllib.parse import urlsplit

from pytest_flows._internal.identity import Normalizer

__all__ = [
    "DEFAULT_MATCH_ON",
    "PROMPT_KEYS",
    "Interaction",
    "canonical_body",
    "decode_body",
    "describe",
    "llm_body",
    "render_prompt",
]

#: Host and port are left out so one cassette replays against any base URL
#: (a loopback server on a random port, a proxy in front of the provider).
DEFAULT_MATCH_ON = ("method", "path", "query", "llm_body")
#: Body fields that make up the prompt (and the shape of the reply).
PROMPT_KEYS = (
    "model",
    "system",
    "instructions",
    "messages",
    "input",
    "prompt",
    "contents",
    "systemInstruction",
    "system_instruction",
    "tools",
    "functions",
    "tool_choice",
    "function_call",
    "response_format",
    "text",
    "stream",
)


def decode_body(body: Any) -> Any:
    if body is None:
        return None
    if isinstance(body, bytes | bytearray):
        if not body:
            return None
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return {"binary body bytes": len(body)}
    elif isinstance(body, str):
        text = body
    else:
        return repr(body)
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tool_key(tool: Any) -> str:
    if isinstance(tool, dict):
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(tool.get("name"), str):
            return str(tool["name"])
    return json.dumps(tool, sort_keys=True, default=repr)


def canonical_body(body: Any) -> Any:
    """What requests are matched on: the prompt part of a JSON body, normalized.

    For a JSON object with prompt fields (:data:`PROMPT_KEYS`: model, messages,
    tools, ...) only those count - sampling settings, ``stream_options``,
    ``user``, metadata do not; tools are sorted by name; UUIDs and ISO
    timestamps become placeholders. Other JSON counts whole; other text as is.
    """
    from pytest_flows._internal.snapshot import normalized

    data = decode_body(body)
    if isinstance(data, dict):
        kept = {key: data[key] for key in PROMPT_KEYS if key in data}
        if kept:
            data = kept
            for key in ("tools", "functions"):
                if isinstance(data.get(key), list):
                    data[key] = sorted(data[key], key=_tool_key)
    return normalized(data, Normalizer())


def _text_lines(text: str, indent: str) -> list[str]:
    return [indent + line for line in (text.splitlines() or [""])]


def _content_lines(content: Any, indent: str) -> list[str]:
    if isinstance(content, str):
        return _text_lines(content, indent)
    if isinstance(content, list):
        lines: list[str] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                lines.extend(_text_lines(part["text"], indent))
            else:
                lines.append(indent + json.dumps(part, sort_keys=True, ensure_ascii=False))
        return lines
    if content is None:
        return []
    return [indent + json.dumps(content, sort_keys=True, ensure_ascii=False)]


def _message_lines(index: int, message: Any) -> list[str]:
    if not isinstance(message, dict):
        return [f"  [{index}] {json.dumps(message, sort_keys=True, ensure_ascii=False)}"]
    role = message.get("role", "?")
    extra = {
        k: v for k, v in message.items() if k not in {"role", "content", "tool_calls", "parts"}
    }
    head = f"  [{index} {role}]"
    if extra:
        head += " " + json.dumps(extra, sort_keys=True, ensure_ascii=False)
    lines = [head]
    lines.extend(_content_lines(message.get("content", message.get("parts")), "    "))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        name = function.get("name", "?")
        arguments = function.get("arguments", "")
        lines.append(f"    -> tool call {name}({arguments})")
    return lines


def render_prompt(canonical: Any) -> list[str]:
    """A canonical request body as readable lines (what a prompt diff shows)."""
    if not isinstance(canonical, dict):
        if isinstance(canonical, str):
            return _text_lines(canonical, "")
        return [json.dumps(canonical, sort_keys=True, ensure_ascii=False)]
    lines: list[str] = []
    for key in sorted(canonical, key=lambda k: (k in {"messages", "input", "contents"}, k)):
        value = canonical[key]
        if key in {"messages", "input", "contents"} and isinstance(value, list):
            lines.append(f"{key}:")
            for index, message in enumerate(value, 1):
                lines.extend(_message_lines(index, message))
        elif key in {"tools", "functions"} and isinstance(value, list):
            lines.append(f"{key}:")
            for tool in value:
                lines.append(f"  {_tool_key(tool)}: {json.dumps(tool, sort_keys=True)}")
        elif isinstance(value, str) and "\n" in value:
            lines.append(f"{key}:")
            lines.extend(_text_lines(value, "  "))
        else:
            lines.append(f"{key}: {json.dumps(value, sort_keys=True, ensure_ascii=False)}")
    return lines


def llm_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: the canonical bodies are equal (raises AssertionError otherwise)."""
    if canonical_body(r1.body) != canonical_body(r2.body):
        raise AssertionError("the prompts differ")


@dataclasses.dataclass
class Interaction:
    """A request as the drift report shows it."""

    method: str
    uri: str
    canonical: Any

    @property
    def where(self) -> str:
        return f"{self.method} {urlsplit(self.uri).path}"


def describe(request: Any) -> Interaction:
    return Interaction(str(request.method), str(request.uri), canonical_body(request.body))
