"""The network guard: outbound connections and name lookups fail before any packet leaves.

What it covers, while it is active (one flows test):

* connections: ``socket.socket.connect`` / ``connect_ex``, and the same methods
  reached through the C type (``_socket.socket.connect(sock, address)``);
* datagrams: ``sendto`` / ``sendmsg`` with an address (UDP, DNS over UDP);
* name lookups: ``getaddrinfo`` (``socket``'s and ``_socket``'s),
  ``gethostbyname``, ``gethostbyname_ex``, ``gethostbyaddr`` and ``getnameinfo``
  (unless it is asked for numbers only, which never leaves the machine).

A name the policy allows also allows the addresses the guard's lookups
returned for it, until the guard exits: connecting to ``api.example.test``
means connecting to the address it resolved to.
"""

from __future__ import annotations

import _socket
import contextlib
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from pytest_flows._internal.errors import FlowsUsageError, NetworkBlockedError

__all__ = ["check_allow_hosts", "is_loopback", "loopback_only", "network_guard"]

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


def check_allow_hosts(hosts: Any, where: str = "allow_hosts") -> tuple[str, ...]:
    """``hosts`` as a tuple of lower-case host names, or a usage error naming the fix.

    A bare string is refused: iterating it would allow one-letter hosts.
    """
    example = "allow_hosts=['api.openai.com']"
    if isinstance(hosts, str | bytes):
        raise FlowsUsageError(
            f"{where} takes a list of host names, got the string {hosts!r} (which would "
            f"allow each of its letters as a host). Wrap it in a list: "
            f"allow_hosts=[{hosts!r}]."
        )
    try:
        items = list(hosts)
    except TypeError:
        raise FlowsUsageError(
            f"{where} takes a list of host names, got {hosts!r}; e.g. {example}."
        ) from None
    checked = []
    for host in items:
        if not isinstance(host, str) or not host.strip():
            raise FlowsUsageError(
                f"{where}: every entry must be a host name (a non-empty string), got "
                f"{host!r}; e.g. {example}."
            )
        if "/" in host:
            raise FlowsUsageError(
                f"{where}: {host!r} is a URL, not a host name; allow the host alone, e.g. "
                f"allow_hosts=[{host.split('://', 1)[-1].split('/', 1)[0]!r}]."
            )
        checked.append(host.strip().lower())
    return tuple(checked)


def _split(address: Any) -> tuple[str, int | None] | None:
    if isinstance(address, tuple) and address and isinstance(address[0], str | bytes):
        host = address[0].decode() if isinstance(address[0], bytes) else address[0]
        port = address[1] if len(address) > 1 and isinstance(address[1], int) else None
        return host, port
    return None  # unix sockets and other families never leave the machine


def loopback_only(extra_hosts: Sequence[str] = ()) -> Allow:
    """The flows policy: this machine, plus ``extra_hosts`` (names or addresses)."""
    allowed = set(check_allow_hosts(extra_hosts))

    def allow(host: str, port: int | None) -> bool:
        return is_loopback(host) or host.lower() in allowed

    return allow


def _address_key(host: str) -> str:
    """One spelling per address: ``::FFFF:10.0.0.1`` and ``10.0.0.1`` are the same host."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return host.lower()
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


class _Resolved:
    """Addresses the guard's own lookups returned for allowed names (this guard only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._addresses: set[str] = set()

    def add(self, hosts: Iterable[Any]) -> None:
        keys = {_address_key(host) for host in hosts if isinstance(host, str)}
        with self._lock:
            self._addresses |= keys

    def __contains__(self, host: str) -> bool:
        key = _address_key(host)
        with self._lock:
            return key in self._addresses


