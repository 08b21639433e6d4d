"""Public names are a promise: last month's documented imports keep working.

tests/public_paths.txt lists every import path any revision of docs/, examples/
or README.md showed (derived from the history by tests/public_paths.py); each
keeps importing, a moved one warns once and gives the public objects.
tests/public_names.txt lists every name ever in a public module's ``__all__``;
one that leaves it needs its CHANGELOG.md entry. docs/contributing.md,
"Deprecation policy", says how to add an alias.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap

import public_paths
import pytest

import pytest_flows
from pytest_flows._internal.deprecation import ALIASES, moved_message

ROOT = public_paths.ROOT
CHANGELOG = ROOT / "CHANGELOG.md"


# -- the list is what the history shows --------------------------------------------------
def _history_available() -> bool:
    try:
        shallow = subprocess.run(
            ["git", "rev-parse", "--is-shallow-repository"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return shallow == "false"


def _pairs(paths: dict[str, set[str]]) -> set[tuple[str, str | None]]:
    return {(path, name) for path, names in paths.items() for name in (names or {None})}


def _shown_now() -> set[tuple[str, str | None]]:
    modules = public_paths.historic_modules()
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("*")]
    shown = set()
    for file in files:
        if file.is_file() and file.suffix in {".md", ".py", ".toml", ".ini", ".cfg", ".txt", ""}:
            shown.update(public_paths.mentions(file.read_text(encoding="utf-8"), modules))
    return shown


@pytest.mark.skipif(not _history_available(), reason="needs the repository's full git history")
def test_the_list_holds_every_path_the_history_shows() -> None:
    derived = _pairs(public_paths.derive())
    listed = _pairs(public_paths.read())
    listed |= {(path, None) for path, _ in listed}
    # What today's pages show is checked by test_public_api (it must exist); once a
    # page stops showing it, it has to be in the list, so that it keeps working.
    missing = sorted(derived - listed - _shown_now(), key=str)
    assert missing == [], (
        "an earlier revision showed these imports, tests/public_paths.txt lacks them: "
        "run `python tests/public_paths.py --write` (and add an alias if the module is gone)"
    )


def test_the_derivation_reads_imports_plugin_arguments_and_prose() -> None:
    text = textwrap.dedent(
        """
        ```python
        from pytest_flows.replies import (
            call_tool,  # a tool call
            stream as s,
        )
        import pytest_flows.store as store
        ```
        pytest -p pytest_flows.plugin, see `pytest_flows.recording.use_cassette(...)`,
        pytest_flows/store.py, docs/api/pytest_flows.md and `pytest_flows._secrets.KEYS`.
        """
    )
    modules = {
        "pytest_flows",
        "pytest_flows.replies",
        "pytest_flows.store",
        "pytest_flows.plugin",
        "pytest_flows.recording",
        "pytest_flows._secrets",
    }
    found = set(public_paths.mentions(text, modules))
    assert {
        ("pytest_flows.replies", "call_tool"),
        ("pytest_flows.replies", "stream"),
        ("pytest_flows.store", None),
        ("pytest_flows.plugin", None),
        ("pytest_flows.recording", "use_cassette"),
    } <= found
    assert not any(path == "pytest_flows" for path, _ in found)  # file names are not paths
    assert public_paths.read("# c\na.b: x y\na.c:\n") == {"a.b": {"x", "y"}, "a.c": set()}


# -- every listed path keeps working ------------------------------------------------------
_CHECK = """
import importlib, json, sys, warnings
from importlib.util import find_spec

listed, aliases, frameworks = json.loads(sys.argv[1])
problems, checked = [], []
for path, names in sorted(listed.items()):
    needs = [f for f in frameworks if path.startswith(f"pytest_flows.{f}")]
    if needs and find_spec(needs[0]) is None:
        continue
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(path)
        importlib.import_module(path)  # a second import: still one warning
    ours = [
        w for w in caught
        if issubclass(w.category, DeprecationWarning) and "pytest_flows" in str(w.message)
    ]
    checked.append(path)
    if path not in aliases:
        problems += [f"{path} warns: {w.message}" for w in ours]
        problems += [f"{path} has no {n!r}" for n in sorted(names) if not hasattr(module, n)]
        continue
    if len(ours) != 1:
        problems.append(f"{path}: {len(ours)} DeprecationWarnings on import, not 1")
    elif ours[0].filename != __file__:
        problems.append(f"{path}: the warning points at {ours[0].filename}, not the importer")
    homes = module.HOMES
    wrappers = getattr(module, "WRAPPERS", {})
    unlisted = set(names) - set(module.__all__)
    problems += [f"{path}: the docs showed {n!r}, its __all__ lacks it" for n in unlisted]
    for home, kept in homes.items():
        public = importlib.import_module(home)
        for name in kept:
            if name not in public.__all__:
                problems.append(f"{path}.{name}: {home} does not export it")
            elif name in wrappers:
                if not callable(getattr(module, name)):
                    problems.append(f"{path}.{name}: the wrapper is not callable")
            elif getattr(module, name) is not getattr(public, name):
                problems.append(f"{path}.{name} is not {home}.{name}")
    unhomed = getattr(module, "UNHOMED", {})
    homed = [n for kept in homes.values() for n in kept]
    if sorted([*homed, *unhomed]) != sorted(module.__all__):
        problems.append(f"{path}: __all__ is not HOMES and UNHOMED")
    problems += [f"{path}.{n} is missing" for n in unhomed if not hasattr(module, n)]
