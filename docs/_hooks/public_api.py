"""mkdocs hook: the API page of ``pytest_flows`` follows the reference's Public API.

``docs/reference.md`` lists every public name under ``## Public API``, one table
per group (``tests/test_public_api.py`` holds that list equal to ``__all__``).
The page ``api/pytest_flows.md`` holds the marker below; here it becomes one
section per group with the generated reference of each name, so a name made
public appears in the API reference with no second list to keep.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

MARKER = "<!-- public-api -->"
PAGE = "api/pytest_flows.md"


def _groups(reference: str) -> list[tuple[str, list[str]]]:
    if "\n## Public API\n" not in reference:
        raise PluginError("docs/reference.md has no '## Public API' section to build the API from")
    section = reference.split("\n## Public API\n", 1)[1].split("\n## ", 1)[0]
    groups: list[tuple[str, list[str]]] = []
    for line in section.splitlines():
        if line.startswith("### "):
            groups.append((line[4:].strip(), []))
        elif line.startswith("| `") and groups:
            for name in re.findall(r"`([A-Za-z_]\w*)`", line.split("|")[1]):
                if name not in groups[-1][1]:
                    groups[-1][1].append(name)
    return [(title, names) for title, names in groups if names]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise PluginError(f"{PAGE} lost its {MARKER} marker, where the API is generated")
    reference = Path(config["docs_dir"], "reference.md").read_text(encoding="utf-8")
    parts = []
    for title, names in _groups(reference):
        parts.append(f"## {title}\n")
        parts.extend(
            f"::: pytest_flows.{name}\n    options:\n      heading_level: 3\n" for name in names
        )
    return markdown.replace(MARKER, "\n".join(parts))
