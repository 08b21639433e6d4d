"""Reading a flight record is bounded and strict, and a record decides nothing that
runs: the reader's caps (a gzip bomb refused fast, in little memory), its checks
(every line one JSON object, a known integer version), the replay allow list (the
object a target reaches must itself be allowed), and ``export`` (no record value
becomes code)."""

from __future__ import annotations

import ast
import gzip
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_flows._internal.flight.export import export, module_text
from pytest_flows._internal.flight.format import (
    DEFAULT_LIMITS,
    FORMAT,
    SUFFIX,
    Record,
    RecordError,
    read_record,
)
from pytest_flows._internal.flight.raised import RecordedError, rebuild
from pytest_flows._internal.flight.targets import TargetError, resolve

ROOT = Path(__file__).parent.parent
HEADER = {"kind": "header", "format": FORMAT, "version": 1, "framework": "crewai"}


def _write(path: Path, *lines: object) -> Path:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_bytes(gzip.compress(text.encode()))
    return path


def _bomb(path: Path, gib: int = 2, newlines: bool = False) -> Path:
    """``gib`` GiB of zeros (or newlines), written as 16 MiB gzip members one after the
    other (a gzip file may hold several; every reader inflates them all as one stream).
    Compressing 16 MiB once and writing it 128 times takes a fraction of a second,
    where one 2 GiB stream takes 7 to 19 s."""
    member = gzip.compress((b"\n" if newlines else b"\0") * (16 << 20), compresslevel=9)
    with path.open("wb") as out:
        for _ in range(gib * 64):
            out.write(member)
    return path


# -- caps ---------------------------------------------------------------------------------
_MEASURE = textwrap.dedent(
    """
    import os, resource, sys, time, tracemalloc
    from pytest_flows._internal.flight.format import RecordError, read_record

    def peak_rss():
        # VmHWM starts afresh at exec; ru_maxrss may carry the forking parent's peak.
        try:
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        read_record(sys.argv[1])
        print("accepted")
    except RecordError as exc:
        print("refused", time.perf_counter() - wall, time.process_time() - cpu,
              tracemalloc.get_traced_memory()[1], peak_rss(), str(exc)[:300])
    """
)


@pytest.mark.parametrize("newlines", [False, True], ids=["zeros", "newlines"])
def test_a_2_gib_gzip_bomb_is_refused_within_2_s_and_100_mb(tmp_path, newlines):
    bomb = _bomb(tmp_path / f"bomb{SUFFIX}", newlines=newlines)
    assert bomb.stat().st_size < 10 * 1024 * 1024  # a small file that inflates to 2 GiB
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(bomb)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    verdict, wall, cpu, peak, rss, message = done.stdout.split(" ", 5)
    assert verdict == "refused"
    # CPU time: on a shared machine the wall clock also counts other processes' turns
    # (about 0.17 s of either at a load average of 7 on 2 cores).
    assert float(cpu) < 2.0, f"wall {wall} s"
    assert int(peak) < 100 * 1024 * 1024  # what the reader allocated
    assert int(rss) < 100 * 1024 * 1024  # the whole process, interpreter included
    assert ("longer than" if not newlines else "more than") in message


def test_show_refuses_the_bomb_with_a_clear_error(tmp_path):
    bomb = _bomb(tmp_path / f"bomb{SUFFIX}", gib=1)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_flows.recorder", "show", str(bomb)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2
    assert "longer than" in done.stderr and "PYTEST_FLOWS_RECORD_MAX_LINE" in done.stderr


def test_each_cap_refuses_and_can_be_raised(tmp_path, monkeypatch):
    entry = {"kind": "method.started", "seq": 1, "t": 0.0, "method": "m" * 5000}
    path = _write(tmp_path / f"r{SUFFIX}", HEADER, entry, {"kind": "end", "outcome": "finished"})
    assert read_record(path).entries == [entry]
    with pytest.raises(RecordError, match="line 2 is longer than 4096 bytes"):
        read_record(path, max_line=4096)
    with pytest.raises(RecordError, match="more than 3000 bytes once decompressed"):
        read_record(path, max_bytes=3000)
    with pytest.raises(RecordError, match="more than 2 entries"):
        read_record(path, max_entries=2)
    monkeypatch.setenv("PYTEST_FLOWS_RECORD_MAX_LINE", "4096")
    with pytest.raises(RecordError, match="PYTEST_FLOWS_RECORD_MAX_LINE"):
        read_record(path)
    assert read_record(path, max_line=10_000).entries == [entry]  # the argument wins
    monkeypatch.setenv("PYTEST_FLOWS_RECORD_MAX_LINE", "lots")
    with pytest.raises(RecordError, match="give a whole number"):
        read_record(path)
    monkeypatch.delenv("PYTEST_FLOWS_RECORD_MAX_LINE")
    with pytest.raises(RecordError, match="not a positive whole number"):
        read_record(path, max_entries=0)
    assert DEFAULT_LIMITS == {
        "max_bytes": 64 * 1024 * 1024,
        "max_line": 16 * 1024 * 1024,
        "max_entries": 200_000,
    }


