"""The core names no framework: every capability finds one through the adapter registry.

Scans the code of ``pytest_flows/`` (names, imports, string literals; not comments or
docstrings, which may explain with an example) outside the framework-specific places,
for a framework's name. A new hit means a table or branch per framework crept back into
the core: look the framework up through the registry instead
(``pytest_flows._internal.contract.registry``: ``AdapterSpec``, ``RecorderPart``; the adapter's
``AdapterBase`` hooks), or, if it truly must stay, add it to ``ALLOWED`` with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_flows"

#: The spellings of the frameworks pytest-flows ships adapters for.
FRAMEWORK = re.compile(r"crewai|agent[_ -]framework|langgraph|langchain", re.IGNORECASE)

#: Framework-specific by design: the adapter packages, the recorder's framework parts,
#: and the conformance suites (each tests one framework's storage interface).
FRAMEWORK_PLACES = (
    "pytest_flows/crewai/",
    "pytest_flows/agent_framework/",
    "pytest_flows/langgraph/",
    "pytest_flows/recorder/_crewai.py",
    "pytest_flows/recorder/_agent_framework.py",
    "pytest_flows/recorder/_langgraph.py",
    "pytest_flows/conformance/",
)

#: (file, text the hit contains) -> why it stays. Keep it small.
ALLOWED = {
    ("pytest_flows/_internal/contract/registry.py", ""): (
        "the built-in adapter table (ADAPTERS): the one place the core lists the frameworks "
        "it ships adapters for"
    ),
    ("pytest_flows/_internal/deprecation.py", "pytest_flows."): (
        "deprecated alias module paths (removed in 0.4.0)"
    ),
    ("pytest_flows/_internal/fake_fixtures.py", ""): (
        "the conversation and flow_memory fixtures drive crewai-only features "
        "(the import-linter contract's one named exception)"
    ),
    ("pytest_flows/_internal/runtime/stdlib_seams.py", "inline bus"): (
        "a stdlib seam's reason text, naming who needs it"
    ),
    ("pytest_flows/_internal/state/store.py", "@persist"): (
        "an assertion message's advice for crewai's opt-in persistence"
    ),
    ("pytest_flows/_internal/state/store.py", "Auto-checkpoint failed"): (
        "an assertion message quoting the framework's own log line"
    ),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        # Module, class and function docstrings, and attribute docstrings: a bare string.
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found.add(id(node.value))
    return found


def _texts(tree: ast.AST) -> list[tuple[int, str]]:
    """Every name, import and string literal of ``tree`` (not docstrings), with its line."""
    docs = _docstrings(tree)
    texts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docs:
                texts.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            texts.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            texts.append((node.lineno, node.attr))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            module = getattr(node, "module", None) or ""
            texts.append((node.lineno, " ".join([module, *(a.name for a in node.names)])))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            texts.append((node.lineno, node.name))
        elif isinstance(node, ast.keyword) and node.arg:
            texts.append((getattr(node, "lineno", 0), node.arg))
    return texts


def framework_names_in_core() -> list[str]:
    hits: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(FRAMEWORK_PLACES):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
        for line, text in _texts(tree):
            if not FRAMEWORK.search(text):
                continue
            if any(relative == file and part in text for file, part in ALLOWED):
                continue
            hits.append(f"{relative}:{line}: {text[:100]!r}")
    return hits


def test_no_core_code_names_a_framework():
    assert framework_names_in_core() == []


def test_the_scan_finds_a_framework_name_in_code_but_not_in_docstrings_or_comments():
    # The scan must be able to fail: a table keyed by a framework name is a hit, the
    # same name in a docstring or comment is not.
    code = (
        '"""Explains crewai."""\n'
        "# crewai, in a comment\n"
        "TABLE = {'crewai': 'pytest_flows.recorder._crewai'}\n"
        "def f(record):\n"
        "    '''agent_framework here is prose.'''\n"
        "    return record.framework == 'agent_framework'\n"
    )
    found = [text for _, text in _texts(ast.parse(code)) if FRAMEWORK.search(text)]
    assert found == ["crewai", "pytest_flows.recorder._crewai", "agent_framework"]


def test_every_allowance_is_still_needed():
    # An allowance nothing matches any more is dead weight that would hide a new hit.
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
        for _, text in _texts(tree):
            if FRAMEWORK.search(text):
                used |= {(f, p) for f, p in ALLOWED if relative == f and p in text}
    assert used == set(ALLOWED)
