"""Layering the import graph alone cannot show: the core imports an adapter only inside
a function (lint-imports, configured in pyproject.toml, counts every import statement,
so it lists the core's lazy adapter imports as allowed; this test holds them lazy)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_flows"
ADAPTERS = ("pytest_flows.crewai", "pytest_flows.agent_framework", "crewai", "agent_framework")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(body: list[ast.stmt]) -> Iterator[tuple[int, str]]:
    """Imports that run when the module is imported (not in a function, not TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            yield from ((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level_imports(block)
            for handler in node.handlers:
                yield from _module_level_imports(handler.body)
        elif isinstance(node, ast.With):
            yield from _module_level_imports(node.body)


def _adapter_imports_at_module_level(source: str) -> list[str]:
    return [
        f"line {line}: {name}"
        for line, name in _module_level_imports(ast.parse(source).body)
        if name.startswith(tuple(f"{adapter}." for adapter in ADAPTERS)) or name in ADAPTERS
    ]


def _core_files() -> list[Path]:
    adapter_dirs = (PACKAGE / "crewai", PACKAGE / "agent_framework")
    # The flight recorder's per-framework parts import their framework, as adapters do.
    recorder_parts = (
        PACKAGE / "recorder" / "_crewai.py",
        PACKAGE / "recorder" / "_agent_framework.py",
    )
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if not any(path.is_relative_to(directory) for directory in adapter_dirs)
        and path not in recorder_parts
    )


def test_the_core_never_imports_an_adapter_or_a_framework_at_module_level() -> None:
    found = {
        str(path.relative_to(PACKAGE.parent)): imports
        for path in _core_files()
        if (imports := _adapter_imports_at_module_level(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "import adapters and frameworks inside the function that needs them"


def test_the_core_is_found() -> None:
    names = {path.name for path in _core_files()}
    assert {"session.py", "fake_fixtures.py", "__init__.py"} <= names
    assert "llm.py" not in names  # pytest_flows/crewai/_llm.py is adapter code


def test_the_check_sees_what_it_is_for() -> None:
    bad = (
        "import crewai\n"
        "from pytest_flows.crewai._llm import FakeLLM\n"
        "from pytest_flows import agent_framework\n"
        "try:\n    import agent_framework.openai\nexcept ImportError:\n    pass\n"
    )
    assert _adapter_imports_at_module_level(bad) == [
        "line 1: crewai",
        "line 2: pytest_flows.crewai._llm",
        "line 2: pytest_flows.crewai._llm.FakeLLM",
        "line 3: pytest_flows.agent_framework",
        "line 5: agent_framework.openai",
    ]
    fine = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pytest_flows.crewai._llm import FakeLLM\n"
        "def f():\n    from pytest_flows.crewai._llm import FakeLLM\n"
        "from pytest_flows._internal.session import FlowsSession\n"
    )
    assert _adapter_imports_at_module_level(fine) == []
