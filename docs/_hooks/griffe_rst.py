"""griffe extension: the reST bits of pytest-flows' docstrings, as Markdown.

The docstrings are written to read well in ``help()`` and editors, with Sphinx
roles (``:class:`FlowRun```) and ``::`` literal blocks; mkdocstrings renders
Markdown, where those show as stray colons. Rewriting at build time keeps the
source as it is: a role becomes inline code, linked to the object's entry when
the site documents it (an optional cross-reference: no warning when it does not),
and a ``::`` block becomes a fenced Python block.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`]+)`")


def _roles(obj: griffe.Object, text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        title = f"<code>{target.rsplit('.', 1)[-1] if short else target}</code>"
        head, _, rest = target.partition(".")
        try:
            identifier = target if head == "pytest_flows" else obj.resolve(head)
        except griffe.NameResolutionError:
            return title
        if rest and head != "pytest_flows":
            identifier = f"{identifier}.{rest}"
        return f'<autoref identifier="{identifier}" optional>{title}</autoref>'

    return _ROLE.sub(replace, text)


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


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


class ReSTToMarkdown(griffe.Extension):
    # Once the whole package is loaded, so that a role can name what a module
    # defines below the docstring that mentions it.
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                value = _roles(obj, obj.docstring.value)
                obj.docstring.value = _literal_blocks(value) if "::" in value else value
