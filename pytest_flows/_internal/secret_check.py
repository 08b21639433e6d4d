"""The one secret check for a file the plugin writes, on decoded content.

A golden file (and any other document the plugin writes) refuses to be written
when it holds

* a field whose name says it is a secret (``api_key``, ``password``...) holding a
  value that could be one - a non-empty string or bytes (or a list of them) -
  anywhere: inputs, stored states (JSON kept as text is decoded first), trace
  lines (``inputs={'api_key': ...}``), tool arguments, pickled objects (their
  field names and values, read from the pickle's opcodes without unpickling).
  ``None``, booleans, numbers and empty values are not secrets, whatever the
  name; nor are the fields a framework owns that merely carry such a name
  (each adapter lists them with the reason, ``FRAMEWORK_FIELDS`` of its
  ``_golden`` module), passed here as ``owned``;
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
from collections.abc import Iterable, Iterator
from typing import Any

from pytest_flows._internal.secrets import (
    MIN_SECRET_LENGTH,
    is_secret_env_name,
    is_secret_field_name,
    plain_name,
)

__all__ = [
    "SecretFound",
    "could_be_secret",
    "secret_env_values",
    "secret_fields",
    "secret_values_in",
    "secrets_of",
]

#: ``name=value`` / ``'name': value`` / ``"name": value`` as the trace renders fields;
#: the value must be something that could be a secret (not None, a boolean, a number,
#: empty or a placeholder).
_NAMED = re.compile(
    r"""(?<![\w-])['"]?(?P<name>[A-Za-z_][\w-]*)['"]?\s*[:=]\s*"""
    r"""(?!(?:None|null|True|False|true|false|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.])"""
    r"""|''|""|\)|,|}|<secret)(?P<value>\S)"""
)
_STRINGS = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"}
_BYTES = {
    "SHORT_BINBYTES",
    "BINBYTES",
    "BINBYTES8",
    "BYTEARRAY8",
    "BINSTRING",
    "SHORT_BINSTRING",
    "STRING",
}
_MEMO_PUT = {"MEMOIZE", "PUT", "BINPUT", "LONG_BINPUT"}
_MEMO_GET = {"GET", "BINGET", "LONG_BINGET"}


def could_be_secret(value: Any) -> bool:
    """Whether ``value`` could be a credential: a non-empty string or bytes, or a list
    of values that could be (a dict's own fields are judged by their own names)."""
    if isinstance(value, str | bytes | bytearray):
        return bool(value)
    if isinstance(value, list | tuple):
        return any(could_be_secret(item) for item in value)
    return False


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


def _secret_name(name: str, owned: frozenset[str] = frozenset()) -> bool:
    # in_response: ``key``/``token``/``sig`` alone are too common in rendered text
    # (log-probabilities, dict keys) to refuse on the name only
    return is_secret_field_name(name, in_response=True) and plain_name(name) not in owned


def _pickled_fields(data: str, owned: frozenset[str] = frozenset()) -> Iterator[str]:
    """Secret-named fields of pickled objects holding a non-empty string or bytes, read
    from the pickle's opcodes: nothing is unpickled. A field's name is pushed right
    before its value (an object's ``__dict__`` is a dict); a value fetched from the
    memo counts as what was memoized."""
    try:
        raw = base64.b64decode(data.encode("ascii"), validate=True)
        memo: dict[int, bool] = {}
        text = False  # whether the last value pushed is a non-empty string or bytes
        named: str | None = None  # a secret-named string, waiting for its value
        for opcode, arg, _ in pickletools.genops(raw):
            if opcode.name in _MEMO_PUT:
                memo[arg if isinstance(arg, int) else len(memo)] = text
                continue
            if opcode.name in _MEMO_GET:
                # an index the walk did not see memoized: judge it a string
                text = memo.get(arg, True) if isinstance(arg, int) else True
            elif opcode.name in _STRINGS or opcode.name in _BYTES:
                text = bool(arg)
            else:
                text = False
            if named is not None and text:
                yield named
            named = None
            if opcode.name in _STRINGS and isinstance(arg, str) and _secret_name(arg, owned):
                named = arg
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


def secret_fields(value: Any, path: str = "", owned: Iterable[str] = ()) -> list[str]:
    """Paths of secret-named fields holding a value that could be a secret anywhere in
    ``value`` (see module doc); ``owned``: names a framework owns, never secrets."""
    return _secret_fields(value, path, frozenset(plain_name(name) for name in owned))


def _secret_fields(value: Any, path: str, owned: frozenset[str]) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        pickled = value.get("__pickled__")
        if isinstance(pickled, str) and isinstance(value.get("__type__"), str):
            kind = value["__type__"]
            fields = _pickled_fields(pickled, owned)
            found.extend(f"{path}<pickled {kind}>.{name}" for name in fields)
            return found
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if (
                isinstance(key, str)
                and is_secret_field_name(key)
                and plain_name(key) not in owned
                and could_be_secret(item)
            ):
                found.append(where)
            found.extend(_secret_fields(item, where, owned))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(_secret_fields(item, f"{path}[{index}]", owned))
    elif isinstance(value, str):
        decoded = _decoded_json(value)
        if decoded is not None:
            found.extend(_secret_fields(decoded, path, owned))
        else:
            for match in _NAMED.finditer(value):
                if _secret_name(match.group("name"), owned):
                    found.append(f"{path} ({match.group('name')}=...)")
    return found


def secrets_of(document: Any, text: str) -> list[SecretFound]:
    """Every reason not to write ``text`` (the file), whose content is ``document``."""
    found = [SecretFound(f"field {path}") for path in dict.fromkeys(secret_fields(document))]
    found += [SecretFound(f"${name}") for name in secret_values_in(text)]
    return found
