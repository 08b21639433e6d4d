"""The fakes' private reaches into langchain-core and LangGraph resolve, and a moved
one is reported by name (the seam check the adapter's ``check_patch_points`` runs)."""

from __future__ import annotations

import gc

import pytest

from pytest_flows._internal.contract.seams import Seam, SeamsMoved, check, problems
from pytest_flows.langgraph._llm_seams import LLM_REGISTRY, LLM_SEAMS


def test_every_declared_seam_resolves_on_the_installed_packages():
    import langchain_openai  # noqa: F401  (its models are checked for overrides too)

    assert problems(LLM_SEAMS) == []


def test_a_provider_overriding_a_routed_step_is_reported():
    from langchain_core.language_models.chat_models import BaseChatModel

    class Odd(BaseChatModel):
        def stream(self, *args, **kwargs):  # would bypass the routing
            raise NotImplementedError

        def _generate(self, *args, **kwargs):
            raise NotImplementedError

        @property
        def _llm_type(self) -> str:
            return "odd"

    seam = LLM_REGISTRY["langchain_core.language_models.chat_models:BaseChatModel.stream"]
    found = problems([seam])
    del Odd
    gc.collect()  # the class leaves __subclasses__ (a later check must not see it)
    assert len(found) == 1
    assert "is overridden by" in found[0]
    assert "Odd" in found[0]


def test_a_moved_seam_fails_the_check_naming_it():
    gone = Seam("langchain_core.tools:BaseTool._run_gone", "patch", "fake_tools")
    with pytest.raises(SeamsMoved, match=r"BaseTool\._run_gone \(patch: fake_tools\) is gone"):
        check([*LLM_SEAMS, gone], owner="langgraph", installed="x", supported="y")


def test_patching_an_undeclared_target_names_the_fix():
    with pytest.raises(KeyError, match="add a Seam for it"):
        LLM_REGISTRY["langchain_core.tools:BaseTool.invoke"]
