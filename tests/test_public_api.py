"""The public API: ``pytest_flows.__all__`` is the surface docs/reference.md documents,
and every ``pytest_flows`` name the docs, the examples, the README and the plugin's
own messages mention exists (so no message tells a user to import what isn't there).

Names are resolved from the source files, without importing the modules, so the
test never imports crewai or agent_framework.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytest_flows
from pytest_flows._internal.deprecation import ALIASES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_flows"

#: Where a user's test may import from (docs/architecture.md says why).
PUBLIC_MODULES = {
    "pytest_flows",
    "pytest_flows.crewai",
    "pytest_flows.agent_framework",
    "pytest_flows.langgraph",
    "pytest_flows.conformance",
    # The flight recorder: importable in production (docs/recorder.md).
    "pytest_flows.recorder",
    # For adapter authors (docs/architecture.md shows an adapter's imports).
    "pytest_flows.adapters",
    # For an adapter's flight-recorder part: import-light (docs/reference.md).
    "pytest_flows.recorder.parts",
}
#: What may sit at the package's top: the public modules, and _internal for the rest.
TOP_LEVEL = {
    "__init__.py",
    "py.typed",
    "adapters.py",
    "crewai",
    "agent_framework",
    "langgraph",
    "conformance",
    "recorder",
    "_internal",
    # `pytest -p pytest_flows.plugin` (docs/reference.md, "Loading the plugin")
    "plugin.py",
    # deprecated aliases of paths earlier docs showed (tests/test_public_paths.py)
    *{f"{alias.split('.')[1]}{'' if alias.count('.') > 1 else '.py'}" for alias in ALIASES},
}

_DOTTED = re.compile(r"(?<![\w.])pytest_flows(?:\.[A-Za-z_]\w*)+")
_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(pytest_flows[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", re.M
)


def _documented_surface(heading: str = "Public API") -> set[str]:
    """The names in the first column of the tables under ``## {heading}``."""
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    marker = f"\n## {heading}\n"
    assert marker in text, f"docs/reference.md lost its '## {heading}' section"
    section = text.split(marker, 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1]))
    return names


def test_all_is_the_documented_surface() -> None:
    documented = _documented_surface()
    exported = set(pytest_flows.__all__)
    assert len(pytest_flows.__all__) == len(exported), "a name is twice in __all__"
    assert exported - documented == set(), "exported but not in docs/reference.md's Public API"
    assert documented - exported == set(), "in docs/reference.md's Public API but not exported"


def test_the_adapter_kit_is_its_documented_table() -> None:
    from pytest_flows import adapters

    documented = _documented_surface("For adapter authors: `pytest_flows.adapters`")
    assert set(adapters.__all__) == documented
    assert [n for n in adapters.__all__ if not hasattr(adapters, n)] == []


def test_everything_not_public_is_under_internal() -> None:
    present = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert present == TOP_LEVEL, "a module outside _internal/ is public: document it or move it"
    for adapter in ("crewai", "agent_framework", "langgraph", "recorder"):
        public = [
            p.name
            for p in (PACKAGE / adapter).glob("*.py")
            if p.name not in ("__init__.py", "__main__.py")
            and not p.name.startswith("_")
            and f"pytest_flows.{adapter}.{p.stem}" not in ALIASES
            and f"pytest_flows.{adapter}.{p.stem}" not in PUBLIC_MODULES
        ]
        assert public == [], f"pytest_flows.{adapter}: only __init__ is public; prefix with _"


