"""The flight recorder's core, without a framework: importable in production, the
record format, no secret in a record (in any encoding), the size cap, the writer."""

from __future__ import annotations

import base64
import contextvars
import gzip
import json
import logging
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from pytest_flows._internal.flight.capture import FlightRecorder, RunRecording
from pytest_flows._internal.flight.format import SUFFIX, RecordError, jsonable, read_record
from pytest_flows._internal.flight.writer import RecordLeakError, Writer, encode_record
from pytest_flows.recorder import record_flows, recording_from_env, stop_recording

KEY = "sk-live-SECRET+value/0123456789=="


def test_importing_the_recorder_loads_no_test_dependency():
    code = (
        "import sys, pytest_flows.recorder\n"
        "print(sorted(m for m in ('pytest', '_pytest', 'hypothesis', 'syrupy', 'vcr',"
        " 'freezegun', 'crewai', 'agent_framework') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _record(tmp_path: Path, *entries: dict, max_bytes: int = 1 << 20) -> Path:
    recorder = FlightRecorder(tmp_path, max_bytes=max_bytes)
    run = RunRecording(recorder, "toy", "1.0", "app.flows:Toy", {"inputs": {"n": 1}})
    for entry in entries:
        run.note(**entry)
    run.finish("finished", output="done")
    assert recorder.flush(timeout=10)
    (path,) = recorder.written
    return path


def test_a_record_is_versioned_json_lines_gzip_and_reads_back(tmp_path):
    path = _record(
        tmp_path,
        {"kind": "method.started", "method": "a"},
        {"kind": "method.finished", "method": "a", "output": {"x": (1, 2)}},
    )
    assert path.name.endswith(SUFFIX)
    with gzip.open(path, "rt") as stream:
        lines = [json.loads(line) for line in stream]
    assert lines[0]["format"] == "pytest-flows-record" and lines[0]["version"] == 1
    record = read_record(path)
    assert record.target == "app.flows:Toy" and record.run_kwargs == {"inputs": {"n": 1}}
    assert [e["kind"] for e in record.entries] == ["method.started", "method.finished"]
    assert record.entries[1]["output"] == {"x": [1, 2]}
    assert [e["seq"] for e in record.entries] == [1, 2]
    assert record.outcome == "finished" and not record.truncated


def test_reading_something_else_is_a_clear_error(tmp_path):
    (tmp_path / "x.gz").write_bytes(b"not gzip")
    with pytest.raises(RecordError, match="is not a flight record"):
        read_record(tmp_path / "x.gz")
    newer = tmp_path / "new.gz"
    newer.write_bytes(gzip.compress(b'{"format": "pytest-flows-record", "version": 99}\n'))
    with pytest.raises(RecordError, match="Upgrade pytest-flows"):
        read_record(newer)


def test_values_are_copied_when_noted(tmp_path):
    state = {"items": [1]}
    recorder = FlightRecorder(tmp_path)
    run = RunRecording(recorder, "toy", "1", "m:F", {})
    run.note("method.finished", method="a", output=state)
    state["items"].append(2)  # the flow goes on mutating its state
    assert run.entries[0]["output"] == {"items": [1]}


def test_jsonable_never_fails():
    class Odd:
        def __repr__(self) -> str:
            return "<odd>"

    loop: list = []
    loop.append(loop)
    assert jsonable({"a": Odd(), "b": {3, 1}, "c": float("nan")}) == {
        "a": "<odd>",
        "b": [1, 3],
        "c": "nan",
    }
    assert "<too deep>" in json.dumps(jsonable(loop))


# -- no secret in a record (the cassette secret tests' cases) ----------------------------------
def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


def test_environment_secrets_are_scrubbed_in_any_encoding(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    spellings = [
        KEY,
        quote(KEY, safe=""),
        quote_plus(KEY),
        json.dumps(KEY)[1:-1].replace("/", "\\/"),
        base64.b64encode(f"alice:{KEY}".encode()).decode(),
        base64.urlsafe_b64encode(KEY.encode()).decode(),
    ]
    path = _record(
        tmp_path,
        *(
            {"kind": "llm.request", "messages": [{"role": "user", "content": f"my key: {s}"}]}
            for s in spellings
        ),
    )
    text = _text(path)
    assert "SECRET" not in text
    assert "<secret>" in text
    assert len(read_record(path).of_kind("llm.request")) == len(spellings)


def test_secret_named_fields_are_masked_and_their_values_removed_everywhere(tmp_path):
    path = _record(
        tmp_path,
        {"kind": "method.finished", "method": "a", "output": {"client_secret": "hunter2-longer"}},
        {"kind": "method.finished", "method": "b", "output": "echo: hunter2-longer"},
        {
            "kind": "tool.started",
            "tool": "http",
            "args": {"headers": {"X-Api-Key": "abcd1234efgh"}},
        },
        {"kind": "tool.finished", "tool": "http", "output": '{"api_key": "zzzz9999yyyy"}'},
        {"kind": "tool.finished", "tool": "http", "output": "https://h/x?token=tttt5555uuuu&q=1"},
    )
    text = _text(path)
    for secret in ("hunter2-longer", "abcd1234efgh", "zzzz9999yyyy", "tttt5555uuuu"):
        assert secret not in text
    record = read_record(path)
    assert record.entries[0]["output"] == {"client_secret": "<secret>"}
    assert record.entries[1]["output"] == "echo: <secret>"


def test_persisted_states_and_request_info_answers_hold_no_secret(tmp_path, monkeypatch):
    """The fields the recorder added for @persist saves, request_info answers and
    streamed responses go through the same rules, also when a paused run is written
    again at its continuation."""
    monkeypatch.setenv("SERVICE_TOKEN", KEY)
    recorder = FlightRecorder(tmp_path)
    run = RunRecording(recorder, "toy", "1.0", "app.flows:Toy", {"message": "hi"})
    run.note(
        "state.saved",
        method="classify",
        state={"id": "x", "password": "pw-0123456789", "note": f"token {quote(KEY, safe='')}"},
    )
    run.note("human.asked", method="review", via="request_info", request_id="r1", data={})
    run.finish("paused")
    assert recorder.flush(timeout=10)
    assert run.reopen()
    run.note(
        "human.answered",
        method="review",
        via="request_info",
        request_id="r1",
        answer={"approved": True, "note": base64.b64encode(KEY.encode()).decode()},
    )
    run.note("llm.response", method="writer", response=f"streamed {KEY}", stream=True)
    run.finish("finished", output=["done"])
    assert recorder.flush(timeout=10)
    (path,) = recorder.written  # the same file, written again whole
    text = _text(path)
    for secret in ("SECRET", "pw-0123456789", base64.b64encode(KEY.encode()).decode()):
        assert secret not in text
    record = read_record(path)
    assert record.outcome == "finished"
    assert [e["kind"] for e in record.entries] == [
        "state.saved",
        "human.asked",
        "human.answered",
        "llm.response",
    ]
    assert record.entries[0]["state"]["password"] == "<secret>"


@pytest.mark.parametrize(
    "output",
    [
        {"nested": [{"clientSecret": "camel-0123456789"}]},
        json.dumps({"deep": {"Access-Token": "camel-0123456789"}}),
        "https://bob:camel-0123456789@host.example/x?q=1",
        "https://host.example/x?api%5Fkey=camel-0123456789",
        "user=bob&pass=camel-0123456789",
    ],
)
def test_every_way_a_name_says_secret_is_masked(tmp_path, output):
    """The writer skips the by-name pass for an entry whose JSON text names no secret:
    each of these names one."""
    path = _record(
        tmp_path, {"kind": "tool.finished", "output": output, "echo": "camel-0123456789"}
    )
    assert "camel-0123456789" not in _text(path)


def test_headers_are_masked_by_name(tmp_path):
    path = _record(
        tmp_path,
        {
            "kind": "llm.request",
            "headers": {"Authorization": "Bearer abcdefgh12345678", "content-type": "json"},
        },
    )
    text = _text(path)
    assert "abcdefgh12345678" not in text
    assert '"content-type":"json"' in text


def test_a_record_that_would_still_leak_is_refused_not_written(tmp_path, monkeypatch):
    # A scrubber that misses a value: the final check must still refuse.
    from pytest_flows._internal.recording import scrub

    monkeypatch.setattr(scrub.Scrubber, "text", lambda self, text: text)
    monkeypatch.setattr(scrub.Scrubber, "value", lambda self, data: data)
    with pytest.raises(RecordLeakError):
        encode_record(
            {"kind": "header"},
            [{"kind": "x", "content": KEY}],
            {"kind": "end"},
            max_bytes=1 << 20,
            secrets=(KEY,),
        )


def test_a_secret_set_or_changed_after_the_last_record_is_scrubbed_in_the_next(
    tmp_path, monkeypatch
):
    # The environment's secrets are read once and again only when os.environ changes.
    first = _record(tmp_path / "1", {"kind": "llm.request", "content": "nothing yet"})
    assert "<secret>" not in _text(first)
    monkeypatch.setenv("SERVICE_TOKEN", KEY)
    second = _record(tmp_path / "2", {"kind": "llm.request", "content": f"key {KEY}"})
    assert "SECRET" not in _text(second)
    other = "rotated-0123456789abcdef"
    monkeypatch.setenv("SERVICE_TOKEN", other)
    third = _record(tmp_path / "3", {"kind": "llm.request", "content": f"{KEY} {other}"})
    assert other not in _text(third)
    assert "SECRET" in _text(third)  # the old value is no longer a secret of this process


_SPELLINGS = {
    "raw": lambda value: value,
    "url": lambda value: quote(value, safe=""),
    "basic": lambda value: base64.b64encode(f"user:{value}".encode()).decode(),
    # a JSON body inside a message: escaped once in the string, twice in the line
    "json": lambda value: json.dumps(value)[1:-1].replace("/", "\\/"),
}


@pytest.mark.parametrize("spelling", sorted(_SPELLINGS))
@pytest.mark.parametrize("where", ["value", "key"])
@pytest.mark.parametrize("secret", [KEY, 'pa"ss\\word\n0123456789'])  # JSON escapes these
def test_the_final_check_finds_a_spelling_left_in_any_decoded_string(
    monkeypatch, spelling, where, secret
):
    """The last check searches the encoded text for each spelling as it reads there
    (escaped once more): a spelling in a decoded string or key is found all the same."""
    from pytest_flows._internal.recording import scrub

    monkeypatch.setattr(scrub.Scrubber, "text", lambda self, text: text)
    monkeypatch.setattr(scrub.Scrubber, "value", lambda self, data: data)
    shown = f"see {_SPELLINGS[spelling](secret)} here"
    entry = {"kind": "x", "content": shown} if where == "value" else {"kind": "x", shown: 1}
    with pytest.raises(RecordLeakError):
        encode_record(
            {"kind": "header"}, [entry], {"kind": "end"}, max_bytes=1 << 20, secrets=(secret,)
        )


@pytest.mark.parametrize("spelling", sorted(_SPELLINGS))
def test_a_spelling_one_json_level_down_is_scrubbed_too(tmp_path, monkeypatch, spelling):
    """The writer walks only the lines that may hold a secret string by string: a
    spelling inside a JSON body inside a message (escaped twice in the line) is one."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    shown = _SPELLINGS[spelling](KEY)
    body = json.dumps({"messages": [{"content": f"my key {shown}"}]})
    path = _record(tmp_path, {"kind": "tool.finished", "output": body, "nested": {"b": body}})
    text = _text(path)
    assert "SECRET" not in text and shown not in text
    assert read_record(path).entries[0]["output"].count("<secret>") == 1


@pytest.mark.parametrize(
    ("secret", "spelled"),
    [
        ("!@#$%^&*()[]", quote("!@#$%^&*()[]", safe="")),  # no character kept as is
        ("abc/def+ghi=jk", "abc%2Fdef%2bghi\\u003djk"),  # a mix of spellings
        ("key-0123456789", "key-0123456789"),
    ],
)
def test_the_scrubbers_shortcuts_skip_no_spelling(secret, spelled):
    from pytest_flows._internal.recording.scrub import Scrubber

    scrubber = Scrubber([secret])
    assert scrubber.text(f"a {spelled} b") == "a <secret> b"
    assert scrubber.copy().text(f"{spelled}") == "<secret>"


def test_base64_holding_a_secret_is_hidden_however_long_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    blob = base64.b64encode(json.dumps({"auth": {"k": KEY}, "pad": "x" * 40}).encode()).decode()
    short = base64.b64encode(b"just twelve bytes").decode()
    path = _record(tmp_path, {"kind": "tool.finished", "output": f"{blob} and {short}"})
    text = _text(path)
    assert blob not in text and short in text


def test_the_size_cap_cuts_the_run_and_says_so(tmp_path):
    big = "x" * 400
    path = _record(
        tmp_path, *({"kind": "tool.finished", "output": big} for _ in range(20)), max_bytes=2048
    )
    record = read_record(path)
    assert record.truncated
    assert len(record.entries) < 20
    assert len(gzip.decompress(path.read_bytes())) <= 2048 + 400


def test_a_full_queue_drops_the_run_and_never_blocks(caplog):
    writer = Writer(queue_size=1)
    gate = threading.Event()
    assert writer.submit(gate.wait)  # the writer thread is stuck on a slow disk
    writer.submit(lambda: None)  # fills the queue (or is taken if the thread got there)
    with caplog.at_level(logging.WARNING, logger="pytest_flows.recorder"):
        results = [writer.submit(lambda: None) for _ in range(3)]
    assert False in results and writer.dropped >= 1
    assert "queue is full" in caplog.text
    gate.set()
    assert writer.flush(timeout=10)


def test_a_run_finished_inside_writes_after_is_queued_when_the_block_ends(tmp_path):
    from pytest_flows._internal.flight import capture

    recorder = FlightRecorder(tmp_path)
    late = RunRecording(recorder, "toy", "1", "m:Late", {})
    with capture.writes_after():
        run = RunRecording(recorder, "toy", "1", "m:F", {})
        run.note("method.started", method="a")
        run.finish("finished")
        assert recorder.flush(timeout=10) and recorder.written == []  # held, not queued
        held = contextvars.copy_context()  # a stream consumed after the call returned
    assert recorder.flush(timeout=10) and len(recorder.written) == 1
    held.run(late.finish, "finished")  # its block has ended: queued at once
    assert recorder.flush(timeout=10) and len(recorder.written) == 2


def test_the_writer_thread_ends_when_closed_and_starts_again_for_a_late_run():
    writer = Writer()
    writer.start()
    thread = writer._thread
    assert thread is not None and thread.is_alive()
    writer.close()
    thread.join(timeout=10)
    assert not thread.is_alive()
    done = threading.Event()
    assert writer.submit(done.set)  # a run that finished after recording stopped
    assert writer.flush(timeout=10) and done.is_set()
    writer.close()


def test_a_failing_write_is_logged_and_never_raises(tmp_path, caplog):
    writer = Writer()

    def boom() -> None:
        raise OSError("disk full")

    with caplog.at_level(logging.ERROR, logger="pytest_flows.recorder"):
        assert writer.submit(boom)
        assert writer.flush(timeout=10)
    assert "writing a flight record failed" in caplog.text


def test_a_value_that_cannot_be_dumped_is_kept_as_its_repr(tmp_path):
    class Model:
        def model_dump(self, mode: str = "python") -> dict:
            raise RuntimeError("broken validator")

        def __repr__(self) -> str:
            return "<Model>"

    recorder = FlightRecorder(tmp_path)
    run = RunRecording(recorder, "toy", "1", "m:F", {})
    run.note("method.finished", method="a", output=Model())
    assert run.entries[0]["output"] == "<Model>"


def test_a_recording_failure_is_logged_and_never_raised(tmp_path, caplog, monkeypatch):
    recorder = FlightRecorder(tmp_path)
    run = RunRecording(recorder, "toy", "1", "m:F", {})
    monkeypatch.setattr("pytest_flows._internal.flight.capture.jsonable", _boom)
    with caplog.at_level(logging.ERROR, logger="pytest_flows.recorder"):
        run.note("method.started", method="a", output={"x": 1})  # does not raise
        run.finish("finished", output=1)  # does not raise either
    assert "recording a method.started entry failed" in caplog.text
    assert "finishing a record failed" in caplog.text


def _boom(value: object) -> object:
    raise RuntimeError("recorder bug")


def test_record_flows_checks_its_arguments_and_reads_the_environment(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="share of runs"):
        record_flows(tmp_path, sample=2)
    with pytest.raises(ValueError, match="needs a directory"):
        monkeypatch.delenv("PYTEST_FLOWS_RECORD", raising=False)
        record_flows()
    monkeypatch.setenv("PYTEST_FLOWS_RECORD", f"{tmp_path},0.25")
    recorder = recording_from_env(frameworks=[])
    try:
        assert recorder is not None
        assert recorder.directory == tmp_path and recorder.sample == 0.25
    finally:
        stop_recording()
    monkeypatch.setenv("PYTEST_FLOWS_RECORD", f"{tmp_path},often")
    with pytest.raises(ValueError, match="not a number"):
        recording_from_env(frameworks=[])


def test_record_flows_is_a_context_manager(tmp_path):
    from pytest_flows._internal.flight import capture

    with record_flows(tmp_path / "a", frameworks=[]) as recorder:
        assert capture.active() is recorder
    assert capture.active() is None  # the block's end stopped it
    # A recorder started since is not the block's to stop.
    outer = record_flows(tmp_path / "b", frameworks=[])
    try:
        with record_flows(tmp_path / "c", frameworks=[]) as inner:
            replacing = record_flows(tmp_path / "d", frameworks=[])
        assert inner is not replacing and capture.active() is replacing
    finally:
        stop_recording()
    assert outer is not None and capture.active() is None
