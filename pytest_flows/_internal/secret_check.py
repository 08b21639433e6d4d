"""The one secret check for a file the plugin writes, on decoded content.

A golden file (and any other document the plugin writes) refuses to be written
when it holds

* a field whose name says it is a secret (``api_key``, ``password``...) with a
  value, anywhere: inputs, stored states (JSON kept as text is decoded first),
  trace lines (``inputs={'api_key': ...}``), tool arguments, pickled objects
  (their field names, read from the pickle's opcodes without unpickling);
* the value of a secret environment variable (or one the session started
  with) in any spelling the plugin produces: raw, ``repr``, JSON-escaped,
  percent- or form-encoded, or inside base64 (a pickled object).

Scrubbing instead would make the recording disagree with every later run, so
the writer refuses, naming the field or the variable, and writes nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import pickletools
import re
from collections.abc import Iterator
from typing import Any

from pytest_flows._internal.secrets import (
    MIN_SECRET_LENGTH,
    is_secret_env_name,
    is_secret_field_name,
)

__all__ = ["SecretFound", "secret_env_values", "secret_fields", "secret_values_in", "secrets_of"]

#: ``name=value`` / ``'name': value`` / ``"name": value`` as the trace renders fields;
#: the value must be something (not None, empty or a placeholder).
_NAMED = re.compile(
    r"""(?<![\w-])['"]?(?P<name>[A-Za-z_][\w-]*)['"]?\s*[:=]\s*"""
    r"""(?!None\b|null\b|''|""|\)|,|}|<secret)(?P<value>\S)"""
)
_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"}
_EMPTY = (None, "", b"")


class SecretFound(str):
    """One finding: ``field <path>`` or ``$NAME``, as the refusal names it."""


def secret_env_values() -> list[tuple[str, str]]:
    """(name, value) of every secret environment variable of this process and every one
    the session started with (the plugin hides provider keys from tests), longest first."""
    from pytest_flows._internal.recording.pytest_wiring import _STARTED_KEYS

    found = {**_STARTED_KEYS, **os.environ}
    return sorted(
        (
            (name, value)
            for name, value in found.items()
            if value and len(value) >= MIN_SECRET_LENGTH and is_secret_env_name(name)
        ),
        key=lambda pair: (-len(pair[1]), pair[0]),
    )


def secret_values_in(text: str) -> list[str]:
    """Names of the secret environment variables whose value ``text`` holds, in any
    spelling (raw, repr, JSON escapes, percent/form encoding, base64 of it)."""
    from pytest_flows._internal.recording.scrub import Scrubber

    return sorted({name for name, value in secret_env_values() if Scrubber([value]).found_in(text)})


def _secret_name(name: str) -> bool:
    # in_response: ``key``/``token``/``sig`` alone are too common in rendered text
    # (log-probabilities, dict keys) to refuse on the name only
    return is_secret_field_name(name, in_response=True)


def _pickled_fields(data: str) -> Iterator[str]:
    """Secret-named strings a pickle holds (field names of pickled objects), read from
    its opcodes: nothing is unpickled."""
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
        for opcode, arg, _ in pickletools.genops(raw):
            if opcode.name in _STRINGS and isinstance(arg, str) and _secret_name(arg):
                yield arg
    except (ValueError, binascii.Error, UnicodeEncodeError):
        return


def _decoded_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def secret_fields(value: Any, path: str = "") -> list[str]:
    """Paths of secret-named fields with a value anywhere in ``value`` (see module doc)."""
    found: list[str] = []
    if isinstance(value, dict):
        pickled = value.get("__pickled__")
        if isinstance(pickled, str) and isinstance(value.get("__type__"), str):
            kind = value["__type__"]
            found.extend(f"{path}<pickled {kind}>.{name}" for name in _pickled_fields(pickled))
            return found
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and is_secret_field_name(key) and item not in _EMPTY:
                found.append(where)
            found.extend(secret_fields(item, where))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(secret_fields(item, f"{path}[{index}]"))
    elif isinstance(value, str):
        decoded = _decoded_json(value)
        if decoded is not None:
            found.extend(secret_fields(decoded, path))
        else:
            for match in _NAMED.finditer(value):
                if _secret_name(match.group("name")):
                    found.append(f"{path} ({match.group('name')}=...)")
    return found


def secrets_of(document: Any, text: str) -> list[SecretFound]:
    """Every reason not to write ``text`` (the file), whose content is ``document``."""
    found = [SecretFound(f"field {path}") for path in dict.fromkeys(secret_fields(document))]
    found += [SecretFound(f"${name}") for name in secret_values_in(text)]
    return found
