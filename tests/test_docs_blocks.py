"""Every ```python block in README.md and docs/ is run by this test, or says why not.

The convention (docs/contributing.md): the line right before a block may be

* ``<!-- not-run: why -->``: the block is not executed (a fragment, a sketch);
* ``<!-- run-with: examples/x/y.py, ... -->``: the block runs after
  ``from y import *`` for each module named (a ``.py`` path in the repository, its
  folder put on ``sys.path``, or a dotted module such as ``pytest_flows``).

Every other block runs as it is. Each block becomes a test module of its own:
``import pytest``, the run-with imports, then the block; a block without a
top-level ``test_`` function or ``Test`` class is wrapped into one test function
that requests the fixtures the block names. All the blocks run in one pytest
subprocess, and each must collect at least one test and pass. A failure names the
page and line of its block.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The fixtures a wrapped fragment may use (requested when the block names them).
FIXTURES = (
    "flows",
    "fake_llm",
    "fake_tools",
    "fake_crews",
    "human",
    "flow_store",
    "conversation",
    "llm_cassette",
    "snapshot",
    "tmp_path",
)

_FENCE = re.compile(r"^```python\b")
_NOT_RUN = re.compile(r"^<!-- not-run:(.*)-->\s*$")
_RUN_WITH = re.compile(r"^<!-- run-with:(.*)-->\s*$")
_COMMENT = re.compile(r"^<!--")


@dataclasses.dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    code: str
    not_run: str | None = None  # the reason
    run_with: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def module(self) -> str:
        slug = re.sub(r"\W", "_", Path(self.page).with_suffix("").as_posix()).lower()
        return f"test_block_{slug}_{self.line}"


class MarkerError(ValueError):
    """A block's marker comment is malformed; the message names page:line and the fix."""


def blocks_of(page: str, text: str) -> Iterator[Block]:
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if not _FENCE.match(lines[index]):
            index += 1
            continue
        start = index
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            raise MarkerError(f"{page}:{start + 1}: the ```python block is never closed")
        code = "\n".join(lines[start + 1 : end]) + "\n"
        before = lines[start - 1].strip() if start else ""
        yield _block(page, start + 1, code, before)
        index = end + 1


def _block(page: str, line: int, code: str, before: str) -> Block:
    where = f"{page}:{line}"
    if match := _NOT_RUN.match(before):
        reason = match.group(1).strip()
        if not reason:
            raise MarkerError(f"{where}: say why the block does not run: <!-- not-run: why -->")
        return Block(page, line, code, not_run=reason)
    if match := _RUN_WITH.match(before):
        modules = tuple(m.strip() for m in match.group(1).split(",") if m.strip())
        if not modules:
            raise MarkerError(
                f"{where}: name what the block runs with: <!-- run-with: examples/x/y.py -->"
            )
        for module in modules:
            if module.endswith(".py") and not (ROOT / module).is_file():
                raise MarkerError(
                    f"{where}: run-with names {module!r}, which is not a file of the "
                    f"repository; give a .py path from the repository root"
                )
            if not module.endswith(".py") and not re.fullmatch(r"[A-Za-z_][\w.]*", module):
                raise MarkerError(
                    f"{where}: run-with names {module!r}: give a .py path from the "
                    f"repository root or a dotted module name"
                )
        return Block(page, line, code, run_with=modules)
    if _COMMENT.match(before):
        raise MarkerError(
            f"{where}: unknown marker {before!r}; use <!-- not-run: why --> or "
            f"<!-- run-with: examples/x/y.py -->"
        )
    return Block(page, line, code)


def all_blocks() -> list[Block]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [
        block
        for path in pages
        for block in blocks_of(path.relative_to(ROOT).as_posix(), path.read_text("utf-8"))
    ]


