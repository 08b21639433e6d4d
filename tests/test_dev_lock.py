"""The development lock, ``requirements/dev.txt``, still satisfies ``pyproject.toml``.

The README's set-up installs the lock (fully pinned, so pip has one candidate per
package and nothing to backtrack over), not the ranges. A range narrowed or a tool
added to the ``dev`` extra without re-locking (``tox -e lock``, docs/contributing.md)
would leave every contributor and CI on a set-up the project no longer asks for: this
test names each such requirement. It checks what ``pyproject.toml`` asks for directly
(``[project.dependencies]`` and the ``dev`` extra with the extras it nests,
``pytest-flows[all,docs]`` and so on); the lock's transitive pins are uv's resolution.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "dev.txt"

#: Where the lock must hold: requires-python's versions (3.11.5 splits one package's
#: pins in today's lock) on the platforms contributors use.
PYTHONS = ("3.11.0", "3.11.9", "3.12.8", "3.13.1", "3.14.0")
PLATFORMS = (
    {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "machine": "x86_64"},
    {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "machine": "aarch64"},
    {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix", "machine": "arm64"},
    {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt", "machine": "AMD64"},
)


def environments() -> list[dict[str, str]]:
    """Marker environments (PEP 508) for every Python and platform above, CPython."""
    found = []
    for full, platform in itertools.product(PYTHONS, PLATFORMS):
        found.append(
            {
                "python_full_version": full,
                "python_version": ".".join(full.split(".")[:2]),
                "implementation_name": "cpython",
                "implementation_version": full,
                "platform_python_implementation": "CPython",
                "sys_platform": platform["sys_platform"],
                "platform_system": platform["platform_system"],
                "os_name": platform["os_name"],
                "platform_machine": platform["machine"],
                "platform_release": "",
                "platform_version": "",
                "extra": "",
            }
        )
    return found


def _label(env: dict[str, str]) -> str:
    return f"Python {env['python_full_version']} on {env['sys_platform']}/{env['platform_machine']}"


def wanted(pyproject: dict[str, Any], extra: str = "dev") -> list[Requirement]:
    """``[project.dependencies]`` plus ``extra``, the project's own extras expanded."""
    project = pyproject["project"]
    own = canonicalize_name(project["name"])
    extras = project.get("optional-dependencies", {})
    found = [Requirement(text) for text in project.get("dependencies", [])]
    queue, seen = [extra], set()
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in extras:
            raise ValueError(f"pyproject.toml names an extra {name!r} it does not define")
        for text in extras[name]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == own:
                queue.extend(sorted(requirement.extras))
            else:
                found.append(requirement)
    return found


def pins(lock_text: str) -> tuple[dict[str, list[tuple[Version, Marker | None]]], list[str]]:
    """The lock's ``name==version ; marker`` lines by package, and what is not a pin."""
    found: dict[str, list[tuple[Version, Marker | None]]] = {}
    problems = []
    for number, raw in enumerate(lock_text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as exc:
            problems.append(f"line {number}: {line!r} is not a requirement ({exc})")
            continue
        specifiers = list(requirement.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
            problems.append(f"line {number}: {line!r} is not pinned to one version (name==X)")
            continue
        name = canonicalize_name(requirement.name)
        found.setdefault(name, []).append((Version(specifiers[0].version), requirement.marker))
    return found, problems


def lock_problems(pyproject: dict[str, Any], lock_text: str) -> list[str]:
    """Every requirement of ``pyproject`` the lock does not satisfy, and where."""
    pinned, problems = pins(lock_text)
    for requirement in wanted(pyproject):
        name = canonicalize_name(requirement.name)
        for env in environments():
            if requirement.marker is not None and not requirement.marker.evaluate(env):
                continue
            versions = [
                v for v, marker in pinned.get(name, []) if marker is None or marker.evaluate(env)
            ]
            if not versions:
                problems.append(f"{requirement}: not pinned in the lock for {_label(env)}")
            elif len(versions) > 1:
                problems.append(f"{requirement}: pinned twice for {_label(env)}: {versions}")
            elif not requirement.specifier.contains(versions[0], prereleases=True):
                problems.append(
                    f"{requirement}: the lock pins {name}=={versions[0]} for {_label(env)}"
                )
    # One line per requirement and pin, not one per environment it fails in.
    return list(dict.fromkeys(re.sub(r" for Python .*", "", p) for p in problems))


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_lock_satisfies_pyproject() -> None:
    problems = lock_problems(_pyproject(), LOCK.read_text(encoding="utf-8"))
    assert problems == [], (
        "requirements/dev.txt no longer satisfies pyproject.toml; re-lock with `tox -e lock` "
        "(docs/contributing.md):\n  " + "\n  ".join(problems)
    )


def test_the_readme_quickstart_installs_the_lock() -> None:
    # .ci/run runs exactly these lines: the lock is what CI and a new contributor install.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [
        line for line in readme.splitlines() if line.startswith("python3 -m venv .venv && ")
    ]
    assert len(commands) == 2
    for command in commands:
        assert ".venv/bin/pip install -q -r requirements/dev.txt -e . && " in command


def _with(pyproject: dict[str, Any], extra: str, requirement: str) -> dict[str, Any]:
    changed = {"project": dict(pyproject["project"])}
    extras = dict(changed["project"]["optional-dependencies"])
    extras[extra] = [*extras[extra], requirement]
    changed["project"]["optional-dependencies"] = extras
    return changed


@pytest.mark.parametrize(
    ("extra", "requirement", "reported"),
    [
        # a tool added to dev without re-locking
        ("dev", "pytest-benchmark>=4", "pytest-benchmark>=4: not pinned in the lock"),
        # a range narrowed past the pin, in an extra dev nests (all -> crewai)
        ("crewai", "crewai>=99", "crewai>=99: the lock pins crewai=="),
        # docs is nested too (dev -> pytest-flows[all,docs])
        ("docs", "mkdocs<1", "mkdocs<1: the lock pins mkdocs=="),
        # a platform-only requirement is checked where its marker holds
        ("dev", "colorama>=99; sys_platform == 'win32'", "the lock pins colorama=="),
    ],
)
def test_a_requirement_the_lock_does_not_satisfy_is_named(
    extra: str, requirement: str, reported: str
) -> None:
    changed = _with(_pyproject(), extra, requirement)
    problems = lock_problems(changed, LOCK.read_text(encoding="utf-8"))
    assert len(problems) == 1, problems
    assert reported in problems[0]


def test_a_pin_missing_on_one_python_is_named() -> None:
    pyproject = {
        "project": {
            "name": "pytest-flows",
            "dependencies": ["numpy>=2"],
            "optional-dependencies": {"dev": []},
        }
    }
    lock = "numpy==2.4.6 ; python_full_version < '3.12'\n"
    assert lock_problems(pyproject, lock) == ["numpy>=2: not pinned in the lock"]
    lock += "numpy==2.5.5 ; python_full_version >= '3.12'\n"
    assert lock_problems(pyproject, lock) == []


def test_a_range_in_the_lock_is_not_a_pin() -> None:
    pyproject = {"project": {"name": "x", "optional-dependencies": {"dev": ["ruff>=0.5"]}}}
    problems = lock_problems(pyproject, "ruff>=0.5\n")
    assert problems[0] == "line 1: 'ruff>=0.5' is not pinned to one version (name==X)"
