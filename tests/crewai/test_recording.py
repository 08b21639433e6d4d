"""Recording real LLM calls: crewai's real ``LLM`` (OpenAI provider) over HTTP to a loopback
server, recorded once, replayed offline; secrets, prompt drift and call counts."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import recording_flows
from loopback_openai import LoopbackOpenAI
from recording_flows import SummaryFlow, TwiceFlow

from pytest_flows._internal.errors import FlowsUsageError
from pytest_flows._internal.recording.cassette import use_cassette
from pytest_flows._internal.recording.drift import (
    CassetteMismatchError,
    PromptDriftError,
    RecordingBlockedError,
)

KEY = "sk-test-KNOWN-FAKE-KEY-0123456789"
INPUTS = {"topic": "tides"}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def _record(flows, monkeypatch, path: Path, flow=SummaryFlow, **kwargs):
    """Record ``flow`` against a fresh loopback server, then stop the server."""
    with LoopbackOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with use_cassette(path, **kwargs) as recording:
            run = flows.run(flow, **({"inputs": INPUTS} if flow is SummaryFlow else {}))
    # Anything not replayed now would hit a closed port and fail.
    return run, recording, server


def test_a_flow_recorded_once_replays_offline_with_the_same_trace(
    flows, monkeypatch, tmp_path, key
):
    path = tmp_path / "summary.yaml"
    recorded, recording, server = _record(flows, monkeypatch, path)

    assert path.is_file() and recording.recorded_count == 3
    sent = [request["json"] for request in server.requests]
    assert [request.get("stream", False) for request in sent] == [False, True, True]
    asyncs = [request["headers"].get("X-Stainless-Async") for request in server.requests]
    assert asyncs[0] == "false" and asyncs[2] != "false"  # the title call went async

    with use_cassette(path, record_mode="none") as replay:
        replayed = flows.run(SummaryFlow, inputs=INPUTS)

    assert replayed.trace.render() == recorded.trace.render()
    assert replayed.output == recorded.output == replayed.state["title"]
    # The replayed calls count in run.usage, with the tokens the provider reported.
    assert replayed.usage.llm_calls == recorded.usage.llm_calls == 3
    # (the stand-in reports usage on its one non-streamed reply: 9 + 5 tokens)
    assert replayed.usage.tokens == recorded.usage.tokens == 14
    assert replayed.usage.by_method["outline"].tokens == 14
    assert (replay.play_count, replay.recorded_count) == (3, 0)
    assert len(server.requests) == 3
    text = path.read_text()
    assert KEY not in text
    assert "authorization" not in text.lower()
    assert "Summarize in one line:" in text  # readable: prompts as text
    assert "data: [DONE]" in text  # the streamed replies, as block text


def test_the_cassette_keeps_no_secret_from_headers_query_strings_or_echoes(tmp_path, key):
    path = tmp_path / "echo.yaml"
    secrets = {
        "query key": "q-SECRET-aaaaaaaa1111",
        "query api_key": "q-SECRET-bbbbbbbb2222",
        "api-key": "h-SECRET-cccccccc3333",
        "x-api-key": "h-SECRET-dddddddd4444",
    }

    def call(base_url: str) -> dict[str, object]:
        response = httpx.post(
            f"{base_url}/echo",
            params={
                "key": secrets["query key"],
                "api_key": secrets["query api_key"],
                "page": "2",
            },
            headers={
                "Authorization": f"Bearer {KEY}",
                "api-key": secrets["api-key"],
                "x-api-key": secrets["x-api-key"],
            },
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
        return dict(response.json())

    with LoopbackOpenAI() as server, use_cassette(path):
        live = call(server.base_url)
    assert live["query"] == {"key": secrets["query key"], "api_key": secrets["query api_key"],
                             "page": "2"}  # fmt: skip

    text = path.read_text()
    for name, secret in [*secrets.items(), ("authorization", KEY)]:
        assert secret not in text, f"{name} leaked into the cassette"
    assert "page=2" in text
    assert "<secret>" in text  # the echoed values were scrubbed from the response
    with use_cassette(path, record_mode="none") as replay:
        replayed = call(server.base_url)  # the server is gone; the keys need not match
    assert replay.play_count == 1
    assert replayed["query"] == {"key": "<secret>", "api_key": "<secret>", "page": "2"}


def test_a_changed_prompt_fails_with_a_diff_of_the_prompt(flows, monkeypatch, tmp_path, key):
    path = tmp_path / "summary.yaml"
    _record(flows, monkeypatch, path)
    monkeypatch.setattr(recording_flows, "SUMMARY_PROMPT", "Summarize in two lines:")

    with pytest.raises(PromptDriftError) as caught, use_cassette(path) as replay:
        flows.run(SummaryFlow, inputs=INPUTS)

    message = str(caught.value)
    assert "The prompt changed since it was recorded" in message
    assert "--- recorded (interaction 2 of 3)\n+++ now\n" in message
    assert "-    Summarize in one line:\n+    Summarize in two lines:\n" in message
    assert "--flows-record-mode=new_episodes" in message
    assert "CannotOverwriteExistingCassette" not in message
    assert len(replay.drifts) == 1
    assert "Summarize in one line:" in path.read_text()  # a failed replay writes nothing


def test_new_episodes_records_only_the_changed_calls_and_drops_the_stale_ones(
    flows, monkeypatch, tmp_path, key
):
    path = tmp_path / "summary.yaml"
    _record(flows, monkeypatch, path)
    monkeypatch.setattr(recording_flows, "SUMMARY_PROMPT", "Summarize in two lines:")

    _, rerecord, server = _record(flows, monkeypatch, path, record_mode="new_episodes")

    # The outline was replayed; the summary (and the title built on it) were recorded.
    assert (rerecord.play_count, rerecord.recorded_count, len(server.requests)) == (1, 2, 2)
    text = path.read_text()
    assert "Summarize in two lines:" in text and "Summarize in one line:" not in text
    with use_cassette(path, record_mode="none") as replay:
        flows.run(SummaryFlow, inputs=INPUTS)
    assert replay.play_count == 3


def test_more_calls_than_recorded_fail_and_fewer_calls_fail_at_the_end(
    flows, monkeypatch, tmp_path, key
):
    path = tmp_path / "twice.yaml"
    with LoopbackOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with use_cassette(path):
            flows.run(TwiceFlow, inputs={"times": 2})

    with pytest.raises(PromptDriftError, match=r"more often \(3 times\)"):  # noqa: SIM117
        with use_cassette(path, record_mode="none"):
            flows.run(TwiceFlow, inputs={"times": 3})

    with pytest.raises(CassetteMismatchError) as caught:  # noqa: SIM117
        with use_cassette(path, record_mode="none"):
            flows.run(TwiceFlow, inputs={"times": 1})
    assert "1 recorded interaction(s)" in str(caught.value)
    assert 'POST /v1/chat/completions: model: "gpt-4o-mini" / messages: / [1 user] / Ping?' in str(
        caught.value
    )

    with use_cassette(path, record_mode="none", allow_unused=True) as replay:
        flows.run(TwiceFlow, inputs={"times": 1})
    assert replay.play_count == 1


def test_a_host_the_guard_refuses_is_not_recorded(tmp_path):
    with LoopbackOpenAI() as server:  # noqa: SIM117
        with pytest.raises(RecordingBlockedError, match=r"allow_hosts=\['127.0.0.1'\]"):
            with use_cassette(tmp_path / "c.yaml", allow_host=lambda host: False):
                httpx.post(f"{server.base_url}/chat/completions", json={"messages": []})
    assert server.requests == []
    assert not (tmp_path / "c.yaml").exists()


def test_replaying_a_cassette_that_does_not_exist_says_to_record_it(tmp_path):
    with LoopbackOpenAI() as server:  # noqa: SIM117
        with pytest.raises(PromptDriftError, match=r"the cassette file does not exist\): record"):
            with use_cassette(tmp_path / "missing.yaml", record_mode="none"):
                httpx.post(f"{server.base_url}/chat/completions", json={"messages": []})
    assert server.requests == []


def test_bad_cassettes_and_options_are_usage_errors(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions: [unclosed\n")
    with pytest.raises(FlowsUsageError, match=r"(?s)broken.yaml cannot be read .* delete it"):  # noqa: SIM117
        with use_cassette(broken):
            pass
    with pytest.raises(FlowsUsageError, match="not a record mode; use one of once, new_episodes"):  # noqa: SIM117
        with use_cassette(tmp_path / "x.yaml", record_mode="sometimes"):
            pass
    with pytest.raises(FlowsUsageError, match="unknown matcher"):  # noqa: SIM117
        with use_cassette(tmp_path / "x.yaml", match_on=["method", "prompt"]):
            pass


# -- the marker ---------------------------------------------------------------------------------
MARKED_TEST = """
import os

