"""The seam registry: one replace-and-restore helper and one loud check for every patch."""

from __future__ import annotations

import sys
import threading
import types
from typing import Any

import pytest

from pytest_flows._internal.contract.seams import (
    Registry,
    Seam,
    SeamsMoved,
    check,
    problems,
    replaced,
)
from pytest_flows._internal.runtime import stdlib_seams as _stdlib_seams
from pytest_flows._internal.runtime.thread_context import threads_inherit_context


class Base:
    def hello(self) -> str:
        return "base"


class Child(Base):
    def own(self) -> str:
        return "own"


class Strict:
    """Refuses unknown attributes in __setattr__, as a pydantic model does."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise ValueError(f"no field {name}")

    def hello(self) -> str:
        return "strict"


class Slotted:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 1


def test_replaced_restores_an_own_attribute_even_when_the_block_raises() -> None:
    original = Child.__dict__["own"]
    with pytest.raises(RuntimeError), replaced(Child, "own", lambda self: "patched"):
        assert Child().own() == "patched"
        raise RuntimeError("boom")
    assert Child.__dict__["own"] is original


def test_replaced_removes_an_inherited_attribute_instead_of_pinning_it() -> None:
    with replaced(Child, "hello", lambda self: "patched"):
        assert Child().hello() == "patched"
    assert "hello" not in Child.__dict__
    with replaced(Base, "hello", lambda self: "later"):
        assert Child().hello() == "later"  # still follows its base


def test_replaced_shadows_an_instance_without_running_its_setattr() -> None:
    strict = Strict()
    with replaced(strict, "hello", lambda: "shadow"):
        assert strict.hello() == "shadow"
    assert "hello" not in vars(strict)
    assert strict.hello() == "strict"


def test_replaced_restores_a_slot_and_a_module_global() -> None:
    slotted = Slotted()
    with replaced(slotted, "value", 2):
        assert slotted.value == 2
    assert slotted.value == 1
    module = types.ModuleType("fake_framework")
    with replaced(module, "input", "scripted"):
        assert module.input == "scripted"  # type: ignore[attr-defined]
    assert not hasattr(module, "input")


@pytest.mark.parametrize(
    ("target", "kind", "message"),
    [
        ("threading.Thread.start", "patch", "target must be 'module:Qualified.name'"),
        ("threading:Thread.start", "monkeypatch", "kind must be one of"),
    ],
)
def test_a_malformed_declaration_is_refused_naming_the_fix(
    target: str, kind: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Seam(target, kind, "why")


def test_a_seam_declared_twice_is_refused() -> None:
    seam = Seam("threading:Lock", "patch", "why")
    with pytest.raises(ValueError, match="threading:Lock is declared twice"):
        Registry("stdlib", "here", seam, seam)


@pytest.fixture
def framework(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A stand-in framework module the declarations below reach into."""
    module = types.ModuleType("fake_framework")

    class Runner:
        def _step(self, item: int, *, retries: int = 0) -> int:
            return self._inner(item)  # type: ignore[attr-defined,no-any-return]

    module.Runner = Runner  # type: ignore[attr-defined]
    module._helper = lambda: 1  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_framework", module)
    return module


SEAMS = (
    Seam("fake_framework:Runner._step", "patch", "orders steps", params=("self", "item")),
    Seam("fake_framework:_helper", "call", "reads a hint"),
)


def test_seams_that_resolve_report_nothing(framework: types.ModuleType) -> None:
    assert problems(SEAMS) == []
    check(SEAMS, owner="fake", installed="fake 1.0", supported="fake>=1,<2")


def test_every_moved_seam_is_named_with_version_and_range(
    framework: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(framework.Runner, "_step", lambda self, items: None)
    monkeypatch.setattr(framework, "_helper", 3)
    with pytest.raises(SeamsMoved) as moved:
        check(SEAMS, owner="fake", installed="fake 2.0", supported="fake>=1,<2")
    assert str(moved.value).splitlines() == [
        "pytest-flows' fake seams moved (fake 2.0 is installed; pytest-flows supports "
        "fake>=1,<2). Pin a supported version or report it with the lines below:",
        "  fake_framework:Runner._step (patch: orders steps) takes ['self', 'items'], "
        "expected ['self', 'item'] first",
        "  fake_framework:_helper (call: reads a hint) is no longer callable (a int)",
    ]


def test_a_missing_module_source_text_and_probe_are_reported(
    framework: types.ModuleType,
) -> None:
    declared = (
        Seam("fake_framework_gone:Thing", "read", "gone"),
        Seam("fake_framework:Runner._step", "patch", "inner", source=("self._outer(",)),
        Seam("fake_framework:Runner", "read", "probed", probe=lambda cls: "lost its flag"),
    )
    found = problems(declared)
    assert found[0].startswith(
        "fake_framework_gone:Thing (read: gone) is gone (ModuleNotFoundError"
    )
    assert found[1:] == [
        "fake_framework:Runner._step (patch: inner) no longer contains 'self._outer('",
        "fake_framework:Runner (read: probed) lost its flag",
    ]


def test_every_stdlib_seam_resolves_on_this_python() -> None:
    assert problems(_stdlib_seams.SEAMS) == []
    assert problems(_stdlib_seams.FREEZEGUN) == []
    _stdlib_seams.check_stdlib_seams()


def test_thread_start_is_patched_once_for_the_scheduler_and_context_inheritance() -> None:
    real_start, real_lock = threading.Thread.start, threading.Lock
    sched = types.SimpleNamespace(idle=False)
    with _stdlib_seams.patched(sched), threads_inherit_context():
        assert threading.Thread.start is _stdlib_seams._start
    assert threading.Thread.start is real_start
    with threads_inherit_context():
        with _stdlib_seams.patched(sched):
            assert threading.Thread.start is _stdlib_seams._start
            assert isinstance(threading.Lock(), _stdlib_seams.SchedLock)
        assert threading.Thread.start is _stdlib_seams._start  # still inheriting
    assert threading.Thread.start is real_start
    assert threading.Lock is real_lock


def test_a_shadow_names_the_attribute_without_importing_the_owner() -> None:
    seam = Seam("not_a_module_anywhere:Owner.method", "patch", "why")
    obj = types.SimpleNamespace()
    with seam.shadow(obj, "shadowed"):
        assert obj.method == "shadowed"
    assert not hasattr(obj, "method")
