"""What a flows test is isolated from, applied around that test only.

A test that uses no pytest-flows fixture or marker must see the process as it
would without the plugin: its environment, disk locations, event-loop policy,
clock and network. So by default (``flows_isolation = test``) everything here is
entered around each flows test and undone after it. ``flows_isolation = session``
(implied by ``--flows-all``) applies the environment to the whole session
instead, before conftest files load, as earlier releases did.

The one session-wide step of the default mode is :func:`framework_import_environment`:
crewai decides at import time whether its telemetry and first-run tracing exist,
so those variables are set while crewai itself is being imported, then removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from pytest_flows._internal.contract.adapters import ADAPTERS, AdapterSpec
from pytest_flows._internal.runtime.loop import (
    DeterministicEventLoop,
    DeterministicEventLoopPolicy,
    active_scheduler,
    ensure_policy,
)
from pytest_flows._internal.secrets import PROVIDER_KEYS, secret_env_names

__all__ = [
    "deterministic_loops",
    "framework_import_environment",
    "hidden_env_names",
    "in_isolation",
    "isolated_environment",
    "outside_flows_policy",
    "patched_environ",
    "session_isolation",
]

# -- whether isolation is in force -------------------------------------------------------
_lock = threading.Lock()
_depth = {"session": 0, "test": 0}


@contextlib.contextmanager
def _counted(kind: str) -> Iterator[None]:
    with _lock:
        _depth[kind] += 1
    try:
        yield
    finally:
        with _lock:
            _depth[kind] -= 1


def in_isolation() -> bool:
    """True in a flows test, in a session isolated as a whole, or while a harness is open.

    Process-wide hooks the frameworks consult at use time (crewai's memory storage
    factory) ask this, so they act only where isolation does.
    """
    return _depth["session"] > 0 or _depth["test"] > 0 or active_scheduler() is not None


# -- the environment ------------------------------------------------------------------
def hidden_env_names(environ: Mapping[str, str]) -> list[str]:
    """What a flows test must not see: every provider key and secret-looking variable."""
    return sorted({*secret_env_names(environ), *(k for k in PROVIDER_KEYS if k in environ)})


@contextlib.contextmanager
def patched_environ(
    values: Mapping[str, str], hidden: tuple[str, ...] | list[str] = ()
) -> Iterator[None]:
    """Set ``values`` and remove ``hidden`` from ``os.environ``; put back exactly what was."""
    saved = {key: os.environ.get(key) for key in [*values, *hidden]}
    os.environ.update(values)
    for key in hidden:
        os.environ.pop(key, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_installed: dict[str, bool] = {}


def _installed_frameworks() -> list[AdapterSpec]:
    # find_spec costs a path scan: once per process, and only when isolating
    for spec in ADAPTERS:
        if spec.framework not in _installed:
            _installed[spec.framework] = importlib.util.find_spec(spec.framework) is not None
    return [spec for spec in ADAPTERS if _installed[spec.framework]]


def isolation_environment(base: Path) -> dict[str, str]:
    """The variables an isolated test or session runs with; ``base`` holds its files."""
    env: dict[str, str] = {}
    for spec in _installed_frameworks():
        env.update(spec.environment)
        env.update(spec.isolated)
    for sub in ("data", "cache", "config"):
        (base / sub).mkdir(parents=True, exist_ok=True)
        env[f"XDG_{sub.upper()}_HOME"] = str(base / sub)
    return env


@contextlib.contextmanager
def isolated_environment(base: Path) -> Iterator[None]:
    """Around one flows test: the frameworks' quiet settings, private XDG directories
    under ``base``, and no provider keys or other secrets."""
    env = isolation_environment(base)
    with _counted("test"), patched_environ(env, hidden_env_names(os.environ)):
        yield


@contextlib.contextmanager
def session_isolation(base: Path) -> Iterator[None]:
    """The same for a whole session (``flows_isolation = session``)."""
    env = isolation_environment(base)
    with _counted("session"), patched_environ(env, hidden_env_names(os.environ)):
        yield


@contextlib.contextmanager
def framework_import_environment(spec: AdapterSpec) -> Iterator[None]:
    """While ``spec``'s framework is imported (and its adapter configured): its quiet
    settings. crewai creates its telemetry singleton and first-run trace handler at
    import, reading these variables once; later reads happen per flows test."""
    with patched_environ(spec.environment):
        yield


# -- the event-loop policy ------------------------------------------------------------
#: The policies in force when each open harness entered, innermost last.
_outer: list[asyncio.AbstractEventLoopPolicy] = []


@contextlib.contextmanager
def deterministic_loops() -> Iterator[None]:
    """Every loop made while the block runs is a :class:`DeterministicEventLoop`.

    The deterministic policy is installed for the block; the policy that was in force
    also hands out deterministic loops meanwhile, because pytest-asyncio keeps the
    policy it saw first and installs *that* one around each async test.
    """
    outer = asyncio.get_event_loop_policy()
    redirected = False
    if not isinstance(outer, DeterministicEventLoopPolicy):
        with contextlib.suppress(TypeError):  # a policy without a __dict__
            vars(outer)["new_event_loop"] = DeterministicEventLoop
            redirected = True
    _outer.append(outer)
    try:
        with ensure_policy():
            yield
    finally:
        _outer.pop()
        if redirected:
            vars(outer).pop("new_event_loop", None)


@contextlib.contextmanager
def outside_flows_policy() -> Iterator[None]:
    """For the block, the policy that was in force before any harness opened (for
    pytest-asyncio's session-wide ``event_loop_policy``, so plain tests get theirs)."""
    if not _outer:
        yield
        return
    current = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(_outer[0])
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(current)