import httpx
import pytest
from loopback_openai import LoopbackOpenAI

from pytest_flows._internal.recording.scrub import REPLAY_KEY


@pytest.fixture
def base_url(llm_cassette):
    if llm_cassette.replay_only:
        assert os.environ["OPENAI_API_KEY"] == REPLAY_KEY
        yield "http://127.0.0.1:9/v1"  # nothing listens there: a replay must not connect
    else:
        with LoopbackOpenAI() as server:
            yield server.base_url


@pytest.mark.recorded
def test_chat(base_url):
    body = {"model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": os.environ.get("PROMPT", "Hello there")}]}
    reply = httpx.post(f"{base_url}/chat/completions", json=body,
                       headers={"Authorization": "Bearer sk-test-MARKED-KEY-000000"}).json()
    assert reply["choices"][0]["message"]["content"].startswith("2 words")
"""


def test_the_marker_records_beside_the_test_and_ci_replays_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        loopback_openai=Path(__file__).with_name("loopback_openai.py").read_text(),
        test_marked=MARKED_TEST,
    )
    args = ("-p", "no:randomly", "-p", "no:cacheprovider")
    cassette = pytester.path / "cassettes" / "test_marked" / "test_chat.yaml"
    monkeypatch.delenv("CI", raising=False)

    pytester.runpytest(*args).assert_outcomes(passed=1)  # records
    assert cassette.is_file()
    assert "sk-test-MARKED-KEY" not in cassette.read_text()
    recorded = cassette.read_text()

    monkeypatch.setenv("CI", "true")
    pytester.runpytest(*args).assert_outcomes(passed=1)  # replays, no server
    assert cassette.read_text() == recorded

    monkeypatch.setenv("PROMPT", "Hello you")
    result = pytester.runpytest(*args)  # CI: a changed prompt fails, nothing is re-recorded
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*-    Hello there", "*+    Hello you"])
    assert cassette.read_text() == recorded

    # The command line wins over CI: re-record on purpose.
    pytester.runpytest("--flows-record-mode=all", *args).assert_outcomes(passed=1)
    assert "Hello you" in cassette.read_text() and "Hello there" not in cassette.read_text()


def test_a_failing_recorded_test_writes_no_cassette(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        loopback_openai=Path(__file__).with_name("loopback_openai.py").read_text(),
        test_failing=MARKED_TEST.replace('startswith("2 words")', 'startswith("nope")'),
    )
    pytester.runpytest("-p", "no:randomly").assert_outcomes(failed=1)
    assert not (pytester.path / "cassettes").exists()


def test_a_bad_marker_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.recorded(record_mode="sometimes")
        def test_mode():
            pass

        @pytest.mark.recorded(cassete="x")
        def test_typo():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*record_mode='sometimes' is not a record mode*",
            "*@pytest.mark.recorded got unknown argument(s) cassete; it accepts cassette*",
        ]
    )


KEYS_TEST = """
import os

import pytest

from pytest_flows._internal.recording.scrub import REPLAY_KEY


def test_plain(flows):
    assert "OPENAI_API_KEY" not in os.environ  # hidden from every test


@pytest.mark.recorded
def test_may_record():
    assert os.environ["OPENAI_API_KEY"] == "sk-session-key-123456789"


@pytest.mark.recorded(record_mode="none")
def test_replays_only():
    assert os.environ["OPENAI_API_KEY"] == REPLAY_KEY
"""


def test_provider_keys_come_back_only_while_a_test_may_record(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_keys=KEYS_TEST)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-session-key-123456789")
    pytester.runpytest("-p", "no:randomly").assert_outcomes(passed=3)


def test_recording_from_a_host_the_flows_guard_refuses_names_the_fix(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # .invalid never resolves (RFC 6761), and the request is refused before any lookup.
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        import httpx
        import pytest

        @pytest.mark.recorded
        def test_blocked(flows):
            httpx.post("https://llm.invalid/v1/chat/completions", json={"messages": []})
        """
    )
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "recording POST https://llm.invalid/v1/chat/completions needs the network" in output
    assert "@pytest.mark.flows(allow_hosts=['llm.invalid'])" in output
    assert not (pytester.path / "cassettes").exists()
