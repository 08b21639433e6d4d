"""freezegun's scan for clock functions, remembered per module between tests.

Every ``freeze_time().start()`` looks through every loaded module for names bound to
the real clock functions (``from time import monotonic``) to point them at the fakes.
freezegun keeps what it found per module, but decides whether its note is still good
by sorting and hashing the module's names: about 40 ms of CPU per start with crewAI
and Agent Framework loaded (2,800 modules), paid by every flows test. A module's
names change only when its namespace grows or shrinks, so the note is kept while the
namespace's size is the same; a module that gained or lost a name is scanned again,
as freezegun would.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["remembering_scan"]

Attributes = list[tuple[str, Any]]

#: module name -> (the module, its namespace's size then, its clock attributes)
_notes: dict[str, tuple[weakref.ref[ModuleType], int, Attributes]] = {}


def remembering_scan(scan: Callable[[ModuleType], Attributes]) -> Callable[..., Attributes]:
    """``scan`` (freezegun's ``_get_cached_module_attributes``), asked again for a module
    only when the module is new or its namespace changed size."""

    def remembered(module: ModuleType) -> Attributes:
        namespace = getattr(module, "__dict__", None)
        size = len(namespace) if isinstance(namespace, dict) else -1
        name = getattr(module, "__name__", None)
        if not isinstance(name, str) or size < 0:
            return scan(module)
        note = _notes.get(name)
        if note is not None and note[0]() is module and note[1] == size:
            return note[2]
        found = scan(module)
        with contextlib.suppress(TypeError):  # a module stand-in that takes no weak reference
            _notes[name] = (weakref.ref(module), size, found)
        return found

    return remembered
