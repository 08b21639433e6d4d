"""Derive, from the repository's history, every import path a user was shown.

A path counts as public once any revision of docs/, examples/ or README.md
showed it: in an import (``from pytest_flows.x import a, b``, ``import
pytest_flows.x``), a ``-p pytest_flows.x`` plugin argument, or a dotted mention in
prose (``pytest_flows.recording.use_cassette(...)``). Names imported from it (or
the name after the module in a dotted mention) are recorded with it.

    python tests/public_paths.py            # print the derived list
    python tests/public_paths.py --write    # rewrite tests/public_paths.txt
    python tests/public_paths.py --names    # add new public names to tests/public_names.txt

tests/test_public_paths.py reads tests/public_paths.txt (every path there must
keep importing) and, in a git checkout, re-derives the list to check that no path
the history shows is missing from it. Paths with a ``_``-prefixed part
(``pytest_flows._secrets``, ``pytest_flows._internal.x``) are private by name and
are not collected; neither are file names (``pytest_flows.md``).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "tests" / "public_paths.txt"
NAMES = ROOT / "tests" / "public_names.txt"
#: The modules a user imports from today, and the file that holds each one's __all__.
PUBLIC_MODULES = {
    "pytest_flows": "pytest_flows/__init__.py",
    "pytest_flows.adapters": "pytest_flows/adapters.py",
    "pytest_flows.crewai": "pytest_flows/crewai/__init__.py",
    "pytest_flows.agent_framework": "pytest_flows/agent_framework/__init__.py",
    "pytest_flows.langgraph": "pytest_flows/langgraph/__init__.py",
    "pytest_flows.conformance": "pytest_flows/conformance/__init__.py",
    "pytest_flows.plugin": "pytest_flows/plugin.py",
    "pytest_flows.recorder": "pytest_flows/recorder/__init__.py",
    "pytest_flows.recorder.parts": "pytest_flows/recorder/parts.py",
}
#: What the derivation reads, in every revision (the git pathspecs).
SHOWN_IN = ("docs", "examples", "README.md")

HEADER = """\
# Every import path that any revision of docs/, examples/ or README.md showed, with the
# names shown imported from it ("path: name name ..."; a path mentioned without a name
# ends at the colon). Derived from the history by tests/public_paths.py:
#     git log --raw -m --no-abbrev --format= -- docs examples README.md   (every version)
#     + git cat-file --batch, scanned for imports, -p arguments and dotted mentions
# Regenerate with:  python tests/public_paths.py --write
# tests/test_public_paths.py: each path imports, each name is the public object, and a
# moved path warns once (docs/contributing.md, "Deprecation policy").
"""

_FROM_IMPORT = re.compile(
    r"^[ \t>]*from[ \t]+(pytest_flows(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)", re.M
)
_IMPORT = re.compile(r"^[ \t>]*import[ \t]+([^\n#]+)", re.M)
_PLUGIN_ARG = re.compile(r"(?<![\w-])-p[ \t=]*(pytest_flows(?:\.\w+)*)")
_DOTTED = re.compile(r"(?<![\w./-])pytest_flows(?:\.[A-Za-z_]\w*)+")
_FILE_SUFFIXES = (".md", ".py", ".txt", ".toml", ".yml", ".yaml", ".json", ".html", ".ambr")


def _git(*args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=ROOT, input=stdin, capture_output=True, check=True
    ).stdout


def historic_modules() -> frozenset[str]:
    """Every module pytest_flows ever had (``pytest_flows.crewai.crews``, ...)."""
    out = _git("log", "--format=", "--name-only", "--", "pytest_flows").decode()
    modules = {"pytest_flows"}
    for line in out.splitlines():
        if line.startswith("pytest_flows/") and line.endswith(".py"):
            parts = line[: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    return frozenset(modules)


def shown_texts() -> Iterator[str]:
    """Every version of every file under docs/, examples/ and README.md, once each."""
    raw = _git("log", "--raw", "-m", "--no-abbrev", "--format=", "--", *SHOWN_IN).decode()
    blobs: set[str] = set()
    for line in raw.splitlines():
        if line.startswith(":"):
            fields = line.split("\t", 1)[0].split()
            blobs.update(b for b in fields[2:4] if set(b) != {"0"})
    if not blobs:
        return
    batch = _git("cat-file", "--batch", stdin="".join(f"{b}\n" for b in sorted(blobs)).encode())
    at = 0
    while at < len(batch):
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        body = batch[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
        if b"\0" not in body:
            yield body.decode("utf-8", errors="replace")


def _public(path: str) -> bool:
    return not any(part.startswith("_") for part in path.split("."))


def mentions(text: str, modules: Iterable[str]) -> Iterator[tuple[str, str | None]]:
    """(path, name or None) for each import, -p argument and dotted mention in ``text``."""
    known = frozenset(modules)
    for match in _FROM_IMPORT.finditer(text):
        body = re.sub(r"#[^\n]*", "", match.group(2)).strip("() \n\\")
        for item in body.split(","):
            name = item.split(" as ")[0].strip(" ()\n\\")
            if name.isidentifier():
                yield match.group(1), name
    for match in _IMPORT.finditer(text):
        for item in match.group(1).split(","):
            path = item.split(" as ")[0].strip()
            if path == "pytest_flows" or path.startswith("pytest_flows."):
                yield path, None
    for match in _PLUGIN_ARG.finditer(text):
        yield match.group(1), None
    for dotted in _DOTTED.findall(text):
        if dotted.endswith(_FILE_SUFFIXES):
            continue
        parts = dotted.split(".")
        depth = max(n for n in range(1, len(parts) + 1) if ".".join(parts[:n]) in known or n == 1)
        module = ".".join(parts[:depth])
        if module == "pytest_flows":
            continue  # pytest_flows.Name: the root's names are its imports' and __all__'s
        yield module, parts[depth] if depth < len(parts) else None


def derive() -> dict[str, set[str]]:
    modules = historic_modules()
    found: dict[str, set[str]] = {}
    for text in shown_texts():
        for path, name in mentions(text, modules):
            if not _public(path) or (name is not None and name.startswith("_")):
                continue
            names = found.setdefault(path, set())
            if name is not None:
                names.add(name)
    return found


def render(paths: dict[str, set[str]], header: str = HEADER) -> str:
    lines = [f"{path}: {' '.join(sorted(names))}".rstrip() for path, names in sorted(paths.items())]
    return header + "\n".join(lines) + "\n"


NAMES_HEADER = """\
# Every name that was ever in a public module's __all__, one a line: first taken from every
# revision of those modules in the history, since then kept by tests/public_paths.py --names
# (it adds the new ones and keeps the rest). tests/test_public_paths.py: a name here that
# left its __all__ must be under Removed or Deprecated in CHANGELOG.md; a name in an __all__
# but not here fails until it is added here (and gets its line under Added in CHANGELOG.md).
"""


def current_names() -> dict[str, set[str]]:
    """Each public module's ``__all__``, read from its source (no framework is imported)."""
    found: dict[str, set[str]] = {}
    for module, file in PUBLIC_MODULES.items():
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        names: set[str] = set()
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                assert node.value is not None
                names.update(ast.literal_eval(node.value))
        found[module] = names
    return found


def read(text: str | None = None, path: Path = LIST) -> dict[str, set[str]]:
    """A committed list (tests/public_paths.txt or tests/public_names.txt): path -> names."""
    text = path.read_text(encoding="utf-8") if text is None else text
    paths: dict[str, set[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            path, _, names = line.partition(":")
            paths.setdefault(path.strip(), set()).update(names.split())
    return paths


if __name__ == "__main__":
    if sys.argv[1:] == ["--names"]:
        known = read(path=NAMES) if NAMES.exists() else {}
        for module, names in current_names().items():
            known.setdefault(module, set()).update(names)
        # one name a line: helpers adding names in parallel do not conflict
        lines = [f"{module}: {name}" for module in sorted(known) for name in sorted(known[module])]
        NAMES.write_text(NAMES_HEADER + "\n".join(lines) + "\n", encoding="utf-8")
    elif sys.argv[1:] == ["--write"]:
        LIST.write_text(render(derive()), encoding="utf-8")
    else:
        sys.stdout.write(render(derive()))
