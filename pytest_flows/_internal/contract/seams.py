"""The seam registry: every reach into code pytest-flows does not own, declared once.

A *seam* is a place where the harness depends on something a framework (or the
standard library) does not promise to keep: a method it replaces, a private
function it calls, a private attribute it reads. Each adapter declares its seams
in its own ``seams.py`` (the stdlib's are in ``_stdlib_seams.py``); the check
(``check_patch_points()``, run by the test suite) resolves every declaration and
fails with one message naming each seam that moved, the installed version and the
supported range - so an upgrade breaks one test with a readable list instead of
many tests with an ``AttributeError`` each.

Every patch goes through :func:`replaced` (or :meth:`Seam.replace` /
:meth:`Seam.shadow`, which name the declaration they rely on): the attribute is
swapped for the block and the original comes back however the block exits,
including when it was inherited rather than set on the object.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

__all__ = [
    "Registry",
    "Seam",
    "SeamsMoved",
    "check",
    "problems",
    "replaced",
    "resolve",
]

Kind = Literal["patch", "call", "read"]
_KINDS = ("patch", "call", "read")
_MISSING = object()


class SeamsMoved(AssertionError):
    """Declared seams no longer resolve: the framework (or Python) changed under us."""


class Seam:
    """One dependency on code pytest-flows does not own.

    ``target`` is ``"module:Qualified.name"`` (``"threading:Thread.start"``,
    ``"crewai.llms.retry:_retry_after_seconds"``). ``kind``: ``"patch"`` (the
    harness replaces it), ``"call"`` (calls it though it is private) or ``"read"``
    (reads a private attribute; when that attribute is set per instance, the target
    is the method that sets it and ``source`` holds the assignment). ``why`` says
    what the harness needs it for. The checks, all optional: ``params`` - the
    leading parameter names; ``source`` - text the target's source must contain
    (the behaviour the patch relies on); ``probe(obj)`` - returns a problem or None
    for whatever the first two cannot express.
    """

    # A plain class rather than a dataclass: the registries are built at start-up.
    __slots__ = ("kind", "params", "probe", "source", "target", "why")

    def __init__(
        self,
        target: str,
        kind: Kind,
        why: str,
        *,
        params: tuple[str, ...] = (),
        source: tuple[str, ...] = (),
        probe: Callable[[Any], str | None] | None = None,
    ) -> None:
        if kind not in _KINDS:
            raise ValueError(f"Seam({target!r}): kind must be one of {_KINDS}, not {kind!r}")
        module, sep, path = target.partition(":")
        if not sep or not module or not path:
            raise ValueError(
                f"Seam({target!r}): target must be 'module:Qualified.name', "
                "e.g. 'threading:Thread.start'"
            )
        self.target = target
        self.kind = kind
        self.why = why
        self.params = params
        self.source = source
        self.probe = probe

    def __repr__(self) -> str:
        return f"Seam({self.target!r}, {self.kind!r})"

    @property
    def owner_and_name(self) -> tuple[Any, str]:
        """The object holding the seam's attribute, and the attribute's name."""
        module, _, path = self.target.partition(":")
        # A loaded module straight from sys.modules (adapters replace a dozen seams a
        # run, and import_module's frames cost more than the patching itself); one
        # still being imported goes through import_module, which waits for it.
        owner: Any = sys.modules.get(module)
        if owner is None or getattr(getattr(owner, "__spec__", None), "_initializing", False):
            owner = importlib.import_module(module)
        *parents, name = path.split(".")
        for part in parents:
            owner = _lookup(owner, part)
        return owner, name

    def replace(self, value: Any) -> contextlib.AbstractContextManager[None]:
        """``replaced(owner, name, value)`` for this declared seam."""
        owner, name = self.owner_and_name
        return replaced(owner, name, value)

    def shadow(self, obj: Any, value: Any) -> contextlib.AbstractContextManager[None]:
        """Replace this seam's attribute on ``obj`` only: an instance, or a subclass of
        the owner (the owner's own attribute is left alone)."""
        return replaced(obj, self.name, value)

    @property
    def name(self) -> str:
        """The attribute's name (the last part of the target)."""
        return self.target.rpartition(".")[2].rpartition(":")[2]


class Registry:
    """One owner's declared seams, looked up by target: ``SEAMS["threading:Thread.start"]``.

    Patching code names the seam it relies on through the registry, so a patch
    of something undeclared fails the first time it runs, naming the fix.
    """

    def __init__(self, owner: str, module: str, *seams: Seam) -> None:
        self.owner = owner
        self.module = module
        self._seams: dict[str, Seam] = {}
        for seam in seams:
            if seam.target in self._seams:
                raise ValueError(
                    f"{module}: {seam.target} is declared twice; keep one Seam and give it "
                    "both reasons"
                )
            self._seams[seam.target] = seam

    def __getitem__(self, target: str) -> Seam:
        try:
            return self._seams[target]
        except KeyError:
            raise KeyError(
                f"{target!r} is not a declared {self.owner} seam: add a Seam for it in "
                f"{self.module} (what it is, why the harness needs it) before patching it"
            ) from None

    def __iter__(self) -> Iterator[Seam]:
        return iter(self._seams.values())

    def __len__(self) -> int:
        return len(self._seams)


def resolve(seam: Seam) -> Any:
    """The object ``seam.target`` names, looked up without running descriptors."""
    owner, name = seam.owner_and_name
    return _lookup(owner, name)


def _lookup(owner: Any, name: str) -> Any:
    # A module may load names lazily (a module __getattr__); a class attribute is
    # read raw, so a property or staticmethod is checked as itself.
    if isinstance(owner, types.ModuleType):
        return getattr(owner, name)
    return inspect.getattr_static(owner, name)


@contextlib.contextmanager
def replaced(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name = value`` for the block; afterwards ``owner`` is as it was.

    An attribute ``owner`` only inherited (or did not have) is deleted again rather
    than pinned, so a class keeps following its base and an instance its class. On
    an instance (or a module) the value goes straight into its ``__dict__``: a
    shadow must not run the object's ``__setattr__`` (a pydantic model validates
    there, and refuses names it does not know).
    """
    namespace: Any = None if isinstance(owner, type) else getattr(owner, "__dict__", None)
    if namespace is None:
        saved = (
            vars(owner).get(name, _MISSING)
            if isinstance(owner, type)
            else getattr(owner, name, _MISSING)  # __slots__: no namespace to read
        )
        setattr(owner, name, value)
    else:
        saved = namespace.get(name, _MISSING)
        namespace[name] = value
    try:
        yield
    finally:
        if namespace is not None:
            if saved is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = saved
        elif saved is _MISSING:
            with contextlib.suppress(AttributeError):
                delattr(owner, name)
        else:
            setattr(owner, name, saved)


def _unwrap(obj: Any) -> Any:
    if isinstance(obj, staticmethod | classmethod):
        return obj.__func__
    if isinstance(obj, property):
        return obj.fget
    return obj


def _problem(seam: Seam) -> str | None:
    try:
        found = resolve(seam)
    except (ImportError, AttributeError) as exc:
        return f"is gone ({type(exc).__name__}: {exc})"
    obj = _unwrap(found)
    if seam.kind == "call" and not callable(obj):
        return f"is no longer callable (a {type(found).__name__})"
    if seam.params:
        try:
            names = tuple(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            return "has no readable signature"
        if names[: len(seam.params)] != seam.params:
            return f"takes {list(names)}, expected {list(seam.params)} first"
    if seam.source:
        try:
            text = inspect.getsource(obj)
        except (OSError, TypeError):
            return "has no readable source"
        lost = [snippet for snippet in seam.source if snippet not in text]
        if lost:
            return "no longer contains " + ", ".join(repr(s) for s in lost)
    if seam.probe is not None:
        return seam.probe(found)
    return None


def problems(seams: Iterable[Seam]) -> list[str]:
    """``"<target> (<kind>: <why>) <what changed>"`` for each seam that moved."""
    found = []
    for seam in seams:
        problem = _problem(seam)
        if problem is not None:
            found.append(f"{seam.target} ({seam.kind}: {seam.why}) {problem}")
    return found


def check(seams: Iterable[Seam], *, owner: str, installed: str, supported: str) -> None:
    """Raise :class:`SeamsMoved` listing every seam that moved, or return.

    ``owner`` names what the seams reach into ("crewai"), ``installed`` its version
    ("crewai 1.15.23"), ``supported`` the range pytest-flows is tested against.
    """
    moved = problems(seams)
    if moved:
        raise SeamsMoved(
            f"pytest-flows' {owner} seams moved ({installed} is installed; pytest-flows "
            f"supports {supported}). Pin a supported version or report it with the lines "
            "below:\n  " + "\n  ".join(moved)
        )
