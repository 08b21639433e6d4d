"""Every run of a search answers from the scripts as they stood when the search began.

``explore()`` runs one flow many times (one run per schedule or seed), and
``races="fail"`` runs a test's flow again at teardown. Each of those runs is the
same scenario, so each must meet the same script: a ``fake_crews.on(crew="emea")
.reply(...)`` scripted once answers the crew in *every* run, as it does in a test
that runs the flow once. Without this, the second run found the reply used up and
failed with an unscripted call that no single run makes.

A :class:`ScriptMark` keeps, for each scripted fake bound in the session, how far
its script had been used and how long its ledger was. :meth:`ScriptMark.replay`
runs a block from there: first the replies' use counts and the ledger go back to
the mark (so a human request's occurrence and a call's number count as in a single
run), and afterwards back again, so that the fakes stand after a search as they did
before it (a later ``flows.run`` or search in the test meets the same script). A
reply some run used is remembered as used (``Entry.most_in_a_search``): the
teardown check names only replies no run asked for. What each run called is in
that run's own trace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pytest_flows._internal.fakes.script import Script

__all__ = ["ScriptMark"]

_T = TypeVar("_T")


def _scripts(session: Any) -> list[Script]:
    fakes = getattr(session, "bound_fakes", None)
    found: list[Script] = []
    for fake in fakes() if fakes is not None else ():
        script = getattr(fake, "script", None)
        if isinstance(script, Script) and script not in found:
            found.append(script)
    return found


class ScriptMark:
    """Where the session's scripts stood at one moment, to run blocks from there."""

    def __init__(self, session: Any) -> None:
        self._scripts = _scripts(session)
        self._ledger = {id(s): len(s.exchanges) for s in self._scripts}
        self._used = {id(e): e.used for s in self._scripts for e in s.entries}

    def replay(self, block: Callable[[], _T]) -> _T:
        """Run ``block`` from the mark, then put the scripts back there."""
        self._rewind(after_a_run=False)
        try:
            return block()
        finally:
            self._rewind(after_a_run=True)

    def _rewind(self, *, after_a_run: bool) -> None:
        for script in self._scripts:
            with script._lock:
                for entry in script.entries:
                    if after_a_run:
                        entry.most_in_a_search = max(entry.most_in_a_search, entry.used)
                    entry.used = self._used.get(id(entry), 0)
                del script.exchanges[self._ledger[id(script)] :]