# `from name import *` (its __all__, else its public names), less the module's own
# tests and marks: pytest would collect or apply them in the block's module.
_BRING = """
import importlib


def _bring(name):
    module = importlib.import_module(name)
    names = getattr(module, "__all__", None) or [k for k in vars(module) if k[:1] != "_"]
    skip = ("test", "Test", "pytestmark")
    globals().update((k, getattr(module, k)) for k in names if not k.startswith(skip))

"""


def module_source(block: Block) -> str:
    """The source of the test module a runnable block becomes."""
    head = ["import pytest"]
    if block.run_with:
        head.append(_BRING)
    for module in block.run_with:
        name = Path(module).stem if module.endswith(".py") else module
        head.append(f"_bring({name!r})")
    tree = ast.parse(block.code, filename=block.where)
    has_test = any(
        (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"))
        or (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))
        for node in tree.body
    )
    if has_test:
        body = block.code
    else:
        named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        fixtures = ", ".join(f for f in FIXTURES if f in named)
        body = f"def test_block({fixtures}):\n" + textwrap.indent(block.code, "    ")
    return "\n".join(head) + "\n\n" + body


# Recorded by the inner run: every test's outcome, and every collection error.
_CONFTEST = """
import json, sys
from pathlib import Path

sys.path[:0] = {paths!r}
_results = []


def pytest_collectreport(report):
    if report.failed:
        _results.append([report.nodeid, "collect", str(report.longrepr)[-3000:]])


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        _results.append([report.nodeid, report.outcome, str(report.longrepr or "")[-3000:]])


def pytest_sessionfinish(session):
    Path({out!r}).write_text(json.dumps(_results))


# A run that hangs where pytest-timeout cannot stop it writes every thread's stack to a
# file and ends, instead of stalling the outer test unexplained: a hypothesis property
# in a block takes pytest-timeout's one timeout for a failing example and runs it
# again, and collection and the way out have no timeout at all. Each test gets 150 s,
# collection 120 s, the way out 60 s. (A file: pytest's capture holds stderr.)
_HANG = open({hang!r}, "w")


def _guard(seconds):
    import faulthandler
    faulthandler.dump_traceback_later(seconds, exit=True, file=_HANG)


def pytest_configure(config):
    _guard(120)


def pytest_collection_finish(session):
    _guard(60)


import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _guard(150)
    yield
    _guard(60)


def pytest_unconfigure(config):
    _guard(60)
"""

_INI = """
[pytest]
asyncio_default_fixture_loop_scope = function
filterwarnings =
    error::pytest_flows.FlowsWarning
    ignore::DeprecationWarning:crewai.*
    ignore::PendingDeprecationWarning:crewai.*
"""


def run_blocks(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, blocks: list[Block]
) -> list[str]:
    """Run ``blocks`` in one pytest subprocess; what went wrong, each naming page:line."""
    problems = []
    sources = {}
    for block in blocks:
        try:
            sources[block] = module_source(block)
        except SyntaxError as error:
            problems.append(
                f"{block.where}: not valid Python ({error.msg}, line {error.lineno} of the "
                f"block); fix it, or mark it <!-- not-run: why --> on the line before"
            )
    paths = sorted({str((ROOT / m).parent) for b in sources for m in b.run_with if m[-3:] == ".py"})
    out = pytester.path / "results.json"
    hang = pytester.path / "hang.txt"
    pytester.makeconftest(_CONFTEST.format(paths=paths, out=str(out), hang=str(hang)))
    pytester.makeini(_INI)
    for block, source in sources.items():
        pytester.makepyfile(**{block.module: source})
    # A reader's first run is a local one: CI=true would forbid recording.
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        # a reader's first run: it records snapshots and golden files
        "--snapshot-update",
        "--flows-golden-update",
        "--continue-on-collection-errors",
        # A block that hangs fails alone, with every thread's stack and its page:line,
        # long before this test's own timeout would stop the whole run unexplained.
        "--timeout=90",
        "-q",
    )
    stacks = hang.read_text() if hang.exists() else ""
    assert not stacks, f"the inner run hung:\n{result.stdout.str()[-2000:]}\n{stacks}"
    assert out.is_file(), f"the inner run stopped early:\n{result.stdout.str()[-4000:]}"
    outcomes: dict[str, list[tuple[str, str]]] = {}
    for nodeid, outcome, text in json.loads(out.read_text()):
        outcomes.setdefault(nodeid.split(".py")[0], []).append((outcome, text))
    for block in sources:
        reports = outcomes.get(block.module, [])
        bad = [(o, t) for o, t in reports if o not in ("passed", "skipped")]
        if bad:
            outcome, text = bad[0]
            problems.append(f"{block.where}: {outcome}:\n{textwrap.indent(text, '    ')}")
        elif not any(o == "passed" for o, _ in reports):
            problems.append(f"{block.where}: no test of the block passed (collected none?)")
    return problems


