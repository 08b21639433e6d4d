"""Record a test's real LLM HTTP traffic once, replay it offline afterwards (vcrpy).

``@pytest.mark.recorded`` (or the ``llm_cassette`` fixture) puts a test's HTTP
traffic on a cassette beside the test, ``cassettes/<module>/<test>.yaml``.
The first run records what the flow really sent and got back; later runs
replay it without a network. What makes these cassettes safe to commit and
useful to keep:

* **no secrets** - only a short allow-list of headers is stored (never
  ``authorization`` or any ``*-api-key``); keys in query strings are removed;
  and every secret value seen (header values, provider keys in the
  environment) is replaced by ``<secret>`` anywhere else it shows up;
* **prompt matching** - requests match on a canonical form of their body:
  model, messages, tools (and the other fields that shape the reply), with
  JSON key order, ids and timestamps normalized. A changed prompt is reported
  as a diff of the prompt (:class:`PromptDriftError`), not as vcrpy's
  "can't overwrite existing cassette";
* **readable files** - JSON bodies are pretty-printed, multi-line bodies
  (streams) are YAML block text.

Record modes are vcrpy's (``once``, ``new_episodes``, ``none``, ``all``).
``--flows-record-mode`` on the command line wins; otherwise, with ``CI`` set,
the mode is ``none`` (replay only); otherwise the marker's ``record_mode``,
then the ini option ``flows_record_mode``, then ``once``.

vcrpy is imported only when a test records or replays.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import json
import os
import re
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from pytest_flows._markers import marker_settings
from pytest_flows.errors import FlowsUsageError
from pytest_flows.identity import Normalizer
from pytest_flows.network import is_loopback

__all__ = [
    "DEFAULT_MATCH_ON",
    "RECORD_MODES",
    "CassetteMismatchError",
    "PromptDriftError",
    "Recording",
    "RecordingBlockedError",
    "canonical_body",
    "llm_cassette",
    "render_prompt",
    "use_cassette",
]

RECORD_MODES = ("once", "new_episodes", "none", "all")
#: Host and port are left out so one cassette replays against any base URL
#: (a loopback server on a random port, a proxy in front of the provider).
DEFAULT_MATCH_ON = ("method", "path", "query", "llm_body")
#: The only headers a cassette keeps; everything else (auth, cookies, SDK
#: and platform headers that differ between machines) is dropped.
KEPT_HEADERS = frozenset({"content-type", "retry-after"})
#: Headers whose values are secrets: dropped, and scrubbed wherever else they appear.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "anthropic-api-key",
        "openai-organization",
        "openai-project",
        "x-amz-security-token",
        "cookie",
        "set-cookie",
    }
)
#: Query parameters removed from recorded URLs (their values are scrubbed too).
SECRET_QUERY = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "token",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-security-token",
        "x-goog-signature",
    }
)
#: Provider keys in the environment (the plugin hides them from tests; a
#: recording test gets them back while it may record).
PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "AZURE_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
)
#: What a replay-only test sees as a provider key, so SDK constructors that insist
#: on one work. Never sent anywhere: a replay answers from the cassette.
REPLAY_KEY = "sk-pytest-flows-replay-only"
SECRET_PLACEHOLDER = "<secret>"
#: Body fields that make up the prompt (and the shape of the reply).
PROMPT_KEYS = (
    "model",
    "system",
    "instructions",
    "messages",
    "input",
    "prompt",
    "contents",
    "systemInstruction",
    "system_instruction",
    "tools",
    "functions",
    "tool_choice",
    "function_call",
    "response_format",
    "text",
    "stream",
)
_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|SECRET_KEY|ACCESS_KEY)$")
_MIN_SECRET = 8


class PromptDriftError(pytest.fail.Exception):  # type: ignore[name-defined,misc]
    """A request the cassette cannot answer: the prompt (or the call count) changed.

    It fails the test directly (like ``pytest.fail``): HTTP clients and the
    frameworks catch ``Exception`` and would retry it, wrap it in a generic
    connection error, or swallow it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)


class CassetteMismatchError(PromptDriftError):
    """The cassette has recorded requests the test did not make."""


