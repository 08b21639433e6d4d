"""Run a callback as soon as a module finishes importing (or now, if it has), and
run a module's import inside a context (say, environment variables it reads once)."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

_callbacks: dict[str, list[Callable[[ModuleType], None]]] = {}
_contexts: dict[str, list[Callable[[], contextlib.AbstractContextManager[object]]]] = {}
_lock = threading.Lock()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _callbacks and fullname not in _contexts:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            spec: importlib.machinery.ModuleSpec | None = (
                find(fullname, path, target) if find else None
            )
            if spec is not None and spec.loader is not None:
                _wrap_loader(spec)
                return spec
        return None


def _wrap_loader(spec: importlib.machinery.ModuleSpec) -> None:
    loader: Any = spec.loader
    exec_module = loader.exec_module

    class _Loader(importlib.abc.Loader):
        def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
            return loader.create_module(spec)  # type: ignore[no-any-return]

        def exec_module(self, module: ModuleType) -> None:
            with _lock:
                contexts = _contexts.pop(module.__name__, [])
            with contextlib.ExitStack() as stack:
                for context in contexts:
                    stack.enter_context(context())
                exec_module(module)
                _fire(module.__name__, module)

        def __getattr__(self, name: str) -> Any:
            return getattr(loader, name)

    spec.loader = _Loader()


_finder = _Finder()


def _fire(name: str, module: ModuleType) -> None:
    with _lock:
        callbacks = _callbacks.pop(name, [])
        idle = not _callbacks and not _contexts
    if idle and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for callback in callbacks:
        callback(module)


def when_imported(name: str, callback: Callable[[ModuleType], None]) -> None:
    """Call ``callback(module)`` once ``name`` is imported; at once if it already is."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    with _lock:
        _callbacks.setdefault(name, []).append(callback)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def while_importing(
    name: str, context: Callable[[], contextlib.AbstractContextManager[object]]
) -> Callable[[], None]:
    """Run the first import of ``name`` (and its ``when_imported`` callbacks) inside
    ``context()``. Nothing happens if ``name`` is already imported. Returns a function
    that cancels the request."""
    if name in sys.modules:
        return lambda: None
    with _lock:
        _contexts.setdefault(name, []).append(context)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)

    def cancel() -> None:
        with _lock:
            waiting = _contexts.get(name, [])
            if context in waiting:
                waiting.remove(context)
            if not waiting:
                _contexts.pop(name, None)

    return cancel
