"""A recorded provider exception, raised again by a replay as the same type.

A record names an exception type as text; it never decides what gets imported. The
type is rebuilt only from a module already imported (the provider client crewAI or
Agent Framework loaded, ``json``, the builtins), and only a kind whose constructor is
known: an HTTP status error of the OpenAI or Anthropic client (status and body), a
``json.JSONDecodeError`` (message, document, position), a builtin exception. Any
other is a :class:`RecordedError` stand-in named as the recorded type, so the
outcome compares equal to the record's (its type name and text are the recorded ones).
"""

from __future__ import annotations

import builtins
import json
import sys
from typing import Any

__all__ = ["RecordedError", "rebuild"]

#: Provider clients whose status errors are rebuilt: ``cls(message, response=, body=)``.
_STATUS_CLIENTS = ("openai", "anthropic")


class RecordedError(Exception):
    """A stand-in for a recorded exception whose type cannot be rebuilt here.

    Its class is made per recorded type (``type(error).__name__`` is the recorded
    name); ``recorded_type`` is ``module.Name``; ``isinstance(e, RecordedError)``
    catches all of them.
    """

    recorded_type = ""


_stand_ins: dict[tuple[str, str], type[RecordedError]] = {}


def _stand_in(module: str, name: str, message: str) -> RecordedError:
    key = (module, name)
    cls = _stand_ins.get(key)
    if cls is None:
        safe = name if name.isidentifier() else "RecordedError"
        cls = type(safe, (RecordedError,), {"recorded_type": f"{module}.{name}"})
        _stand_ins[key] = cls
    return cls(message)


def _status_error(cls: type, fields: dict[str, Any]) -> BaseException | None:
    httpx = sys.modules.get("httpx")
    status = fields.get("status_code")
    if httpx is None or not isinstance(status, int):
        return None
    request = httpx.Request("POST", "https://replay.invalid/v1/chat/completions")
    response = httpx.Response(status, request=request)
    error = cls(str(fields.get("message", "")), response=response, body=fields.get("body"))
    return error if isinstance(error, BaseException) else None


def _from_module(module: str, name: str, fields: dict[str, Any]) -> BaseException | None:
    message = str(fields.get("message", ""))
    if module == "json.decoder" and name == "JSONDecodeError":
        doc, pos = fields.get("doc"), fields.get("pos")
        msg = fields.get("msg")
        if isinstance(doc, str) and isinstance(pos, int) and isinstance(msg, str):
            return json.JSONDecodeError(msg, doc, pos)
        return None
    if module == "builtins":
        cls = getattr(builtins, name, None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            try:
                return cls(message)
            except Exception:
                return None
        return None
    top = module.partition(".")[0]
    loaded = sys.modules.get(module)
    if top not in _STATUS_CLIENTS or loaded is None:
        return None
    cls = getattr(loaded, name, None)
    base = getattr(sys.modules.get(top), "APIStatusError", None)
    if isinstance(cls, type) and isinstance(base, type) and issubclass(cls, base):
        try:
            return _status_error(cls, fields)
        except Exception:
            return None
    return None


def rebuild(fields: Any, fallback: str = "provider error") -> BaseException:
    """The exception ``fields`` (:func:`capture.exception_fields`) describe."""
    if not isinstance(fields, dict):
        return _stand_in("builtins", "RuntimeError", fallback)
    module, name = str(fields.get("module", "")), str(fields.get("type", ""))
    rebuilt = _from_module(module, name, fields)
    if rebuilt is not None and type(rebuilt).__name__ == name:
        return rebuilt
    return _stand_in(module, name, str(fields.get("message", fallback)))
