"""The store part's declared reaches into LangGraph resolve on the installed version,
and the check notices one that moved."""

from __future__ import annotations

from pytest_flows._internal.contract.seams import problems
from pytest_flows.adapters import Seam
from pytest_flows.langgraph._store_seams import STORE_SEAMS


def test_every_store_seam_resolves() -> None:
    assert problems(STORE_SEAMS) == []
    assert len({seam.target for seam in STORE_SEAMS}) == len(STORE_SEAMS)


def test_a_moved_store_seam_is_reported() -> None:
    moved = Seam(
        "langgraph.checkpoint.base:BaseCheckpointSaver.with_allowlist",
        "read",
        "a source the method does not hold",
        source=("deepcopy_everything(self)",),
    )

    (problem,) = problems([moved])

    assert "with_allowlist" in problem
