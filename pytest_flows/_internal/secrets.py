"""What counts as a secret: one list for the environment isolation and the recorder."""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Mapping
from urllib.parse import quote, quote_plus

__all__ = [
    "MIN_SECRET_LENGTH",
    "PROVIDER_KEYS",
    "SECRET_FIELDS",
    "SECRET_FIELD_ENDINGS",
    "SECRET_HEADERS",
    "is_secret_env_name",
    "is_secret_field_name",
    "is_secret_header",
    "plain_name",
    "secret_encodings",
    "secret_env_names",
    "secret_pattern",
]

#: Provider keys hidden from flows tests (a recording test gets them back while it
#: may record) and scrubbed from anything the recorder saves.
PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "PERPLEXITY_API_KEY",
    "XAI_API_KEY",
    "HF_TOKEN",
    "HUGGINGFACE_API_KEY",
    "SERPER_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)

_SECRET_ENV = re.compile(
    r"(API_?KEY|_TOKEN|_SECRET|SECRET_KEY|ACCESS_KEY|ACCESS_KEY_ID|PASSWORD|PASSWD|CREDENTIALS?)$"
)


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret."""
    upper = name.upper()
    return upper in PROVIDER_KEYS or _SECRET_ENV.search(upper) is not None


def secret_env_names(environ: Mapping[str, str]) -> list[str]:
    """The names in ``environ`` that hold secrets, sorted."""
    return sorted(name for name in environ if is_secret_env_name(name))


# -- names in requests and responses -------------------------------------------------------
#: Headers whose values are secrets (besides any header named like a secret field).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "x-amz-security-token",
    }
)
#: Query parameters and body fields named exactly this (compared without case and
#: separators: ``Access-Token``, ``access_token`` and ``accessToken`` are one name).
SECRET_FIELDS = frozenset(
    {"key", "token", "sig", "secret", "pass", "pwd", "auth", "credential", "credentials"}
)
#: ... or ending in this.
SECRET_FIELD_ENDINGS = (
    "apikey",
    "secretkey",
    "privatekey",
    "accesskey",
    "accesskeyid",
    "subscriptionkey",
    "signingkey",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "signature",
    "credential",
    "authorization",
)
#: Secret names that LLM responses also use for something else (a log-probability's
#: ``token``): in responses only values are scrubbed under these names.
AMBIGUOUS_FIELDS = frozenset({"key", "token", "sig"})


_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def plain_name(text: str) -> str:
    """``text`` as names are compared: lowercased, without separators."""
    return _NOT_ALNUM.sub("", text.lower())


# (cached: a record or cassette asks about the same few field names again and again)
_plain_name_cached = functools.lru_cache(maxsize=4096)(plain_name)


def is_secret_field_name(name: str, *, in_response: bool = False) -> bool:
    """Whether a query parameter or body field of this name holds a secret.

    Case and separators do not count: ``client_secret``, ``Client-Secret`` and
    ``clientSecret`` are the same name.
    """
    plain = _plain_name_cached(name)
    if in_response and plain in AMBIGUOUS_FIELDS:
        return False
    return plain in SECRET_FIELDS or plain.endswith(SECRET_FIELD_ENDINGS)


def is_secret_header(name: str) -> bool:
    """Whether a header of this name carries a secret (``Authorization``, ``X-Api-Key``...)."""
    return name.lower() in SECRET_HEADERS or is_secret_field_name(name)


# -- the spellings of a secret value ---------------------------------------------------------
#: Shorter values are masked where they are named, but not searched for elsewhere:
#: replacing every ``true`` or ``1234`` in a cassette would corrupt it.
MIN_SECRET_LENGTH = 8
_UNRESERVED = re.compile(r"[A-Za-z0-9._~-]")


def _any_case_hex(byte: int) -> str:
    return "".join(f"[{d}{d.lower()}]" if d.isalpha() else d for d in f"{byte:02X}")


def _char_pattern(char: str) -> str:
    if _UNRESERVED.fullmatch(char):
        return re.escape(char)
    spellings = [re.escape(char)]
    # percent-encoded (either hex case), or encoded twice (%252F)
    spellings.append("".join(f"%(?:25)?{_any_case_hex(b)}" for b in char.encode("utf-8")))
    if char == " ":
        spellings.append(r"\+")  # form encoding
    if ord(char) < 0x10000:
        spellings.append(
            r"\\[uU]" + "".join(_any_case_hex(b) for b in ord(char).to_bytes(2, "big"))
        )
    if char in {'"', "/"}:
        # JSON escapes, at any depth (a JSON body inside a message inside a record)
        spellings.append(r"\\+" + re.escape(char))
    if char == "\\":
        spellings.append(r"\\+")
    return "(?:" + "|".join(spellings) + ")"


def secret_pattern(value: str) -> re.Pattern[str]:
    """A pattern matching ``value`` in any mix of raw, URL-, form- and JSON-escaped spelling."""
    return re.compile("".join(_char_pattern(char) for char in value))


def secret_encodings(value: str, user: str = "user") -> list[str]:
    """The usual spellings of ``value``: what must never be found in a saved file.

    Raw, URL-encoded (``quote``, both hex cases, ``/`` kept or not), form-encoded,
    JSON-escaped (``\\/`` and ``\\u`` escapes too), and base64 (standard and URL-safe)
    of the value and of ``user:value`` (HTTP basic auth).
    """
    spellings = [value, quote(value, safe=""), quote(value), quote_plus(value)]
    spellings += [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(value, safe=""))]
    json_escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    spellings += [json_escaped, json_escaped.replace("/", "\\/")]
    spellings += ["".join(c if _UNRESERVED.fullmatch(c) else f"\\u{ord(c):04x}" for c in value)]
    for raw in (value, f"{user}:{value}"):
        data = raw.encode("utf-8")
        spellings += [base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()]
    return list(dict.fromkeys(spellings))
