"""The network guard: outbound connections fail before any packet leaves."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pytest_flows.errors import NetworkBlockedError

__all__ = ["is_loopback", "network_guard"]

Allow = Callable[[str, "int | None"], bool]

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}


def is_loopback(host: str) -> bool:
    """True for names and addresses that stay on this machine."""
    host = host.strip("[]").lower()
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _split(address: Any) -> tuple[str, int | None] | None:
    if isinstance(address, tuple) and address and isinstance(address[0], str):
        port = address[1] if len(address) > 1 and isinstance(address[1], int) else None
        return address[0], port
    return None  # unix sockets and other families never leave the machine


def loopback_only(extra_hosts: Sequence[str] = ()) -> Allow:
    allowed = {h.lower() for h in extra_hosts}

    def allow(host: str, port: int | None) -> bool:
        return is_loopback(host) or host.lower() in allowed

    return allow


@contextlib.contextmanager
def network_guard(allow: Allow) -> Iterator[None]:
    """Refuse connections and name lookups that ``allow(host, port)`` rejects."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo
    real_gethostbyname = socket.gethostbyname

    def check(address: Any) -> None:
        split = _split(address)
        if split is not None and not allow(*split):
            raise NetworkBlockedError(*split)

    def connect(self: socket.socket, address: Any) -> None:
        check(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str | bytes):
            name = host.decode() if isinstance(host, bytes) else host
            check((name, port if isinstance(port, int) else None))
        return real_getaddrinfo(host, port, *args, **kwargs)

    def gethostbyname(host: str) -> str:
        check((host, None))
        return real_gethostbyname(host)

    setattr(socket.socket, "connect", connect)  # noqa: B010 - a patch, on purpose
    setattr(socket.socket, "connect_ex", connect_ex)  # noqa: B010
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    try:
        yield
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo
        socket.gethostbyname = real_gethostbyname