class RecordingBlockedError(PromptDriftError):
    """A request would be recorded from a host the network guard does not allow."""


# -- the canonical form of a request -------------------------------------------------------
def _decode(body: Any) -> Any:
    if body is None:
        return None
    if isinstance(body, bytes | bytearray):
        if not body:
            return None
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            return {"binary body bytes": len(body)}
    elif isinstance(body, str):
        text = body
    else:
        return repr(body)
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tool_key(tool: Any) -> str:
    if isinstance(tool, dict):
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(tool.get("name"), str):
            return str(tool["name"])
    return json.dumps(tool, sort_keys=True, default=repr)


def canonical_body(body: Any) -> Any:
    """What requests are matched on: the prompt part of a JSON body, normalized.

    For a JSON object with prompt fields (:data:`PROMPT_KEYS`: model, messages,
    tools, ...) only those count - sampling settings, ``stream_options``,
    ``user``, metadata do not; tools are sorted by name; UUIDs and ISO
    timestamps become placeholders. Other JSON counts whole; other text as is.
    """
    from pytest_flows.snapshot import normalized

    data = _decode(body)
    if isinstance(data, dict):
        kept = {key: data[key] for key in PROMPT_KEYS if key in data}
        if kept:
            data = kept
            for key in ("tools", "functions"):
                if isinstance(data.get(key), list):
                    data[key] = sorted(data[key], key=_tool_key)
    return normalized(data, Normalizer())


def _text_lines(text: str, indent: str) -> list[str]:
    return [indent + line for line in (text.splitlines() or [""])]


def _content_lines(content: Any, indent: str) -> list[str]:
    if isinstance(content, str):
        return _text_lines(content, indent)
    if isinstance(content, list):
        lines: list[str] = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                lines.extend(_text_lines(part["text"], indent))
            else:
                lines.append(indent + json.dumps(part, sort_keys=True, ensure_ascii=False))
        return lines
    if content is None:
        return []
    return [indent + json.dumps(content, sort_keys=True, ensure_ascii=False)]


def _message_lines(index: int, message: Any) -> list[str]:
    if not isinstance(message, dict):
        return [f"  [{index}] {json.dumps(message, sort_keys=True, ensure_ascii=False)}"]
    role = message.get("role", "?")
    extra = {
        k: v for k, v in message.items() if k not in {"role", "content", "tool_calls", "parts"}
    }
    head = f"  [{index} {role}]"
    if extra:
        head += " " + json.dumps(extra, sort_keys=True, ensure_ascii=False)
    lines = [head]
    lines.extend(_content_lines(message.get("content", message.get("parts")), "    "))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        name = function.get("name", "?")
        arguments = function.get("arguments", "")
        lines.append(f"    -> tool call {name}({arguments})")
    return lines


def render_prompt(canonical: Any) -> list[str]:
    """A canonical request body as readable lines (what a prompt diff shows)."""
    if not isinstance(canonical, dict):
        if isinstance(canonical, str):
            return _text_lines(canonical, "")
        return [json.dumps(canonical, sort_keys=True, ensure_ascii=False)]
    lines: list[str] = []
    for key in sorted(canonical, key=lambda k: (k in {"messages", "input", "contents"}, k)):
        value = canonical[key]
        if key in {"messages", "input", "contents"} and isinstance(value, list):
            lines.append(f"{key}:")
            for index, message in enumerate(value, 1):
                lines.extend(_message_lines(index, message))
        elif key in {"tools", "functions"} and isinstance(value, list):
            lines.append(f"{key}:")
            for tool in value:
                lines.append(f"  {_tool_key(tool)}: {json.dumps(tool, sort_keys=True)}")
        elif isinstance(value, str) and "\n" in value:
            lines.append(f"{key}:")
            lines.extend(_text_lines(value, "  "))
        else:
            lines.append(f"{key}: {json.dumps(value, sort_keys=True, ensure_ascii=False)}")
    return lines


