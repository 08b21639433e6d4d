"""No secret survives a recording: not in the cassette, not in a drift report, not in the CI log.

Secrets are planted in every place a request can carry one - named query
parameters, percent-encoded in the query, a form body, JSON body fields, the
prompt itself (raw and JSON-escaped), base64 of ``user:pass`` - recorded against
the loopback stand-in, and then every spelling of every one of them is looked
for in the cassette file and in pytest's output.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import crewai  # noqa: F401 - loaded before pytester runs: its C extensions load once per process
import httpx
import pytest
from loopback_openai import LoopbackOpenAI

from pytest_flows._internal.recording.cassette import use_cassette
from pytest_flows._internal.secrets import PROVIDER_KEYS, is_secret_env_name, secret_encodings

#: The issue's example: every character that URL- and JSON-encoding change.
ENV_SECRET = "AbC/dEf+GhI="
#: Values that are secret because of the name they are sent under.
NAMED = {
    "client_secret": "cs-VALUE-0001",
    "Password": "pw-VALUE-0002",
    "access-token": "at-VALUE-0003",
    "TOKEN": "tk-VALUE-0004",
    "key": "ky-VALUE-0005",
    "X-Amz-Signature": "sg-VALUE-0006",
}
FORM_SECRET = "fs-VALUE-0007"
JSON_SECRET = "jk-VALUE-0008"
BEARER = "sk-test-BEARER-0009"


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _json_escaped(value: str) -> str:
    """``value`` as some JSON encoders write it: ``\\/`` and ``\\u`` escapes."""
    return value.replace("/", "\\/").replace("+", "\\u002b").replace("=", "\\u003D")


def _calls(base_url: str, secret: str) -> list[dict[str, object]]:
    """Three requests to the echo endpoint, each carrying ``secret`` somewhere else."""
    echo = f"{base_url}/echo"
    auth = {"Authorization": f"Bearer {BEARER}"}
    replies = [
        # Named query parameters, and the secret percent-encoded in an unnamed one.
        httpx.post(
            echo,
            params={**NAMED, "q": secret, "page": "2"},
            headers={**auth, "X-Basic": f"Basic {_basic('alice', secret)}"},
            json={"model": "m", "messages": [{"role": "user", "content": "query"}]},
        ),
        # A form body: a named field and the secret form-encoded in another.
        httpx.post(
            echo,
            data={"username": "alice", "client_secret": FORM_SECRET, "note": f"key {secret}"},
            headers=auth,
        ),
        # A JSON body: a named field, the secret in the prompt (raw and JSON-escaped)
        # and base64 of bob:secret.
        httpx.post(
            echo,
            content=json.dumps(
                {
                    "model": "m",
                    "api_key": JSON_SECRET,
                    "metadata": {"basic": _basic("bob", secret)},
                    "messages": [
                        {"role": "user", "content": f"my key is {secret}"},
                        {"role": "user", "content": f"escaped {secret}"},
                    ],
                }
            ).replace(f"escaped {secret}", f"escaped {_json_escaped(secret)}"),
            headers={**auth, "content-type": "application/json"},
        ),
    ]
    return [dict(reply.json()) for reply in replies]


def _spellings() -> list[tuple[str, str]]:
    found = [(f"env secret as {e!r}", e) for e in secret_encodings(ENV_SECRET, user="alice")]
    found += [(f"env secret as {e!r}", e) for e in secret_encodings(ENV_SECRET, user="bob")]
    for name, value in [*NAMED.items(), ("form", FORM_SECRET), ("json", JSON_SECRET)]:
        found += [(f"{name} as {e!r}", e) for e in secret_encodings(value)]
    found += [(f"bearer as {e!r}", e) for e in secret_encodings(BEARER)]
    return found


def _assert_no_secret(text: str, where: str) -> None:
    leaks = [what for what, spelling in _spellings() if spelling in text]
    assert not leaks, f"secrets leaked into {where}: {leaks}"


def test_every_spelling_of_every_secret_stays_out_of_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "echo.yaml"
    monkeypatch.setenv("ACME_API_KEY", ENV_SECRET)
    with LoopbackOpenAI() as server, use_cassette(path) as recording:
        live = _calls(server.base_url, ENV_SECRET)
    assert recording.recorded_count == 3
    # The server really got every secret: the test plants what it claims to plant.
    assert live[0]["query"] == {**NAMED, "q": ENV_SECRET, "page": "2"}
    assert f"client_secret={FORM_SECRET}" in str(live[1]["body"])
    assert JSON_SECRET in str(live[2]["body"])
    assert _json_escaped(ENV_SECRET) in str(live[2]["body"])

    text = path.read_text()
    _assert_no_secret(text, "the cassette")
    # What is left is still readable: names kept, values masked.
    assert "page=2" in text and "q=<secret>" in text
    assert "client_secret=<secret>" in text and "username=alice" in text
    assert '"api_key": "<secret>"' in text
    assert "my key is <secret>" in text

    # A replay (a new process, another key value) matches on the scrubbed form:
    # the prompts that held a secret replay.
    monkeypatch.setenv("ACME_API_KEY", "ZyX/wVu+TsR=")
    with use_cassette(path, record_mode="none") as replay:
        replayed = _calls("http://127.0.0.1:9/v1", "ZyX/wVu+TsR=")  # nothing listens there
    assert replay.play_count == 3
    assert replayed[0]["query"] == {**dict.fromkeys(NAMED, "<secret>"), "q": "<secret>",
                                    "page": "2"}  # fmt: skip


def test_secret_names_ignore_case_and_separators_but_not_llm_vocabulary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "names.yaml"
    body = {
        "model": "m",
        "clientSecret": "short",  # too short to search for, masked where it is named
        "CLIENT-SECRET": "other",
        "max_tokens": 12,
        "prompt_cache_key": "cache-me",
        "messages": [{"role": "user", "content": "hi"}],
    }
    with LoopbackOpenAI() as server, use_cassette(path):
        httpx.post(f"{server.base_url}/echo", json=body)
    text = path.read_text()
    assert text.count('"clientSecret": "<secret>"') == 1
    assert text.count('"CLIENT-SECRET": "<secret>"') == 1
    # The echo gives them back inside a JSON string: masked there as values.
    assert "short" not in text and "other" not in text
    assert '"max_tokens": 12' in text and '"prompt_cache_key": "cache-me"' in text


def test_one_list_of_secret_names_for_isolation_and_recording() -> None:
    from pytest_flows._internal.recording import pytest_wiring

    assert pytest_wiring.PROVIDER_KEYS is PROVIDER_KEYS
    for name in [*PROVIDER_KEYS, "ACME_API_KEY", "ACME_APIKEY", "GITHUB_TOKEN", "DB_PASSWORD"]:
        assert is_secret_env_name(name), name
    for name in ["PATH", "HOME", "OPENAI_BASE_URL", "MAX_TOKENS"]:
        assert not is_secret_env_name(name), name


# -- the marker: what CI prints ------------------------------------------------------------------
FLOW_TEST = """
import os

