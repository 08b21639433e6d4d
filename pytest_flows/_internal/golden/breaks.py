"""A golden break: which class it is, what changed, and what to do about it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

import pytest

__all__ = ["BREAK_KINDS", "BreakKind", "GoldenBreak", "GoldenMismatch", "failure_message"]

BreakKind = Literal["codec", "schema", "topology", "behaviour"]
#: Most fundamental first: a stored record that does not decode cannot be
#: checked against the schema, and so on.
BREAK_KINDS: tuple[BreakKind, ...] = ("codec", "schema", "topology", "behaviour")

_FIXES: dict[str, str] = {
    "codec": "keep the old types importable and allowed (or register them with the storage's "
    "allow-list), or migrate the stored records before you ship",
    "schema": "give new fields a default, keep removed fields (or migrate stored states with "
    "a model_validator(mode='before')), and test it as docs/golden.md#state-migrations shows",
    "topology": "keep the old method/route/executor names (alias them) until no stored run "
    "names them, or migrate stored runs",
    "behaviour": "if the change is intended, accept it",
}


@dataclasses.dataclass(frozen=True)
class GoldenBreak:
    """One incompatibility between a golden recording and today's code."""

    kind: BreakKind
    where: str  # "run 1", "run 1, save 2 (after 'begin')", "checkpoint 3"
    summary: str
    diff: str = ""

    def render(self) -> str:
        text = f"[{self.kind}] {self.where}: {self.summary}\n"
        if self.diff:
            text += "".join(f"    {line}\n" for line in self.diff.rstrip("\n").splitlines())
        return text


class GoldenMismatch(pytest.fail.Exception):  # type: ignore[name-defined,misc]
    """Raised at the end of a golden test whose recording no longer holds.

    A test failure (``pytest.fail``) without the plugin's traceback: the
    message is the whole report.
    """

    def __init__(self, message: str, breaks: Sequence[GoldenBreak]) -> None:
        super().__init__(message, pytrace=False)
        self.breaks = tuple(breaks)

    @property
    def kinds(self) -> list[str]:
        return sorted({b.kind for b in self.breaks}, key=BREAK_KINDS.index)


def failure_message(path: str, breaks: Sequence[GoldenBreak]) -> str:
    kinds = sorted({b.kind for b in breaks}, key=BREAK_KINDS.index)
    lines = [f"golden replay: {len(breaks)} break(s) ({', '.join(kinds)}) against {path}", ""]
    for kind in kinds:
        for item in breaks:
            if item.kind == kind:
                lines.append(item.render().rstrip("\n"))
    lines.append("")
    for kind in kinds:
        lines.append(f"{kind}: {_FIXES[kind]}.")
    lines.append(
        "To accept today's behaviour as the new golden (stored runs and states recorded "
        "before it may then fail to resume in production), rerun with --flows-golden-update."
    )
    return "\n".join(lines)