def llm_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: the canonical bodies are equal (raises AssertionError otherwise)."""
    if canonical_body(r1.body) != canonical_body(r2.body):
        raise AssertionError("the prompts differ")


# -- secrets -------------------------------------------------------------------------------
class _Secrets:
    """Secret values seen while recording, scrubbed from everything saved."""

    def __init__(self, values: Sequence[str] = ()) -> None:
        self.values: set[str] = set()
        for value in values:
            self.add(value)

    def add(self, value: str | None) -> None:
        if not value:
            return
        value = value.strip()
        if len(value) >= _MIN_SECRET:
            self.values.add(value)
        for prefix in ("Bearer ", "bearer ", "Basic ", "Token ", "token "):
            if value.startswith(prefix):
                self.add(value[len(prefix) :])

    def add_environment(self) -> None:
        for name, value in os.environ.items():
            if _SECRET_ENV.search(name.upper()) and value != REPLAY_KEY:
                self.add(value)

    def scrub(self, value: Any) -> Any:
        from vcr.filters import replace_text

        # Longest first: a key that contains another key is replaced whole.
        for secret in sorted(self.values, key=len, reverse=True):
            value = replace_text(value, secret, SECRET_PLACEHOLDER)
        return value


def _filter_query(uri: str, secrets: _Secrets) -> str:
    parts = urlsplit(uri)
    if not parts.query:
        return uri
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = []
    for name, value in pairs:
        if name.lower() in SECRET_QUERY:
            secrets.add(value)
        else:
            kept.append((name, value))
    if len(kept) == len(pairs):
        return uri
    return urlunsplit(parts._replace(query=urlencode(kept)))


def _pretty_json(body: Any) -> Any:
    data = _decode(body)
    if isinstance(data, dict | list):
        return json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8")
    return body


# -- the cassette file format --------------------------------------------------------------
class _Serializer:
    """vcrpy's YAML cassette, readable: multi-line text as YAML block scalars."""

    header = (
        "# pytest-flows cassette: recorded HTTP traffic, replayed offline.\n"
        "# Secrets are filtered; requests match on method, path, query and the prompt.\n"
    )

    @staticmethod
    def _dumper() -> Any:
        import yaml  # type: ignore[import-untyped]

        dumper: Any = type("CassetteDumper", (yaml.SafeDumper,), {})

        def text(dumper: Any, data: str) -> Any:
            style = "|" if "\n" in data else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

        dumper.add_representer(str, text)
        return dumper

    def serialize(self, cassette: dict[str, Any]) -> str:
        import yaml

        dumped = yaml.dump(
            cassette, Dumper=self._dumper(), sort_keys=False, allow_unicode=True, width=100
        )
        return self.header + str(dumped)

    def deserialize(self, text: str) -> Any:
        import yaml

        return yaml.safe_load(text)


SERIALIZER = _Serializer()


def _check_readable(path: Path) -> None:
    """Refuse a cassette file vcrpy would silently treat as empty (and overwrite)."""
    if not path.is_file():
        return
    try:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            return
        data = SERIALIZER.deserialize(text)
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise ValueError("it has no 'interactions' list")
        for interaction in data["interactions"]:
            if not {"request", "response"} <= set(interaction):
                raise ValueError("an interaction lacks its request or response")
    except Exception as exc:
        raise FlowsUsageError(
            f"the cassette {path} cannot be read ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())}). Restore it "
            "from version control, or delete it and run the test once (with network access "
            "to the provider) to record it again."
        ) from None


# -- a recording ----------------------------------------------------------------------------
@dataclasses.dataclass
class _Interaction:
    method: str
    uri: str
    canonical: Any

    @property
    def where(self) -> str:
        return f"{self.method} {urlsplit(self.uri).path}"


def _describe(request: Any) -> _Interaction:
    return _Interaction(str(request.method), str(request.uri), canonical_body(request.body))


