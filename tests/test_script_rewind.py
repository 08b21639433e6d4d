"""ScriptMark: a search's runs each answer from the scripts as they stood at its start
(no framework: the scripts of two fakes, driven by hand)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_flows._internal.fakes.llm_script import LLMScript
from pytest_flows._internal.fakes.rewind import ScriptMark
from pytest_flows._internal.fakes.script import Request, UnscriptedRequest


class _Session:
    def __init__(self, *fakes: Any) -> None:
        self._fakes = list(fakes)

    def bound_fakes(self) -> list[Any]:
        return self._fakes


def _ask(fake: LLMScript, method: str) -> Any:
    return fake.script.take(Request(caller={"method": method})).entry


def test_each_replayed_block_meets_the_script_as_it_stood_at_the_mark() -> None:
    fake = LLMScript()
    fake.on(method="a").reply("first", "second")
    _ask(fake, "a")  # a run before the mark used "first"
    mark = ScriptMark(_Session(fake))
    for _ in range(3):
        entry = mark.replay(lambda: _ask(fake, "a"))
        assert entry.reply == "second"  # never "used up" by the block before
        assert [x.request.number for x in fake.script.exchanges] == [1]  # ledger rewound
    # After the blocks: as at the mark, with "second" known to have been used.
    assert [e.used for e in fake.script.entries] == [1, 0]
    assert fake.script.unused() == []
    assert _ask(fake, "a").reply == "second"  # the test's own next run meets it too


def test_a_reply_no_block_used_stays_unused_and_a_failing_block_is_rewound() -> None:
    fake, other = LLMScript(), LLMScript()
    fake.on(method="a").reply("x")
    fake.on(method="never").reply("y")
    other.on(method="b").reply("z")
    mark = ScriptMark(_Session(fake, other))

    def block() -> None:
        _ask(fake, "a")
        _ask(other, "b")
        _ask(other, "b")  # unscripted: the block fails

    for _ in range(2):
        with pytest.raises(UnscriptedRequest, match="unscripted LLM call #2"):
            mark.replay(block)  # numbered as in a single run, both times
    assert [e.label for e in fake.script.unused()] == ['fake_llm.on(method="never").reply("y")']
    assert other.script.unused() == [] and other.script.exchanges == []


def test_a_session_with_no_fakes_has_nothing_to_rewind() -> None:
    assert ScriptMark(object()).replay(lambda: 42) == 42
