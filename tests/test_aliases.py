"""A container of the state a pool thread holds: its changes are that thread's writes only
when the thread made them (runtime/aliases.py)."""

from __future__ import annotations

from pytest_flows._internal.runtime.aliases import Aliases


def test_a_change_made_while_another_thread_held_the_baton_is_not_the_holders() -> None:
    log: list[str] = []
    aliases = Aliases()
    aliases.track(2, "state.log", log, list, where="s0", task=None, loop=False)
    log.append("s1")  # the loop appends (its own access records the write)
    assert aliases.changed(1) == []  # the loop gives up the baton: seen, no holder's write
    assert aliases.changed(2) == []  # nor thread 2's the next time it gives it up
    log.append("s0")  # thread 2 appends through its alias
    assert aliases.changed(2) == [("state.log", "s0", None, False)]
    assert aliases.changed(2) == []
