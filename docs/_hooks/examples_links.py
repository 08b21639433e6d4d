"""mkdocs hook: links from a page to ``../examples/...`` (the runnable examples).

The pages link to the examples by relative path so they read well in the
repository; the examples are not part of the site, so mkdocs would warn (and
``--strict`` fail) on each. Here every such link must name an existing file or
folder of ``examples/`` (a renamed example fails the build), and becomes a link
into the repository when ``repo_url`` is set, else the path as inline code.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

_LINK = re.compile(r"\[([^\]]*)\]\(\.\./(examples/[^)#\s]*)\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    root = Path(config["config_file_path"]).resolve().parent
    repo_url = (config.get("repo_url") or "").rstrip("/")

    def replace(match: re.Match[str]) -> str:
        text, target = match.group(1), match.group(2)
        if not (root / target).exists():
            raise PluginError(
                f"{page.file.src_path}: the link [{text}](../{target}) names no file or "
                f"folder in the repository; point it at an existing path under examples/"
            )
        if repo_url:
            kind = "tree" if (root / target).is_dir() else "blob"
            return f"[{text}]({repo_url}/{kind}/main/{target})"
        # Link text that is already the path reads as a path; other text keeps it beside.
        return text if text.strip("`/") == target.strip("/") else f"{text} (`{target}`)"

    return _LINK.sub(replace, markdown)