# -- strictness ---------------------------------------------------------------------------
@pytest.mark.parametrize("line", ['"text"', "[1, 2]", "3", "null"])
def test_a_line_that_is_not_an_object_is_an_error_not_dropped(tmp_path, line):
    path = _write(tmp_path / f"r{SUFFIX}", HEADER, line, {"kind": "end"})
    with pytest.raises(RecordError, match=r"line 2 is .* JSON, not an object"):
        read_record(path)


def test_a_line_that_is_not_json_names_its_line(tmp_path):
    path = _write(tmp_path / f"r{SUFFIX}", HEADER, "{oops", {"kind": "end"})
    with pytest.raises(RecordError, match="line 2 is not JSON"):
        read_record(path)


@pytest.mark.parametrize("version", [0, -1, True, 1.0, "1", None])
def test_a_version_must_be_a_whole_number_from_1(tmp_path, version):
    path = _write(tmp_path / f"r{SUFFIX}", {**HEADER, "version": version})
    with pytest.raises(RecordError, match="is not a version"):
        read_record(path)


def test_a_newer_version_asks_for_an_upgrade(tmp_path):
    path = _write(tmp_path / f"r{SUFFIX}", {**HEADER, "version": 2})
    with pytest.raises(RecordError, match="version 2; this pytest-flows reads versions 1"):
        read_record(path)


def test_an_empty_file_is_no_record(tmp_path):
    path = _write(tmp_path / f"r{SUFFIX}")
    with pytest.raises(RecordError, match="it is empty"):
        read_record(path)


def test_the_header_alone_can_be_read(tmp_path):
    path = _write(tmp_path / f"r{SUFFIX}", {**HEADER, "run_id": "abc"}, "[not read]")
    assert read_record(path, header_only=True).run_id == "abc"


