"""Which types a checkpoint's pickles name, read without unpickling anything.

Reading a checkpoint back (a golden file, a record tampered in ``flow_store``)
goes through Agent Framework's restricted unpickler, whose allow-list must come
from the test, never from the file. Under in-memory rules the test declares no
list: the workflow may keep any object in state. There the types the test's
*own* run pickled (its checkpoints, encoded by the plugin in this process) are
what the test vouches for; :func:`pickled_type_keys` lists them by walking the
pickle opcodes (``pickletools``), which names globals without resolving them.
"""

from __future__ import annotations

import base64
import binascii
import pickletools
from collections.abc import Iterator
from typing import Any

__all__ = ["pickled_type_keys", "pickles_in"]

_PICKLE_MARKER = "__pickled__"
_TYPE_MARKER = "__type__"
_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING"}
_MEMO_PUT = {"MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"}
_MEMO_GET = {"GET", "BINGET", "LONG_BINGET"}


def pickles_in(encoded: Any) -> Iterator[tuple[str, str]]:
    """``(base64 pickle, recorded type key)`` of every pickle envelope in an encoded value."""
    if isinstance(encoded, dict):
        data, key = encoded.get(_PICKLE_MARKER), encoded.get(_TYPE_MARKER)
        if isinstance(data, str) and isinstance(key, str):
            yield data, key
            return
        for item in encoded.values():
            yield from pickles_in(item)
    elif isinstance(encoded, list):
        for item in encoded:
            yield from pickles_in(item)


def _globals_of(data: bytes) -> set[str]:
    found: set[str] = set()
    memo: dict[int, Any] = {}
    pushed: list[Any] = []  # the values opcodes pushed, strings as themselves
    for opcode, arg, _ in pickletools.genops(data):
        name = opcode.name
        if name in _STRINGS:
            pushed.append(arg)
        elif name == "GLOBAL" or name == "INST":
            module, _, qualname = str(arg).partition(" ")
            found.add(f"{module}:{qualname}")
            pushed.append(None)
        elif name == "STACK_GLOBAL":
            if len(pushed) >= 2 and isinstance(pushed[-1], str) and isinstance(pushed[-2], str):
                found.add(f"{pushed[-2]}:{pushed[-1]}")
            pushed.append(None)
        elif name in _MEMO_PUT:
            index = len(memo) if name == "MEMOIZE" else int(str(arg))
            memo[index] = pushed[-1] if pushed else None
        elif name in _MEMO_GET:
            pushed.append(memo.get(int(str(arg))))
        else:
            pushed.append(None)
    return found


def pickled_type_keys(encoded: Any) -> frozenset[str]:
    """Every ``module:qualname`` the pickles of an encoded checkpoint name (and their
    envelopes' recorded types). Only for the plugin's own encodings: a file's say-so
    must never widen an allow-list."""
    found: set[str] = set()
    for data, key in pickles_in(encoded):
        found.add(key)
        try:
            found |= _globals_of(base64.b64decode(data.encode("ascii"), validate=True))
        except (ValueError, binascii.Error, UnicodeEncodeError):
            continue
    return frozenset(found)