class Recording:
    """The cassette of one test (``llm_cassette``): what was recorded, replayed, refused."""

    def __init__(self, path: Path, record_mode: str, cassette: Any) -> None:
        self.path = path
        self.record_mode = record_mode
        self.cassette = cassette  # vcrpy's Cassette
        self.drifts: list[PromptDriftError] = []
        self._loaded = len(cassette.data)

    @property
    def requests(self) -> list[Any]:
        """The canonical bodies of every request on the cassette (recorded earlier or now)."""
        return [canonical_body(request.body) for request in self.cassette.requests]

    @property
    def play_count(self) -> int:
        """How many responses were replayed from the cassette."""
        return int(self.cassette.play_count)

    @property
    def recorded_count(self) -> int:
        """How many interactions were recorded (sent for real) in this test."""
        return len(self.cassette.data) - self._loaded

    @property
    def replay_only(self) -> bool:
        return bool(self.cassette.write_protected)

    def unplayed(self) -> list[str]:
        """The loaded interactions this test did not replay, described by their prompt."""
        return [
            _summary(_describe(request))
            for index, (request, _) in enumerate(self.cassette.data[: self._loaded])
            if not self.cassette.play_counts[index]
        ]

    def __repr__(self) -> str:
        return (
            f"<Recording {self.path.name} mode={self.record_mode} played={self.play_count} "
            f"recorded={self.recorded_count}>"
        )


def _summary(interaction: _Interaction, limit: int = 100) -> str:
    lines = [line.strip() for line in render_prompt(interaction.canonical)]
    text = " / ".join(line for line in lines if line)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{interaction.where}: {text}"


def _drift_message(recording: Recording, request: Any) -> str:
    cassette = recording.cassette
    new = _describe(cassette.filter_request(request))
    data = cassette.data
    same_place = [
        (index, _describe(stored))
        for index, (stored, _) in enumerate(data)
        if str(stored.method) == new.method
        and urlsplit(str(stored.uri)).path == urlsplit(new.uri).path
    ]
    head = (
        f"pytest-flows: this {new.where} request is not on the cassette, so it cannot be "
        f"replayed (record mode {recording.record_mode!r}).\n"
        f"  cassette: {recording.path}\n"
    )
    fix = (
        "If the change is intended, record the changed calls again:\n"
        "  pytest --flows-record-mode=new_episodes <this test>   (re-records only what "
        "changed, drops what is no longer used)\n"
        "  pytest --flows-record-mode=all <this test>            (re-records everything)\n"
        "and commit the cassette. In CI (CI is set) cassettes are only replayed."
    )
    if not data:
        return (
            head
            + "There is no recorded interaction to replay"
            + ("" if recording.path.exists() else " (the cassette file does not exist)")
            + ": record it first, on a machine with access to the provider:\n"
            "  pytest --flows-record-mode=once <this test>\n"
            "and commit the cassette. In CI (CI is set) cassettes are only replayed."
        )
    exhausted = [
        index
        for index, recorded in same_place
        if recorded.canonical == new.canonical and cassette.play_counts[index]
    ]
    if exhausted:
        return (
            head + "The same request was recorded, but every recording of it was already "
            f"replayed: the flow now makes this call more often ({len(exhausted) + 1} times) "
            "than when the cassette was recorded.\n"
            + "\n".join(render_prompt(new.canonical))
            + "\n"
            + fix
        )
    if not same_place:
        return (
            head + f"The cassette has no {new.where} request at all: the flow makes a call "
            "it did not make when the cassette was recorded. The new request:\n"
            + "\n".join(f"  {line}" for line in render_prompt(new.canonical))
            + "\n"
            + fix
        )
    unplayed = [(i, r) for i, r in same_place if not cassette.play_counts[i]] or same_place
    now = render_prompt(new.canonical)

    def likeness(item: tuple[int, _Interaction]) -> float:
        return difflib.SequenceMatcher(None, render_prompt(item[1].canonical), now).ratio()

    index, closest = max(unplayed, key=likeness)  # max keeps the first of equals
    diff = "".join(
        line + "\n"
        for line in difflib.unified_diff(
            render_prompt(closest.canonical),
            now,
            fromfile=f"recorded (interaction {index + 1} of {len(data)})",
            tofile="now",
            lineterm="",
        )
    )
    return (
        head + "The prompt changed since it was recorded. Closest recorded request:\n" + diff + fix
    )