@contextlib.contextmanager
def network_guard(allow: Allow) -> Iterator[None]:
    """Refuse connections, datagrams and name lookups that ``allow(host, port)`` rejects."""
    resolved = _Resolved()
    real_socket_type: Any = _socket.socket
    real_getaddrinfo = _socket.getaddrinfo
    real_gethostbyname = _socket.gethostbyname
    real_gethostbyname_ex = _socket.gethostbyname_ex
    real_gethostbyaddr = _socket.gethostbyaddr
    real_getnameinfo = _socket.getnameinfo

    def check(host: str, port: int | None) -> None:
        if not allow(host, port) and host not in resolved:
            raise NetworkBlockedError(host, port)

    def check_address(address: Any) -> None:
        split = _split(address)
        if split is not None:
            check(*split)

    def name_of(host: Any) -> str | None:
        if isinstance(host, bytes):
            return host.decode("idna")
        return host if isinstance(host, str) else None  # None: the wildcard / local bind

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = name_of(host)
        if name is not None:
            check(name, port if isinstance(port, int) else None)
        result = real_getaddrinfo(host, port, *args, **kwargs)
        if name is not None:
            resolved.add(entry[4][0] for entry in result if len(entry) > 4 and entry[4])
        return result

    def gethostbyname(host: Any) -> str:
        name = name_of(host)
        if name is not None:
            check(name, None)
        address: str = real_gethostbyname(host)
        resolved.add([address])
        return address

    def host_lookup(real: Callable[[Any], Any], *, records: bool) -> Callable[[Any], Any]:
        """gethostbyname_ex / gethostbyaddr: checked, and (``records``) its addresses kept."""

        def lookup(host: Any) -> tuple[str, list[str], list[str]]:
            name = name_of(host)
            if name is not None:
                check(name, None)
            result: tuple[str, list[str], list[str]] = real(host)
            if records:
                resolved.add(result[2])
            return result

        return lookup

    def getnameinfo(sockaddr: Any, flags: int) -> tuple[str, str]:
        # Numbers only (NI_NUMERICHOST) is formatting, not a lookup.
        if not flags & socket.NI_NUMERICHOST:
            check_address(sockaddr)
        result: tuple[str, str] = real_getnameinfo(sockaddr, flags)
        return result

    def connect(self: Any, address: Any) -> None:
        check_address(address)
        real_socket_type.connect(self, address)

    def connect_ex(self: Any, address: Any) -> int:
        check_address(address)
        code: int = real_socket_type.connect_ex(self, address)
        return code

    def sendto(self: Any, data: Any, *rest: Any) -> int:
        # sendto(data, address) or sendto(data, flags, address)
        if rest:
            check_address(rest[-1])
        sent: int = real_socket_type.sendto(self, data, *rest)
        return sent

    def sendmsg(self: Any, buffers: Any, *rest: Any, **kwargs: Any) -> int:
        address = kwargs.get("address", rest[2] if len(rest) > 2 else None)
        if address is not None:
            check_address(address)
        sent: int = real_socket_type.sendmsg(self, buffers, *rest, **kwargs)
        return sent

    methods: dict[str, Callable[..., Any]] = {
        "connect": connect,
        "connect_ex": connect_ex,
        "sendto": sendto,
        "sendmsg": sendmsg,
    }
    guarded_type = _guarded_socket_type(real_socket_type, methods)
    lookups = {
        "getaddrinfo": getaddrinfo,
        "gethostbyname": gethostbyname,
        "gethostbyname_ex": host_lookup(real_gethostbyname_ex, records=True),
        "gethostbyaddr": host_lookup(real_gethostbyaddr, records=False),
        "getnameinfo": getnameinfo,
    }
    from pytest_flows._internal.runtime.stdlib_seams import (
        SEAMS,  # the thread scheduler: not at start-up
    )

    with contextlib.ExitStack() as undo:
        for name, method in methods.items():
            if hasattr(real_socket_type, name):
                undo.enter_context(SEAMS[f"socket:socket.{name}"].replace(method))
        # Code that calls the C type directly (_socket.socket.connect(sock, address)).
        for module in ("_socket", "socket"):
            undo.enter_context(SEAMS[f"{module}:SocketType"].replace(guarded_type))
        undo.enter_context(SEAMS["_socket:socket"].replace(guarded_type))
        for name, lookup in lookups.items():
            undo.enter_context(SEAMS[f"_socket:{name}"].replace(lookup))
            # socket.getaddrinfo is a Python wrapper that calls _socket.getaddrinfo; the
            # others are _socket's functions imported by name, so both names are patched.
            if name != "getaddrinfo":
                undo.enter_context(SEAMS[f"socket:{name}"].replace(lookup))
        yield


def _guarded_socket_type(real: Any, methods: dict[str, Callable[..., Any]]) -> Any:
    """A stand-in for ``_socket.socket`` (its C type cannot be patched) with guarded methods.

    ``isinstance`` and ``issubclass`` answer as for the real type, so code that checks
    ``isinstance(sock, _socket.socket)`` while the guard is active still works.
    """

    # Derived from the metaclass of ``real``: a guard inside another guard wraps the
    # outer guard's stand-in, whose metaclass is the outer _Meta.
    class _Meta(type(real)):  # type: ignore[misc]
        def __instancecheck__(cls, instance: Any) -> bool:
            return isinstance(instance, real)

        def __subclasscheck__(cls, subclass: Any) -> bool:
            return issubclass(subclass, real)

    namespace = {name: method for name, method in methods.items() if hasattr(real, name)}
    namespace["__module__"] = real.__module__
    return _Meta("socket", (real,), namespace)
