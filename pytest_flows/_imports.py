"""Run a callback as soon as a module finishes importing (or now, if it has)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

_callbacks: dict[str, list[Callable[[ModuleType], None]]] = {}
_lock = threading.Lock()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _callbacks:
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
            exec_module(module)
            _fire(module.__name__, module)

        def __getattr__(self, name: str) -> Any:
            return getattr(loader, name)

    spec.loader = _Loader()


_finder = _Finder()


def _fire(name: str, module: ModuleType) -> None:
    with _lock:
        callbacks = _callbacks.pop(name, [])
    if not _callbacks and _finder in sys.meta_path:
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