def _guard_request(
    recording: Recording, allow: Callable[[str], bool] | None
) -> Callable[[Any], Any]:
    cassette = recording.cassette
    original = cassette.can_play_response_for

    def can_play_response_for(request: Any) -> Any:
        playable = original(request)
        if playable or cassette.filter_request(request) is None:
            return playable
        if cassette.write_protected:
            error = PromptDriftError(_drift_message(recording, request))
            recording.drifts.append(error)
            # from None: the client's own exception handling is not the story.
            raise error from None
        host = urlsplit(str(request.uri)).hostname or ""
        if allow is not None and not allow(host):
            raise RecordingBlockedError(
                f"pytest-flows: recording {request.method} {request.uri} needs the network, "
                f"and flows tests only reach this machine. Allow the provider for this test - "
                f"@pytest.mark.flows(allow_hosts=[{host!r}]) - or record against a loopback "
                f"server. Cassette: {recording.path}"
            ) from None
        return playable

    return can_play_response_for


def _make_vcr(record_mode: str, match_on: Sequence[str], secrets: _Secrets) -> Any:
    import vcr

    def before_record_request(request: Any) -> Any:
        request = copy.copy(request)
        for name, value in list(request.headers.items()):
            if name.lower() in SECRET_HEADERS:
                secrets.add(value)
        request.headers = {
            name: value for name, value in request.headers.items() if name.lower() in KEPT_HEADERS
        }
        request.uri = _filter_query(str(request.uri), secrets)
        request.body = _pretty_json(request.body)
        return request

    def before_record_response(response: dict[str, Any]) -> dict[str, Any]:
        headers = response.get("headers") or {}
        for name, values in headers.items():
            if name.lower() in SECRET_HEADERS:
                for value in values if isinstance(values, list) else [values]:
                    secrets.add(str(value))
        response["headers"] = {
            name: values for name, values in headers.items() if name.lower() in KEPT_HEADERS
        }
        kind = " ".join(str(v) for k, v in headers.items() if k.lower() == "content-type")
        body = response.get("body") or {}
        if "json" in kind and isinstance(body.get("string"), bytes | str):
            body["string"] = _pretty_json(body["string"])
        return response

    def before_save(request: Any, response: Any) -> tuple[Any, Any]:
        secrets.add_environment()
        request.uri = secrets.scrub(str(request.uri))
        request.body = secrets.scrub(request.body)
        request.headers = secrets.scrub(dict(request.headers))
        return request, secrets.scrub(response)

    recorder = vcr.VCR(
        serializer="flows",
        record_mode=record_mode,
        match_on=tuple(match_on),
        before_record_request=before_record_request,
        before_record_response=before_record_response,
        before_save_interaction=before_save,
        decode_compressed_response=True,
        record_on_exception=False,
        # Re-recording drops the recordings the test no longer uses.
        drop_unused_requests=record_mode in {"new_episodes", "all"},
    )
    recorder.register_serializer("flows", SERIALIZER)
    recorder.register_matcher("llm_body", llm_body)
    return recorder


def _check_options(record_mode: Any, match_on: Any) -> tuple[str, tuple[str, ...]]:
    if record_mode not in RECORD_MODES:
        raise FlowsUsageError(
            f"record_mode={record_mode!r} is not a record mode; use one of "
            f"{', '.join(RECORD_MODES)} (vcrpy's: once records a missing cassette and "
            "replays an existing one, none only replays, new_episodes records what is not "
            "on the cassette, all records everything again)."
        )
    if isinstance(match_on, str) or not all(isinstance(m, str) for m in match_on):
        raise FlowsUsageError(
            f"match_on={match_on!r} must be a sequence of matcher names, e.g. {DEFAULT_MATCH_ON!r}."
        )
    known = {"method", "uri", "url", "scheme", "host", "port", "path", "query", "headers"}
    known |= {"raw_body", "body", "llm_body"}
    unknown = sorted(set(match_on) - known)
    if unknown:
        raise FlowsUsageError(
            f"match_on: unknown matcher(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}."
        )
    return str(record_mode), tuple(match_on)