# -- the allow list -----------------------------------------------------------------------
@pytest.fixture
def app(tmp_path, monkeypatch):
    """``app`` imports ``other_module``, whose ``function`` leaves a mark when called."""
    mark = tmp_path / "ran"
    (tmp_path / "other_module.py").write_text(
        f"def function():\n    open({str(mark)!r}, 'w').close()\n    return function\n"
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(
        "import other_module\n"
        "def build():\n    return 'built'\n"
        "class Holder:\n"
        "    @property\n"
        "    def boom(self):\n        raise SystemExit('a property ran')\n"
        "def __getattr__(name):\n    raise SystemExit('module __getattr__ ran')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield mark
    for name in ("app", "other_module"):
        sys.modules.pop(name, None)


def test_an_allow_list_naming_one_module_lets_nothing_else_run(app):
    import app as allowed_app

    assert resolve("app:build", ["app"]) is allowed_app.build
    with pytest.raises(TargetError, match="defined in other_module, which is not allowed"):
        resolve("app:other_module.function", ["app"])
    with pytest.raises(TargetError, match="module other_module is not allowed"):
        resolve("other_module:function", ["app"])
    with pytest.raises(TargetError, match="has no"):
        resolve("app:lazy_thing", ["app"])  # the module's __getattr__ is not called
    with pytest.raises(TargetError, match="not a class or function"):
        resolve("app:Holder.boom", ["app"])  # the property is not run
    assert not app.exists()


@pytest.mark.parametrize(
    "target", ["app", "app:", "app:build()", "os;x:y", "app:build.__call__ ", "class:X"]
)
def test_a_target_that_is_not_python_names_is_refused(app, target):
    with pytest.raises(TargetError):
        resolve(target, ["app"])


def test_flows_replay_dir_refuses_a_record_reaching_outside_the_allow_list(
    pytester, app, monkeypatch
):
    monkeypatch.setenv("PYTHONPATH", str(app.parent))
    records = pytester.path / "records"
    records.mkdir()
    header = {
        **HEADER,
        "framework": "agent_framework",
        "run_id": "evil",
        "target": "app:other_module.function",
        "factory": "app:other_module.function",
        "workflow": "w",
    }
    _write(records / f"evil{SUFFIX}", header, {"kind": "end", "outcome": "finished"})
    result = pytester.runpytest_subprocess(
        f"--flows-replay={records}", "--flows-replay-allow=app", "-p", "no:randomly"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*defined in other_module, which is not allowed*"])
    assert not app.exists()


def test_flows_replay_on_a_folder_with_no_record_is_an_error(pytester):
    (pytester.path / "empty").mkdir()
    result = pytester.runpytest_subprocess("--flows-replay=empty", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--flows-replay=empty: no flight record*"])


# -- export -------------------------------------------------------------------------------
def _shape(text: str) -> str:
    """The module's code with every literal blanked (and the test's name, made of the
    run id's letters and digits alone): what a record must not change."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            node.value = None
        elif isinstance(node, ast.FunctionDef):
            assert re.fullmatch(r"test_replay_[A-Za-z0-9_]+", node.name), node.name
            node.name = "test_replay"
    return ast.dump(tree)


def _record(**header: object) -> Record:
    base = {**HEADER, "run_id": "r1", "target": "app.flows:MyFlow", "started_at": "2026"}
    end = {"kind": "end", "outcome": "failed", "error": {"type": "E", "message": "m"}}
    return Record(path=Path(f"r1{SUFFIX}"), header={**base, **header}, end=end)


_NASTY = st.one_of(
    st.text(),
    st.sampled_from(['"""\nimport os; os.system("x")\n"""', "'''", "\\", "{x}", "\n#", "\0"]),
)


@settings(max_examples=150, deadline=None)
@given(run_id=_NASTY, started_at=_NASTY, message=_NASTY, name=_NASTY)
def test_no_header_value_changes_the_exported_module_code(run_id, started_at, message, name):
    baseline = _shape(module_text(_record(), f"r1{SUFFIX}"))
    record = _record(run_id=run_id, started_at=started_at)
    record.end["error"] = {"type": message, "message": message}
    text = module_text(record, name)
    assert _shape(text) == baseline
    namespace: dict[str, object] = {}
    tree = ast.parse(text)
    (incident,) = [n for n in tree.body if isinstance(n, ast.Assign)][:1]
    exec(compile(ast.Module([incident], []), "<incident>", "exec"), namespace)
    assert namespace["INCIDENT"]["run_id"] == run_id  # type: ignore[index]
    assert namespace["INCIDENT"]["started_at"] == started_at  # type: ignore[index]


@pytest.mark.parametrize(
    "target", ['app:X"""\nimport os', "app:X\nimport os", "os, sys:X", "app:X()", "import:X"]
)
def test_a_target_that_is_not_python_names_is_not_exported(tmp_path, target):
    path = _write(tmp_path / f"r{SUFFIX}", {**HEADER, "run_id": "r", "target": target})
    with pytest.raises(ValueError, match="does not name an object"):
        export(path, tmp_path / "out")


# -- a recorded exception, raised again ---------------------------------------------------
def test_a_recorded_exception_is_rebuilt_as_its_type_or_a_named_stand_in():
    import json as json_module

    error = rebuild(
        {
            "type": "JSONDecodeError",
            "module": "json.decoder",
            "message": "Expecting value: line 1 column 2 (char 1)",
            "msg": "Expecting value",
            "doc": "[",
            "pos": 1,
        }
    )
    assert isinstance(error, json_module.JSONDecodeError) and error.pos == 1
    assert type(rebuild({"type": "TimeoutError", "module": "builtins", "message": "t"})) is (
        TimeoutError
    )
    other = rebuild({"type": "Overloaded", "module": "someprovider.errors", "message": "busy"})
    assert isinstance(other, RecordedError)
    assert type(other).__name__ == "Overloaded" and str(other) == "busy"
    assert type(other).recorded_type == "someprovider.errors.Overloaded"
    # A record never names what gets imported: a module not loaded is a stand-in too.
    assert "someprovider" not in sys.modules
    assert isinstance(rebuild({"type": "X", "module": "os", "message": ""}), RecordedError)
