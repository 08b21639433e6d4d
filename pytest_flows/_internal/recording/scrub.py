"""Keeping secrets out of cassettes, drift reports and failure messages.

Two passes over everything the recorder keeps or prints:

* **by name** - headers are dropped except an allow-list; query parameters named
  like secrets are dropped from the URI; JSON and form body fields named like
  secrets are masked. Every value removed this way is remembered.
* **by value** - every remembered value, every secret-looking environment
  variable and the values the session started with are replaced, in any
  spelling (raw, URL-, form- or JSON-escaped, inside base64 such as
  ``user:pass``), by :data:`PLACEHOLDER`.

Requests are matched after both passes, so a prompt that held a secret when it
was recorded matches the same prompt on replay (where the key is a placeholder).
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import json
import os
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

from pytest_flows._internal.recording.report_scrubbers import TEST_SCRUBBERS
from pytest_flows._internal.secrets import (
    MIN_SECRET_LENGTH,
    SECRET_FIELD_ENDINGS,
    SECRET_FIELDS,
    is_secret_env_name,
    is_secret_field_name,
    is_secret_header,
    plain_name,
    secret_pattern,
)

__all__ = ["KEPT_HEADERS", "PLACEHOLDER", "REPLAY_KEY", "TEST_SCRUBBERS", "Scrubber"]

PLACEHOLDER = "<secret>"
#: What a replay-only test sees as a provider key, so SDK constructors that insist
#: on one work. Never sent anywhere: a replay answers from the cassette.
REPLAY_KEY = "sk-pytest-flows-replay-only"
#: The only headers a cassette keeps; everything else (auth, cookies, SDK
#: and platform headers that differ between machines) is dropped.
KEPT_HEADERS = frozenset({"content-type", "retry-after"})
_AUTH_SCHEMES = re.compile(r"^(?:bearer|basic|token|digest|apikey|key)\s+", re.IGNORECASE)
#: Runs of base64 (standard or URL-safe, possibly percent-encoded) long enough
#: to hide a secret of the minimum length.
#: What every secret field's plain name contains (``is_secret_field_name``).
_NAME_PARTS = tuple(
    name
    for name in sorted({*SECRET_FIELDS, *SECRET_FIELD_ENDINGS})
    if not any(other != name and other in name for other in {*SECRET_FIELDS, *SECRET_FIELD_ENDINGS})
)
#: A scrubber's values, longest first: their patterns, UTF-8 bytes and anchors.
_Ordered = tuple[list[str], list[re.Pattern[str]], list[bytes], list[str]]
#: Characters every spelling of a secret keeps as they are (``secret_pattern``).
_UNRESERVED_RUN = re.compile(r"[A-Za-z0-9._~-]+")
_BASE64 = re.compile(r"(?:[A-Za-z0-9_+/-]|%2[BbFf]){12,}(?:=|%3[Dd]){0,2}")


class Scrubber:
    """The secret values known to one recording, and every place they are removed from."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()  # HTTP calls come from the flow's worker threads
        self._patterns: dict[str, re.Pattern[str]] = {}
        #: The values, longest first, their patterns, bytes and anchors (kept until a
        #: value is added: ``text`` runs once per string of a record).
        self._ordered: _Ordered | None = None
        for value in values:
            self.add(value)

    # -- what is secret -------------------------------------------------------------------
    @property
    def values(self) -> list[str]:
        return list(self._in_order()[0])

    def _in_order(self) -> _Ordered:
        with self._lock:
            if self._ordered is None:
                values = sorted(self._patterns, key=len, reverse=True)
                self._ordered = (
                    values,
                    [self._patterns[value] for value in values],
                    [value.encode("utf-8") for value in values],
                    [_anchor(value) for value in values],
                )
            return self._ordered

    def add(self, value: Any) -> None:
        """Remember a secret value (an ``Authorization`` value counts with and without scheme)."""
        if value is None or isinstance(value, bool):
            return
        text = str(value).strip()
        scheme = _AUTH_SCHEMES.match(text)
        if scheme:
            credentials = text[scheme.end() :].strip()
            self.add(credentials)
            if scheme.group(0).strip().lower() == "basic":
                self._add_basic(credentials)
        if len(text) >= MIN_SECRET_LENGTH:
            with self._lock:
                if text not in self._patterns:
                    self._patterns[text] = secret_pattern(text)
                    self._ordered = None

    def _add_basic(self, credentials: str) -> None:
        try:
            decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            return
        self.add(decoded)
        self.add(decoded.partition(":")[2])  # the password alone

    def copy(self) -> Scrubber:
        """A new scrubber that knows the same values (each record adds its own)."""
        twin = Scrubber()
        with self._lock:
            twin._patterns = dict(self._patterns)
            twin._ordered = self._ordered  # (never mutated, only replaced)
        return twin

    def add_environment(self) -> None:
        """Remember the values of every secret-looking environment variable."""
        for name, value in list(os.environ.items()):
            if is_secret_env_name(name):
                self.add(value)

    # -- removing it ----------------------------------------------------------------------------
    def text(self, text: str) -> str:
        """``text`` with every known secret, in any spelling, replaced by the placeholder."""
        values, patterns, needles, anchors = self._in_order()
        # Every spelling of a value is at least as long as the value, and a base64 run
        # that could hide one is 12 characters or more: a shorter text holds neither.
        if not values or len(text) < min(len(values[-1]), 12):
            return text
        for pattern, anchor in zip(patterns, anchors, strict=True):
            # longest first: a key that contains another goes whole. A spelling keeps
            # the value's unreserved characters as they are: no anchor, no match.
            if anchor in text:
                text = pattern.sub(PLACEHOLDER, text)
        shortest = min(len(needle) for needle in needles)
        if not _long_run(shortest).search(text):
            return text

        def hide(match: re.Match[str]) -> str:
            token = match.group(0)
            # A run decodes to at most three bytes for four characters.
            if (len(token) + 3) // 4 * 3 < shortest:
                return token
            return _hide_base64(token, needles)

        return _BASE64.sub(hide, text)

    def may_hold(self, text: str) -> bool:
        """False only if neither ``text`` nor any string JSON-decoded from it can hold a
        known value (in any spelling, or in base64 long enough to hide one).

        A spelling keeps the value's anchor verbatim, and base64 keeps its characters:
        JSON escapes none of them, so what a decoded string holds, the text holds too.
        """
        values, _, needles, anchors = self._in_order()
        if not values or len(text) < min(len(values[-1]), 12):
            return False
        if any(anchor in text for anchor in anchors):  # ("" is in every text)
            return True
        return _long_run(min(len(needle) for needle in needles)).search(text) is not None

    def value(self, data: Any) -> Any:
        """``data`` (text, bytes, or dicts and lists of them) with every secret replaced."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, bytes | bytearray):
            return self.text(bytes(data).decode("utf-8", "surrogateescape")).encode(
                "utf-8", "surrogateescape"
            )
        if isinstance(data, dict):
            return {self.value(key): self.value(item) for key, item in data.items()}
        if isinstance(data, list | tuple):
            return type(data)(self.value(item) for item in data)
        return data

    def found_in(self, text: str) -> bool:
        return self.text(text) != text

    # -- requests and responses -------------------------------------------------------------
    def request(self, request: Any) -> Any:
        """vcrpy's ``before_record_request``: the request as the cassette keeps it."""
        request = copy.copy(request)
        content_type = ""
        for name, value in list(request.headers.items()):
            if is_secret_header(name):
                self.add(value)
            if name.lower() == "content-type":
                content_type = str(value)
        request.headers = {
            name: value for name, value in request.headers.items() if name.lower() in KEPT_HEADERS
        }
        uri = self._mask_uri(str(request.uri))
        body = self._mask_body(request.body, content_type, in_response=False)
        self.add_environment()
        request.uri = self.text(uri)
        request.body = self.value(body)
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """vcrpy's ``before_record_response``: the response as the cassette keeps it."""
        headers = response.get("headers") or {}
        for name, values in headers.items():
            if is_secret_header(name):
                for value in values if isinstance(values, list) else [values]:
                    self.add(value)
        response["headers"] = {
            name: values for name, values in headers.items() if name.lower() in KEPT_HEADERS
        }
        kind = " ".join(str(v) for k, v in headers.items() if k.lower() == "content-type")
        body = response.get("body") or {}
        if "json" in kind.lower() and isinstance(body.get("string"), bytes | str):
            body["string"] = self._mask_body(body["string"], kind, in_response=True)
        self.add_environment()
        return dict(self.value(response))

    def _mask_uri(self, uri: str) -> str:
        parts = urlsplit(uri)
        netloc = parts.netloc
        if parts.password:
            self.add(unquote(parts.password))
            netloc = netloc.replace(f":{parts.password}@", f":{PLACEHOLDER}@", 1)
        query = parts.query
        if query:
            kept = []
            for piece in query.split("&"):
                name, _, value = piece.partition("=")
                if is_secret_field_name(unquote_plus(name)):
                    self.add(unquote_plus(value))
                else:
                    kept.append(piece)
            query = "&".join(kept)
        if (netloc, query) == (parts.netloc, parts.query):
            return uri
        return urlunsplit(parts._replace(netloc=netloc, query=query))

    def _mask_body(self, body: Any, content_type: str, *, in_response: bool) -> Any:
        if isinstance(body, bytes | bytearray):
            try:
                text = bytes(body).decode("utf-8")
            except UnicodeDecodeError:
                return body  # binary: only searched for secret values
        elif isinstance(body, str):
            text = body
        else:
            return body
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict | list):
            masked = self._mask_json(data, in_response)
            # Pretty-printed: a re-recording reviews like code.
            return json.dumps(masked, indent=2, ensure_ascii=False).encode("utf-8")
        if text.strip() and _looks_like_form(text, content_type):
            return self._mask_form(text).encode("utf-8")
        return body

    @staticmethod
    def may_mask(text: str) -> bool:
        """False only if :meth:`mask_data` would change nothing in the data ``text`` is
        the JSON of: no name in it, once lowercased and stripped of separators, holds a
        secret field's name, and it has no percent-escape and no URL with a password."""
        if "%" in text or ("://" in text and "@" in text):
            return True
        plain = plain_name(text)
        return any(name in plain for name in _NAME_PARTS)

    def mask_data(self, data: Any, *, in_response: bool = False) -> Any:
        """JSON data with every field named like a secret masked (its value remembered),
        also inside strings that are themselves JSON, form bodies or URLs (flight records)."""
        return self._mask_json(data, in_response)

    def _mask_json(self, data: Any, in_response: bool) -> Any:
        if isinstance(data, dict):
            masked = {}
            for key, value in data.items():
                scalar = isinstance(value, str | int | float) and not isinstance(value, bool)
                if scalar and is_secret_field_name(str(key), in_response=in_response):
                    self.add(value)
                    masked[key] = PLACEHOLDER
                else:
                    masked[key] = self._mask_json(value, in_response)
            return masked
        if isinstance(data, list):
            return [self._mask_json(item, in_response) for item in data]
        if isinstance(data, str):
            return self._mask_echo(data, in_response)
        return data

    def _mask_echo(self, text: str, in_response: bool) -> str:
        """A string that is itself a JSON body, a form body or a URL (an echoed request)."""
        stripped = text.strip()
        if stripped[:1] in {"{", "["}:
            try:
                nested = json.loads(stripped)
            except ValueError:
                return text
            masked = self._mask_json(nested, in_response)
            return text if masked == nested else json.dumps(masked, ensure_ascii=False)
        if "://" in stripped and "?" in stripped and " " not in stripped:
            return self._mask_uri(text)
        if "=" in stripped and _looks_like_form(stripped, ""):
            return self._mask_form(text)
        return text

    def _mask_form(self, text: str) -> str:
        pieces = []
        for piece in text.split("&"):
            name, equals, value = piece.partition("=")
            if equals and is_secret_field_name(unquote_plus(name)):
                self.add(unquote_plus(value))
                piece = f"{name}={PLACEHOLDER}"
            pieces.append(piece)
        return "&".join(pieces)