def test_every_python_block_runs_or_says_why_not(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    runnable = [b for b in all_blocks() if b.not_run is None]
    assert runnable, "no runnable block found: has the docs' layout changed?"

    problems = run_blocks(pytester, monkeypatch, runnable)

    assert not problems, "\n".join(problems)


# -- the convention itself -------------------------------------------------------------
PAGE = """\
Text.

<!-- not-run: a fragment -->
```python
run = flows.run(F)
```

<!-- run-with: examples/triage/triage_flow.py, pytest_flows -->
```python
def test_x(flows): ...
```

```python
x = 1
```
"""


def test_markers_are_read_from_the_line_before_the_block() -> None:
    fragment, with_example, plain = blocks_of("p.md", PAGE)

    assert (fragment.line, fragment.not_run) == (4, "a fragment")
    assert with_example.run_with == ("examples/triage/triage_flow.py", "pytest_flows")
    assert (plain.line, plain.not_run, plain.run_with) == (13, None, ())


@pytest.mark.parametrize(
    ("before", "message"),
    [
        ("<!-- not-run: -->", r"p\.md:2: say why the block does not run"),
        ("<!-- run-with: examples/nope.py -->", r"p\.md:2: run-with names 'examples/nope.py'"),
        ("<!-- run-with: -->", r"p\.md:2: name what the block runs with"),
        ("<!-- notrun: x -->", r"p\.md:2: unknown marker"),
    ],
)
def test_a_malformed_marker_names_page_line_and_fix(before: str, message: str) -> None:
    with pytest.raises(MarkerError, match=message):
        list(blocks_of("p.md", f"{before}\n```python\nx = 1\n```\n"))


def test_a_fragment_is_wrapped_in_a_test_requesting_its_fixtures() -> None:
    block = Block("p.md", 3, "run = flows.run(F, tmp_path)\n", run_with=("pytest_flows",))

    source = module_source(block)

    assert "_bring('pytest_flows')" in source
    assert "def test_block(flows, tmp_path):\n    run = flows.run(F, tmp_path)" in source
    compile(source, block.where, "exec")


def test_a_block_that_fails_or_is_not_python_is_named_by_page_and_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = [
        Block("p.md", 3, "assert 1 + 1 == 3\n"),
        Block("p.md", 9, "def test_x(flows):\n    assert flows.clock.monotonic() == 0\n"),
        Block("q.md", 5, "def test_...(flows): ...\n"),
        Block("q.md", 12, "class TestNothing:\n    pass\n"),
    ]

    problems = run_blocks(pytester, monkeypatch, blocks)

    first_lines = [p.split("\n")[0] for p in problems]
    assert first_lines[0].startswith("q.md:5: not valid Python (")  # the parser's words vary
    assert first_lines[0].endswith("mark it <!-- not-run: why --> on the line before")
    assert first_lines[1:] == [
        "p.md:3: failed:",
        "q.md:12: no test of the block passed (collected none?)",
    ]
    assert "assert (1 + 1) == 3" in problems[1]
