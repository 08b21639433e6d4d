"""The core adapter's declared seams resolve on the installed LangGraph, and patch only
what they declare."""

from __future__ import annotations

import importlib

import pytest

from pytest_flows.langgraph import check_patch_points
from pytest_flows.langgraph._seams import SEAMS


def test_every_declared_seam_resolves():
    check_patch_points()


def test_an_undeclared_patch_fails_naming_the_fix():
    with pytest.raises(KeyError, match="not a declared langgraph seam"):
        SEAMS["langgraph.pregel._loop:PregelLoop.put_writes"]


def test_the_id_sources_are_restored_after_the_test(flows):
    ids = importlib.import_module("langgraph.checkpoint.base.id")
    assert ids.random is not __import__("random")  # seeded for this test


def test_outside_a_flows_test_langgraph_draws_from_the_global_random():
    ids = importlib.import_module("langgraph.checkpoint.base.id")
    memory = importlib.import_module("langgraph.checkpoint.memory")
    assert ids.random is memory.random is __import__("random")
