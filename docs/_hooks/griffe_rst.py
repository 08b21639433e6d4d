"""griffe extension: the reST bits of pytest-flows' docstrings, as Markdown.

The docstrings are written to read well in ``help()`` and editors, with Sphinx
roles (``:class:`FlowRun```) and ``::`` literal blocks; mkdocstrings renders
Markdown, where those show as stray colons. Rewriting at build time keeps the
source as it is: a role becomes inline code, a ``::`` block a fenced Python block.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def _literal_blocks(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::"):
            out.append(line)
            i += 1
            continue
        # "text::" reads as "text:"; a lone "::" disappears (reST's rules).
        head = line.rstrip()[:-2].rstrip()
        if head:
            out.append(head + ":")
        i += 1
        block: list[str] = []
        indent = len(line) - len(line.lstrip())
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
        ):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        body = textwrap.dedent("\n".join(block)).strip("\n")
        out.extend(["", "```python", *body.splitlines(), "```", ""])
    return "\n".join(out)


class ReSTToMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            value = _ROLE.sub(_role, obj.docstring.value)
            obj.docstring.value = _literal_blocks(value) if "::" in value else value