@contextlib.contextmanager
def use_cassette(
    path: str | os.PathLike[str],
    *,
    record_mode: str = "once",
    match_on: Sequence[str] = DEFAULT_MATCH_ON,
    allow_unused: bool = False,
    allow_host: Callable[[str], bool] | None = None,
    secrets: Sequence[str] = (),
) -> Iterator[Recording]:
    """Record to / replay from the cassette at ``path`` for the block.

    What the marker uses; call it yourself to record several phases of one
    test. A request the cassette cannot answer in a replay raises
    :class:`PromptDriftError` with a diff of the prompt. After a replay that
    left recorded interactions unused, the block fails with
    :class:`CassetteMismatchError` (the flow makes fewer calls than it did),
    unless ``allow_unused``. The cassette is written only if the block
    succeeds. ``secrets`` are extra values to scrub; ``allow_host(host)`` is
    asked before anything is recorded from a host.
    """
    record_mode, match_on = _check_options(record_mode, match_on)
    if not isinstance(path, str | os.PathLike):
        raise FlowsUsageError(f"use_cassette(path): expected a file path, got {path!r}.")
    where = Path(path)
    _check_readable(where)
    collected = _Secrets(secrets)
    context = _make_vcr(record_mode, match_on, collected).use_cassette(str(where))
    cassette = context.__enter__()
    recording = Recording(where, record_mode, cassette)
    cassette.can_play_response_for = _guard_request(recording, allow_host)
    try:
        yield recording
    except BaseException as exc:
        context.__exit__(type(exc), exc, exc.__traceback__)
        raise
    if recording.drifts:
        # The block swallowed the error (a framework caught BaseException): still fail.
        drift = recording.drifts[0]
        context.__exit__(type(drift), drift, None)
        raise PromptDriftError(str(drift))
    unplayed = recording.unplayed() if recording.replay_only and not allow_unused else []
    if unplayed:
        context.__exit__(None, None, None)
        raise CassetteMismatchError(
            f"pytest-flows: {len(unplayed)} recorded interaction(s) of {where} were not "
            "replayed: the flow no longer makes these calls.\n"
            + "".join(f"  - {line}\n" for line in unplayed)
            + "Record the cassette again (pytest --flows-record-mode=all <this test>), or "
            "pass allow_unused=True (@pytest.mark.recorded(allow_unused=True)) if some calls "
            "are optional."
        )
    context.__exit__(None, None, None)


# -- pytest integration -------------------------------------------------------------------------
_STARTED_KEYS: dict[str, str] = {}
MARKER_KWARGS = ("cassette", "record_mode", "match_on", "allow_unused")


def addoption(parser: pytest.Parser) -> None:
    # The plugin hides provider keys from tests before conftests load; keep
    # them for tests that record real calls.
    _STARTED_KEYS.update({k: os.environ[k] for k in PROVIDER_KEYS if os.environ.get(k)})
    group = parser.getgroup("flows")
    group.addoption(
        "--flows-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="record mode of @pytest.mark.recorded tests (vcrpy's): once (default; none "
        "when CI is set), new_episodes, none, all",
    )
    parser.addini(
        "flows_record_mode", "record mode of recorded tests when CI is not set", default="once"
    )


def configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "recorded(cassette=None, record_mode=None, match_on=None, allow_unused=False): record "
        "this test's HTTP traffic (real LLM calls) to cassettes/<module>/<test>.yaml once and "
        "replay it offline afterwards",
    )
    if not config.pluginmanager.has_plugin("pytest-flows-recording"):
        config.pluginmanager.register(_RecordingHooks(), "pytest-flows-recording")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def _record_mode(item: pytest.Item, kwargs: dict[str, Any]) -> str:
    cli = item.config.getoption("flows_record_mode", None)
    if cli is not None:
        return str(cli)
    if in_ci():
        return "none"
    if kwargs.get("record_mode") is not None:
        return str(kwargs["record_mode"])
    return str(item.config.getini("flows_record_mode") or "once").strip()


