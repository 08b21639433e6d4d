"""The recorder's scrubber on single requests and responses: names, spellings, and what it keeps."""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote

import pytest
from vcr.request import Request

from pytest_flows._internal.recording.scrub import PLACEHOLDER, Scrubber
from pytest_flows._internal.secrets import is_secret_field_name, secret_encodings

SECRET = "AbC/dEf+GhI="


def _request(uri: str, body: bytes | str | None = None, **headers: str) -> Request:
    return Request("POST", uri, body, headers)


def _text(request: Request) -> str:
    body = request.body.decode("utf-8", "replace") if request.body else ""
    return f"{request.uri}\n{json.dumps(dict(request.headers))}\n{body}"


@pytest.mark.parametrize(
    "name",
    ["client_secret", "Client-Secret", "clientSecret", "PASSWORD", "access-token",
     "Access_Token", "token", "key", "X-Amz-Signature", "api_key", "apiKey", "x-api-key",
     "refresh_token", "private_key", "sig"],
)  # fmt: skip
def test_names_that_are_secret(name: str) -> None:
    assert is_secret_field_name(name)


@pytest.mark.parametrize(
    "name",
    ["max_tokens", "prompt_cache_key", "idempotency_key", "page", "model", "keyword",
     "tokens", "monkey", "user"],
)  # fmt: skip
def test_names_that_are_not(name: str) -> None:
    assert not is_secret_field_name(name)


def test_a_basic_authorization_teaches_the_password_and_user_pass() -> None:
    scrubber = Scrubber()
    basic = base64.b64encode(b"carol:pw-ONLY-IN-HEADER").decode()
    body = json.dumps(
        {
            "messages": [{"role": "user", "content": "the password is pw-ONLY-IN-HEADER"}],
            "echo": f"Basic {basic}",
            "again": base64.urlsafe_b64encode(b"dave:pw-ONLY-IN-HEADER").decode(),
        }
    )
    kept = scrubber.request(
        _request("https://api.example.test/v1/chat", body, Authorization=f"Basic {basic}")
    )
    text = _text(kept)
    for spelling in [*secret_encodings("pw-ONLY-IN-HEADER", user="carol"), basic]:
        assert spelling not in text
    assert "the password is <secret>" in text and '"echo": "<secret>"' in text
    assert "Authorization" not in text


def test_the_url_loses_named_parameters_and_userinfo_passwords() -> None:
    scrubber = Scrubber([SECRET])
    encoded_twice = quote(quote(SECRET, safe=""), safe="")
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(SECRET, safe=""))
    b64 = quote(base64.b64encode(f"eve:{SECRET}".encode()).decode(), safe="")
    uri = (
        "https://bob:hunter2-long@api.example.test/v1/x?Client-Secret=abc&page=2"
        f"&q={encoded_twice}&blob={b64}&lower={lower_hex}"
    )
    kept = scrubber.request(_request(uri))
    assert kept.uri == (
        f"https://bob:{PLACEHOLDER}@api.example.test/v1/x?page=2&q={PLACEHOLDER}"
        f"&blob={PLACEHOLDER}&lower={PLACEHOLDER}"
    )
    assert "hunter2-long" in scrubber.values  # and so searched for everywhere else


def test_a_binary_body_is_kept_byte_for_byte_except_secrets() -> None:
    scrubber = Scrubber([SECRET])
    body = b"\xff\xfe\x00binary " + SECRET.encode() + b" \x80tail"
    kept = scrubber.request(_request("http://127.0.0.1/upload", body))
    assert kept.body == b"\xff\xfe\x00binary <secret> \x80tail"


def test_responses_keep_llm_vocabulary_and_mask_credentials() -> None:
    scrubber = Scrubber()
    reply = {
        "choices": [{"logprobs": {"content": [{"token": "Hello", "logprob": -0.1}]}}],
        "session": {"password": "pw-in-reply-1", "key": "k-in-reply-22"},
        "usage": {"prompt_tokens": 9},
    }
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Content-Type": ["application/json"], "Set-Cookie": ["sid=cookie-0123456"]},
        "body": {"string": json.dumps(reply).encode()},
    }
    kept = scrubber.response(response)
    data = json.loads(kept["body"]["string"])
    assert data["choices"][0]["logprobs"]["content"][0]["token"] == "Hello"
    assert data["session"] == {"password": PLACEHOLDER, "key": "k-in-reply-22"}
    assert data["usage"] == {"prompt_tokens": 9}
    assert kept["headers"] == {"Content-Type": ["application/json"]}
    assert "sid=cookie-0123456" in scrubber.values


def test_short_named_values_are_masked_where_named_but_not_searched_for() -> None:
    scrubber = Scrubber()
    kept = scrubber.request(_request("http://127.0.0.1/x", "user=alice&pass=true&note=true", **{}))
    assert kept.body == b"user=alice&pass=<secret>&note=true"
    assert scrubber.values == []