def _looks_like_form(text: str, content_type: str) -> bool:
    if "x-www-form-urlencoded" in content_type.lower():
        return True
    return re.fullmatch(r"[\w.%+~-]+=[^&\s]*(?:&[\w.%+~-]+=[^&\s]*)*", text.strip()) is not None


@functools.lru_cache(maxsize=64)
def _long_run(shortest: int) -> re.Pattern[str]:
    """Finds each run that could be a base64 (:data:`_BASE64`) hiding ``shortest``
    bytes: one character class (a superset of base64's), so a cheap scan."""
    # A run of n characters decodes to at most (n + 3) // 4 * 3 bytes.
    least = max(12, 4 * -(-shortest // 3) - 3)
    return re.compile(f"[A-Za-z0-9_+/%=-]{{{least},}}")


def _anchor(value: str) -> str:
    """The longest run of ``value`` that every spelling of it contains verbatim."""
    return max(_UNRESERVED_RUN.findall(value), key=len, default="")


def _hide_base64(token: str, needles: list[bytes]) -> str:
    """``token``, or the placeholder if it is base64 of something holding a secret."""
    text = unquote(token)
    candidates = [text, *(part for part in text.split("/") if len(part) >= 12)]
    for candidate in candidates:
        stripped = candidate.rstrip("=")
        padded = stripped + "=" * (-len(stripped) % 4)
        for alphabet in (None, b"-_"):
            try:
                decoded = base64.b64decode(padded, altchars=alphabet)
            except (binascii.Error, ValueError):
                continue
            if any(needle in decoded for needle in needles):
                return PLACEHOLDER
    return token