def cassette_path(item: pytest.Item, name: str | None = None) -> Path:
    """``<test dir>/cassettes/<module>/<test>.yaml`` (or ``name`` in that folder)."""
    module = Path(str(item.path))
    folder = module.parent / "cassettes" / module.stem
    if name is None:
        parts = item.nodeid.split("::")[1:] or [item.name]
        name = ".".join(parts)
    if not isinstance(name, str) or not name:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.recorded(cassette=...) takes a file name or path, "
            f"got {name!r}"
        )
    path = Path(name)
    if not path.is_absolute():
        path = folder / re.sub(r"[^\w.\-\[\]/]", "_", name)
    return path if path.suffix in {".yaml", ".yml"} else path.with_name(path.name + ".yaml")


def _wants_recording(item: pytest.Item) -> bool:
    return item.get_closest_marker("recorded") is not None or "llm_cassette" in getattr(
        item, "fixturenames", ()
    )


def _marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    return marker_settings(item, "recorded", MARKER_KWARGS, positional="cassette")


def _allow_host(item: pytest.Item) -> Callable[[str], bool]:
    """What the test's network guard lets through (looked up when a request is recorded)."""

    def allow(host: str) -> bool:
        from pytest_flows.session import SESSION_KEY

        session = item.stash.get(SESSION_KEY, None)
        if session is None:  # not a flows test: no guard to agree with
            return True
        return is_loopback(host) or host.lower() in {h.lower() for h in session.allow_hosts}

    return allow


@dataclasses.dataclass
class _Active:
    stack: contextlib.ExitStack
    context: Any
    recording: Recording
    failed: bool = False


_ACTIVE = pytest.StashKey[_Active]()


@contextlib.contextmanager
def _provider_keys(may_record: bool) -> Iterator[None]:
    """While a test may record: the keys the session started with. Replay only: placeholders."""
    added = []
    for key in PROVIDER_KEYS:
        if os.environ.get(key):
            continue
        value = _STARTED_KEYS.get(key) if may_record else REPLAY_KEY
        if value:
            os.environ[key] = value
            added.append(key)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


class _RecordingHooks:
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if not _wants_recording(item):
            return
        settings = _marker_kwargs(item)
        mode = _record_mode(item, settings)
        path = cassette_path(item, settings.get("cassette"))
        match_on = settings.get("match_on") or DEFAULT_MATCH_ON
        try:
            if settings.get("record_mode") is not None:
                # checked even when CI or the command line overrides it
                _check_options(settings["record_mode"], match_on)
            mode, match_on = _check_options(mode, match_on)
        except FlowsUsageError as exc:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.recorded: {exc}") from None
        may_record = mode in {"all", "new_episodes"} or (mode == "once" and not path.exists())
        stack = contextlib.ExitStack()
        stack.enter_context(_provider_keys(may_record))
        context = use_cassette(
            path,
            record_mode=mode,
            match_on=match_on,
            allow_unused=bool(settings.get("allow_unused", False)),
            allow_host=_allow_host(item),
            secrets=list(_STARTED_KEYS.values()),
        )
        try:
            recording = context.__enter__()
        except BaseException:
            stack.close()
            raise
        item.stash[_ACTIVE] = _Active(stack, context, recording)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        active = item.stash.get(_ACTIVE, None)
        if active is not None and report.failed:
            active.failed = True
            drifts = active.recording.drifts
            shown = call.excinfo is not None and isinstance(call.excinfo.value, PromptDriftError)
            if drifts and not shown:
                report.sections.append(("pytest-flows recording", str(drifts[0])))
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            yield
        finally:
            active = item.stash.get(_ACTIVE, None)
            if active is not None:
                del item.stash[_ACTIVE]
                with active.stack:
                    if active.failed:
                        # Keep the cassette as it was: a failed test records nothing.
                        failure = RuntimeError("the test failed")
                        with contextlib.suppress(RuntimeError):
                            active.context.__exit__(RuntimeError, failure, None)
                    else:
                        active.context.__exit__(None, None, None)


@pytest.fixture
def llm_cassette(request: pytest.FixtureRequest) -> Recording:
    """The cassette of this test (requesting it turns recording on, like the marker)."""
    active = request.node.stash.get(_ACTIVE, None)
    if active is None:
        raise FlowsUsageError(
            f"{request.node.nodeid}: no cassette is active; mark the test with "
            "@pytest.mark.recorded."
        )
    recording: Recording = active.recording
    return recording