import pytest
from crewai import LLM
from crewai.flow.flow import Flow, start
from loopback_openai import LoopbackOpenAI

SECRET = "AbC/dEf+GhI="


class KeyFlow(Flow):
    @start()
    def ask(self):
        key = os.environ["ACME_API_KEY"]
        llm = LLM(model="gpt-4o-mini", api_key=key)
        prompt = os.environ.get("PROMPT", "Check this") + " " + key
        return str(llm.call([{"role": "user", "content": prompt}]))


@pytest.fixture
def provider(llm_cassette, monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", SECRET)
    if llm_cassette.replay_only:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
        yield
    else:
        with LoopbackOpenAI() as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            yield


@pytest.mark.recorded
def test_key_flow(flows, provider):
    run = flows.run(KeyFlow)
    print("the flow said", run.output)
    assert run.output.startswith("3 words")
"""


def test_a_prompt_holding_a_secret_replays_and_its_drift_report_prints_no_secret(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        loopback_openai=Path(__file__).with_name("loopback_openai.py").read_text(),
        test_key=FLOW_TEST,
    )
    args = ("-p", "no:randomly", "-p", "no:cacheprovider", "-rA", "--log-level=DEBUG")
    cassette = pytester.path / "cassettes" / "test_key" / "test_key_flow.yaml"
    monkeypatch.delenv("CI", raising=False)
    spellings = [*secret_encodings(ENV_SECRET), f"Bearer {ENV_SECRET}"]

    recorded = pytester.runpytest(*args)
    recorded.assert_outcomes(passed=1)
    assert "Check this <secret>" in cassette.read_text()
    for text, where in [(cassette.read_text(), "cassette"), (recorded.stdout.str(), "output")]:
        assert not [s for s in spellings if s in text], f"the secret is in the {where}"

    monkeypatch.setenv("CI", "true")
    replayed = pytester.runpytest(*args)  # the secret in the prompt matches <secret>
    replayed.assert_outcomes(passed=1)
    assert not [s for s in spellings if s in replayed.stdout.str()]

    monkeypatch.setenv("PROMPT", "Check that")
    drifted = pytester.runpytest(*args)
    drifted.assert_outcomes(failed=1)
    drifted.stdout.fnmatch_lines(["*-    Check this <secret>", "*+    Check that <secret>"])
    output = drifted.stdout.str()
    assert "Captured log call" in output  # the logs were printed, and scrubbed
    assert not [s for s in spellings if s in output], output


DIRECT_TEST = """
import logging

from pytest_flows._internal.recording.cassette import use_cassette


def test_direct(tmp_path):
    with use_cassette(tmp_path / "c.yaml", secrets=["AbC/dEf+GhI="]):
        pass
    logging.getLogger("app").warning("calling with key=AbC%2FdEf%2BGhI%3D")
    print("key is AbC/dEf+GhI=")
    assert "AbC/dEf+GhI=" == "", "the key AbC/dEf+GhI= was wrong"


def test_without_a_cassette():
    print("not a secret here: AbC/dEf+GhI=")
    assert False
"""


def test_a_test_that_opens_a_cassette_itself_gets_a_scrubbed_report(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_direct=DIRECT_TEST)
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    direct, _, other = output.partition("test_without_a_cassette")
    assert "the key <secret> was wrong" in direct and "key is <secret>" in direct
    assert "key=<secret>" in direct  # the captured log
    assert not [s for s in secret_encodings(ENV_SECRET) if s in direct], direct
    assert "not a secret here: AbC/dEf+GhI=" in other  # only recorded tests are scrubbed


def test_a_failing_flows_tests_report_shows_no_secret_the_session_started_with(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test reads the key before the flows test starts (say, at import) and passes
    # it to the flow: neither the trace section nor pytest's assertion message may
    # print it, in any form.
    secret = "sk-live-TRACE-SECRET-0123456789abcdef"
    pytester.makepyfile(
        """
        import os
        from crewai.flow.flow import Flow, start

        KEY = os.environ["OPENAI_API_KEY"]


        class Echo(Flow):
            @start()
            def echo(self):
                return self.state["api_key"]


        def test_fails(flows):
            run = flows.run(Echo, inputs={"api_key": KEY})
            assert run.output == "something else"
        """
    )
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    # the plugin alone: the other plugins' imports cost seconds a run
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "pytest_flows.plugin")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "- pytest-flows trace -" in output
    assert "flow started Echo" in output
    for spelling in (secret, secret.replace("-", "%2D"), "TRACE-SECRET"):
        assert spelling not in output
