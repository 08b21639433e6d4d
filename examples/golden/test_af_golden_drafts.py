"""Golden replay of an Agent Framework workflow's checkpoints."""

from __future__ import annotations

import pytest
from af_golden_drafts import build_drafts


@pytest.mark.golden
def test_drafts(flows, flow_store, tmp_path):
    run = flows.run(build_drafts(tmp_path), "golden files")
    assert run.output == "About golden files."
