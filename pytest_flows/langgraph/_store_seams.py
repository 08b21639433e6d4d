"""Every reach of the LangGraph store part into LangGraph that it does not promise to keep.

The flows checkpointer is a public ``BaseCheckpointSaver``; what it relies on beyond
that contract is declared here (and checked by the seam tests): the msgpack layout it
reads without building anything, the shallow copy ``with_allowlist`` makes, and the
``InMemorySaver`` behaviours it mirrors. The adapter's ``_seams.py`` includes
``STORE_SEAMS`` in its registry.
"""

from __future__ import annotations

from pytest_flows.adapters import Seam

__all__ = ["STORE_SEAMS"]

_SERDE = "langgraph.checkpoint.serde"
_MEMORY = "langgraph.checkpoint.memory:InMemorySaver"

STORE_SEAMS: list[Seam] = [
    Seam(
        f"{_SERDE}.jsonplus:_create_msgpack_ext_hook",
        "read",
        "a tampered record is read inert: the types its original bytes named are found "
        "from the msgpack ext layout ((module, name, ...) first) without building them",
        source=("tup[0], tup[1]", "importlib.import_module(tup[0])"),
    ),
    Seam(
        f"{_SERDE}.base:maybe_add_typed_methods",
        "call",
        "serving() adopts the serializer of a graph's own checkpointer as __init__ does",
        params=("serde",),
    ),
    Seam(
        f"{_SERDE}.encrypted:EncryptedSerializer.loads_typed",
        "read",
        "an encrypted value's type is '<type>+<cipher>' (decrypted to find its types)",
        source=('enc_cipher.split("+", 1)',),
    ),
    Seam(
        "langgraph.checkpoint.base:BaseCheckpointSaver.with_allowlist",
        "read",
        "strict msgpack clones the saver shallowly per run: the clone shares its storage",
        source=("copy.copy(self)",),
    ),
    Seam(
        f"{_MEMORY}.put_writes",
        "read",
        "a stored write is never replaced, a special (negative index) write is, as here",
        source=("WRITES_IDX_MAP.get(c, idx)", "inner_key[1] >= 0"),
    ),
    Seam(
        f"{_MEMORY}.get_next_version",
        "read",
        "channel versions keep InMemorySaver's form (a counter where it draws random)",
        source=('f"{next_v:032}.{next_h:016}"',),
    ),
]