def test_every_public_name_loads_without_a_framework() -> None:
    # A fresh interpreter: this one has the plugin (and maybe crewai) loaded.
    code = (
        "import sys, json, pytest_flows\n"
        "loaded_at_import = sorted(m for m in sys.modules if m.startswith('pytest_flows.'))\n"
        "missing = [n for n in pytest_flows.__all__ if not hasattr(pytest_flows, n)]\n"
        "frameworks = [m for m in ('crewai', 'agent_framework', 'langgraph') if m in sys.modules]\n"
        "print(json.dumps([loaded_at_import, missing, frameworks]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded_at_import, missing, frameworks = json.loads(out.stdout.splitlines()[-1])
    assert loaded_at_import == [], "import pytest_flows must stay cheap (names load on use)"
    assert missing == []
    assert frameworks == [], "a public core name imported a framework"


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NotAName'"):
        _ = pytest_flows.NotAName  # type: ignore[attr-defined]
    assert set(pytest_flows.__all__) <= set(dir(pytest_flows))


# -- every mention resolves ------------------------------------------------------------
def _module_file(parts: list[str]) -> Path | None:
    path = PACKAGE.joinpath(*parts)
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    return None


@functools.cache
def _top_level_names(module_file: Path) -> frozenset[str]:
    tree = ast.parse(module_file.read_text(encoding="utf-8"))
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.If | ast.Try):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return frozenset(names)


def _problem(dotted: str) -> str | None:
    """Why ``dotted`` (``pytest_flows.a.b.Name.attr``) names nothing, or None if it exists."""
    parts = dotted.split(".")[1:]
    for depth in range(len(parts), 0, -1):
        if _module_file(parts[:depth]) is None:
            continue
        if depth == len(parts):
            return None  # a module
        name = parts[depth]
        if name in _top_level_names(_module_file(parts[:depth])):  # type: ignore[arg-type]
            return None
        return f"{'.'.join(['pytest_flows', *parts[:depth]])} has no {name!r}"
    name = parts[0]
    if name in pytest_flows.__all__ or (name.startswith("__") and hasattr(pytest_flows, name)):
        return None
    return f"pytest_flows has no public {name!r} (not in __all__, not a module)"


def _texts() -> Iterator[tuple[str, str]]:
    for path in sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "examples").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def _message_strings() -> Iterator[tuple[str, str]]:
    """Every string constant in the package: messages, docstrings, f-string parts."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.value


def _from_import_names(text: str) -> Iterator[tuple[str, str]]:
    # 'from m import a as b, c' -> (m, a), (m, c): drop the aliases' new names.
    for match in _FROM_IMPORT.finditer(text):
        body = re.sub(r"#[^\n]*", "", match.group(2)).strip("() \n")
        for item in body.split(","):
            name = item.split(" as ")[0].strip()
            if name.isidentifier():
                yield match.group(1), name


def test_every_name_in_docs_examples_and_messages_exists() -> None:
    problems = []
    sources = [*_texts(), *_message_strings()]
    for where, text in sources:
        for dotted in _DOTTED.findall(text):
            problem = _problem(dotted)
            if problem:
                problems.append(f"{where}: {dotted}: {problem}")
    for where, text in _texts():
        for module, name in _from_import_names(text):
            problem = _problem(f"{module}.{name}")
            if problem:
                problems.append(f"{where}: from {module} import {name}: {problem}")
    assert problems == []


def test_docs_and_examples_import_only_from_the_public_modules() -> None:
    private = [
        f"{where}: from {module} import {name}"
        for where, text in _texts()
        for module, name in _from_import_names(text)
        if module not in PUBLIC_MODULES
    ]
    assert private == [], "import these from pytest_flows (or the adapter's package)"


def test_the_checks_catch_what_they_are_for() -> None:
    # The resolver and the import scanner, on mentions known to be wrong.
    assert _problem("pytest_flows.NotAName") is not None
    assert _problem("pytest_flows._internal.errors.NotAName") is not None
    assert _problem("pytest_flows.not_a_module.Name") is not None
    assert _problem("pytest_flows.ALWAYS") is None
    assert _problem("pytest_flows._internal.errors.NoMethodRanWarning") is None
    assert _problem("pytest_flows.crewai._crews.crew_output") is None
    text = (
        "```python\nfrom pytest_flows._internal.fakes.replies import (\n"
        "    call_tool,  # x\n    stream as s,\n)\n"
    )
    assert list(_from_import_names(text)) == [
        ("pytest_flows._internal.fakes.replies", "call_tool"),
        ("pytest_flows._internal.fakes.replies", "stream"),
    ]
