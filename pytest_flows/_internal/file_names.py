"""File names that are one test's (or one flow's) alone.

A name is escaped, not squashed: every character outside ``[A-Za-z0-9_.-]``
becomes ``%XX`` (its UTF-8 bytes), ``%`` included, so two different names never
share a file (``"a b"``, ``"a/b"`` and ``"a_b"`` stay three files). A very long
name keeps a readable head and a hash of the whole.
"""

from __future__ import annotations

import hashlib
import re

import pytest

__all__ = ["escaped", "item_file_stem"]

_SAFE = re.compile(r"[A-Za-z0-9_.-]")
_MAX = 150  # with ".json" and a directory, well inside every file system's 255 bytes


def escaped(text: str) -> str:
    """``text`` as a file name: safe characters kept, every other one ``%XX``-escaped."""
    name = "".join(
        char if _SAFE.fullmatch(char) else "".join(f"%{b:02X}" for b in char.encode("utf-8"))
        for char in text
    )
    if name in {"", ".", ".."}:
        name = "".join(f"%{b:02X}" for b in text.encode("utf-8")) or "%00"
    if len(name) > _MAX:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        name = f"{name[: _MAX - 17]}~{digest}"
    return name


def item_file_stem(item: pytest.Item) -> str:
    """The stem of a file of ``item``'s own, from its full node id below the module:
    classes and name joined by ``.``, a parametrize id escaped inside ``[...]``.

    ``TestA::test_x`` -> ``TestA.test_x``; ``test_x[a b]`` -> ``test_x[a%20b]``; a plain
    ``test_x`` keeps its name. Class and function names are identifiers, so an id
    cannot forge the structure.
    """
    classes = [escaped(node.name) for node in item.listchain() if isinstance(node, pytest.Class)]
    name = item.name
    original = getattr(item, "originalname", None) or name
    params = name[len(original) :] if name.startswith(original) else ""
    if params.startswith("[") and params.endswith("]"):
        last = f"{escaped(original)}[{escaped(params[1:-1])}]"
    else:
        last = escaped(name)
    stem = ".".join([*classes, last])
    if len(stem) > _MAX:
        digest = hashlib.sha256(item.nodeid.encode("utf-8")).hexdigest()[:16]
        stem = f"{stem[: _MAX - 17]}~{digest}"
    return stem