print(json.dumps([problems, checked]))
"""


def _check_in_a_fresh_interpreter(listed: dict[str, set[str]]) -> tuple[list[str], list[str]]:
    payload = json.dumps(
        [{p: sorted(n) for p, n in listed.items()}, list(ALIASES), ["crewai", "agent_framework"]]
    )
    done = subprocess.run(
        [sys.executable, "-c", _CHECK.replace("__file__", repr("<string>")), payload],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    problems, checked = json.loads(done.stdout.splitlines()[-1])
    return problems, checked


def test_every_listed_path_imports_warns_once_and_gives_the_public_objects() -> None:
    # One fresh interpreter (it imports crewai and agent_framework) checks the list and
    # that the check catches a missing name: two names planted in the list, which must
    # be the only problems it finds.
    listed = {path: set(names) for path, names in public_paths.read().items()}
    planted = {"pytest_flows.replies": "not_a_reply", "pytest_flows": "NotAName"}
    for path, name in planted.items():
        listed.setdefault(path, set()).add(name)
    problems, checked = _check_in_a_fresh_interpreter(listed)
    assert "pytest_flows.replies: the docs showed 'not_a_reply', its __all__ lacks it" in problems
    assert "pytest_flows has no 'NotAName'" in problems
    assert [p for p in problems if not any(repr(n) in p for n in planted.values())] == []
    assert {p for p in ALIASES if not p.startswith(("pytest_flows.crewai", "pytest_flows.ag"))} <= (
        set(checked)
    )


def test_the_aliases_are_the_listed_moved_paths_and_the_modules_that_warn() -> None:
    warning_modules = set()
    for file in (ROOT / "pytest_flows").rglob("*.py"):
        if "_internal" in file.parts:
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        calls = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        if "warn_moved" in calls:
            parts = file.relative_to(ROOT).with_suffix("").parts
            warning_modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert warning_modules == set(ALIASES)
    listed = set(public_paths.read())
    assert set(ALIASES) <= listed, "an alias for a path no page ever showed"
    assert listed - set(ALIASES) <= set(public_paths.PUBLIC_MODULES), (
        "a path the docs showed is neither public today nor a deprecated alias"
    )


def test_an_alias_says_what_replaces_it_and_when_it_goes() -> None:
    message = moved_message(
        "pytest_flows.store", {"pytest_flows": ["FlowStore", "CrashPoint"], "x.y": ["Z"]}
    )
    assert message == (
        "pytest_flows.store is deprecated since pytest-flows 0.2.0 and goes in 0.4.0: use "
        "`from pytest_flows import CrashPoint, FlowStore; from x.y import Z` instead "
        "(see CHANGELOG.md)."
    )


def test_a_name_the_alias_does_not_keep_says_why() -> None:
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        store = importlib.import_module("pytest_flows.store")
    with pytest.raises(AttributeError, match=r"'decode_stored'.* internal since"):
        _ = store.decode_stored


# -- names leaving __all__ ------------------------------------------------------------
_ENTRY = re.compile(r"`(?:[\w.]+\.)?(\w+)`")


def changelog_entries(text: str, sections: tuple[str, ...]) -> set[str]:
    """The backticked names (``pytest_flows.x.name`` counts as ``name``) listed under
    the ``### <section>`` headings of every release in a Keep a Changelog text."""
    names: set[str] = set()
    current = None
    for line in text.splitlines():
        if line.startswith("### "):
            current = line[4:].strip()
        elif line.startswith("## "):
            current = None
        elif current in sections:
            names.update(_ENTRY.findall(line))
    return names


def surface_problems(
    known: dict[str, set[str]], current: dict[str, set[str]], changelog: str
) -> list[str]:
    gone_ok = changelog_entries(changelog, ("Removed", "Deprecated"))
    problems = []
    for module in sorted(set(known) | set(current)):
        for name in sorted(current.get(module, set()) - known.get(module, set())):
            problems.append(
                f"{module}.{name} is new in __all__: add it to tests/public_names.txt "
                "(python tests/public_paths.py --names) and its line under Added in CHANGELOG.md"
            )
        for name in sorted(known.get(module, set()) - current.get(module, set())):
            if name not in gone_ok:
                problems.append(
                    f"{module}.{name} left __all__ without a CHANGELOG.md entry under "
                    "Removed or Deprecated (keep a deprecated alias for a minor release first)"
                )
    return problems


def test_a_name_that_leaves_all_has_its_changelog_entry() -> None:
    known = public_paths.read(path=public_paths.NAMES)
    problems = surface_problems(
        known, public_paths.current_names(), CHANGELOG.read_text(encoding="utf-8")
    )
    assert problems == []


def test_the_surface_check_catches_a_silent_removal_and_an_unlisted_name() -> None:
    changelog = "## [0.2.0]\n### Removed\n- `pytest_flows.old_one`: gone\n### Added\n- `kept`\n"
    known = {"pytest_flows": {"kept", "old_one", "silently_gone"}}
    current = {"pytest_flows": {"kept", "brand_new"}}
    assert surface_problems(known, current, changelog) == [
        "pytest_flows.brand_new is new in __all__: add it to tests/public_names.txt "
        "(python tests/public_paths.py --names) and its line under Added in CHANGELOG.md",
        "pytest_flows.silently_gone left __all__ without a CHANGELOG.md entry under "
        "Removed or Deprecated (keep a deprecated alias for a minor release first)",
    ]


def test_every_moved_path_and_the_version_are_in_the_changelog() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    assert [p for p in ALIASES if f"`{p}`" not in text] == []
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert version is not None and version.group(1) == pytest_flows.__version__
    assert f"## [{pytest_flows.__version__}]" in text
    assert re.search(r"^## \[[\d.]+\] - (Unreleased|\d{4}-\d\d-\d\d)", text, re.M)
