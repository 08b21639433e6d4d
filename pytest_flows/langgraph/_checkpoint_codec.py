"""How the flows checkpointer lays LangGraph's bytes into ``flow_store`` records, and
how it reads records it did not write as they are (inert: nothing is built that the
original bytes did not name, and nothing is imported or called to find that out)."""

from __future__ import annotations

import base64
import contextlib
import json
import urllib.parse
from collections.abc import Sequence
from typing import Any

import ormsgpack
from langgraph.checkpoint.base import CheckpointMetadata
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from pytest_flows.adapters import FlowStore, StoreCorruptedError

__all__ = [
    "Typed",
    "corrupted",
    "load_document",
    "named_types",
    "pack",
    "put_method",
    "put_note",
    "restricted",
    "short_ns",
    "state_key",
    "task_node",
    "unpack",
    "writes_method",
]

Typed = tuple[str, bytes]


def state_key(thread_id: Any) -> str:
    """The ``flow_store`` state id of a thread: the thread id, quoted if it holds path
    characters (a thread id is any string to LangGraph; the store refuses those)."""
    text = str(thread_id)
    try:
        return FlowStore.check_id(text)
    except ValueError:
        return "thread-" + urllib.parse.quote(text, safe="")


def pack(typed: Typed) -> list[str]:
    return [typed[0], base64.b64encode(typed[1]).decode("ascii")]


def unpack(value: Any, what: str) -> Typed:
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, str) for v in value):
        raise StoreCorruptedError(
            f"flow_store: {what} is not a [type, base64] pair; it was changed after it was "
            "written (flow_store.tamper?). Discard the record with flow_store.discard(...)."
        )
    try:
        return value[0], base64.b64decode(value[1], validate=True)
    except ValueError:
        raise StoreCorruptedError(
            f"flow_store: {what} is not valid base64; it was changed after it was written "
            "(flow_store.tamper?). Discard the record with flow_store.discard(...)."
        ) from None


# -- reading what was not written as it is -------------------------------------------
_NAMED_EXTS = frozenset({0, 1, 2, 3, 4, 5})  # msgpack exts that name a (module, name)


def named_types(serde: SerializerProtocol, typed: Typed) -> set[tuple[str, ...]]:
    """The ``(module, name)`` pairs a serialized value names, read without building any."""
    kind, data = typed
    if "+" in kind and isinstance(serde, EncryptedSerializer):
        kind, cipher = kind.split("+", 1)
        data = serde.cipher.decrypt(cipher, data)
    found: set[tuple[str, ...]] = set()
    if kind != "msgpack":
        return found

    def collect(code: int, payload: bytes) -> None:
        inner = ormsgpack.unpackb(payload, ext_hook=collect, option=ormsgpack.OPT_NON_STR_KEYS)
        named = isinstance(inner, list | tuple) and len(inner) >= 2
        if (
            code in _NAMED_EXTS
            and named
            and isinstance(inner[0], str)
            and isinstance(inner[1], str)
        ):
            found.add((inner[0], inner[1]))
        return None

    with contextlib.suppress(ormsgpack.MsgpackDecodeError, ValueError, TypeError):
        ormsgpack.unpackb(data, ext_hook=collect, option=ormsgpack.OPT_NON_STR_KEYS)
    return found


def restricted(serde: SerializerProtocol, allowed: set[tuple[str, ...]]) -> SerializerProtocol:
    """``serde`` limited to its safe types and ``allowed``: a tampered record's reader."""
    if isinstance(serde, EncryptedSerializer):
        return EncryptedSerializer(serde.cipher, restricted(serde.serde, allowed))
    if isinstance(serde, JsonPlusSerializer) or not hasattr(serde, "loads_typed"):
        return JsonPlusSerializer(
            pickle_fallback=False,
            allowed_json_modules=None,
            allowed_msgpack_modules=tuple(allowed) if allowed else None,
        )
    # A serializer of the user's own: its rules are the only ones there are.
    return serde


def corrupted(what: str) -> StoreCorruptedError:
    return StoreCorruptedError(
        f"flow_store: {what} no longer has the shape the saver wrote; it was changed after it "
        "was written (flow_store.tamper?). Nothing else in the store is affected: discard "
        "this record with flow_store.discard(...)."
    )


def load_document(raw: str, what: str) -> dict[str, Any]:
    try:
        document = json.loads(raw)
    except ValueError:
        raise StoreCorruptedError(
            f"flow_store: {what} is not valid JSON; it was changed after it was written "
            "(flow_store.tamper?) or truncated. Discard it with flow_store.discard(...)."
        ) from None
    if not isinstance(document, dict):
        raise corrupted(what)
    return document


def short_ns(ns: str) -> str:
    """``"sub:3f2a|inner:9c"`` -> ``"sub/inner"`` (task ids left out)."""
    return "/".join(part.split(":", 1)[0] for part in ns.split("|")) if ns else ""


def put_method(ns: str, metadata: CheckpointMetadata) -> str:
    where = f" {short_ns(ns)}" if ns else ""
    return f"put{where} step {metadata.get('step', '?')} ({metadata.get('source', '?')})"


def put_note(ns: str, checkpoint_id: str) -> dict[str, Any]:
    return {"put": checkpoint_id, "checkpoint_ns": ns}


def task_node(task_path: str) -> str:
    """The node a task path names: ``"~__pregel_pull, agent"`` -> ``agent``; a ``Send``
    (``"~__pregel_push, 0000000002, ..."``) -> ``send#2``."""
    parts = task_path.lstrip("~").split(", ")
    if len(parts) >= 2 and parts[0] == "__pregel_pull":
        return parts[1]
    if len(parts) >= 2 and parts[0] == "__pregel_push" and parts[1].isdigit():
        return f"send#{int(parts[1])}"
    return task_path or "?"


def writes_method(ns: str, task_path: str, channels: Sequence[str]) -> str:
    where = f"{short_ns(ns)}/" if ns else ""
    # sorted: LangGraph lists a task's branch writes in set order (hash seed dependent)
    return f"put_writes {where}{task_node(task_path)}: {', '.join(sorted(channels))}"
