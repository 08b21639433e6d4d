"""The network guard refuses connections before they are made.

Every address used here is on this machine: the guard is shown refusing a
loopback port it was told to deny, never aimed at another host.
"""

from __future__ import annotations

import _socket
import select
import socket
from collections.abc import Iterator

import pytest

from pytest_flows._internal.errors import FlowsUsageError, NetworkBlockedError
from pytest_flows._internal.runtime.network import (
    check_allow_hosts,
    is_loopback,
    loopback_only,
    network_guard,
)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        yield server
    finally:
        server.close()


def _pending_connections(server: socket.socket) -> bool:
    readable, _, _ = select.select([server], [], [], 0)
    return bool(readable)


def test_denied_address_is_refused_before_any_connection(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    with (
        network_guard(lambda host, p: p != port),
        socket.socket() as client,
        pytest.raises(NetworkBlockedError) as info,
    ):
        client.connect(("127.0.0.1", port))
    assert info.value.host == "127.0.0.1" and info.value.port == port
    message = str(info.value)
    assert f"blocked a network connection to 127.0.0.1:{port}" in message
    assert "allow_hosts=['127.0.0.1']" in message
    assert not _pending_connections(listener), "nothing may reach the server"


def test_allowed_loopback_connects(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    with network_guard(loopback_only()), socket.create_connection(("127.0.0.1", port)):
        assert _pending_connections(listener)


def test_name_lookups_are_checked_too() -> None:
    with network_guard(lambda host, port: host != "localhost"):
        with pytest.raises(NetworkBlockedError, match="localhost:80"):
            socket.getaddrinfo("localhost", 80)
        with pytest.raises(NetworkBlockedError, match="to localhost"):
            socket.gethostbyname("localhost")


def test_guard_is_removed_at_exit(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    with network_guard(lambda host, p: False):
        pass
    with socket.create_connection(("127.0.0.1", port)):
        assert _pending_connections(listener)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("127.5.0.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("10.0.0.1", False),
        ("api.example.com", False),
    ],
)
def test_loopback_detection(host: str, local: bool) -> None:
    assert is_loopback(host) is local


def test_extra_hosts_can_be_allowed() -> None:
    allow = loopback_only(["db.internal"])
    assert allow("db.internal", 5432) and not allow("other.internal", 5432)


# -- an allowed name allows the addresses it resolved to -------------------------------------
def _stub_resolver(monkeypatch: pytest.MonkeyPatch, names: dict[str, str]) -> list[str]:
    """``_socket.getaddrinfo`` answering ``names`` (name -> address) without any DNS."""
    asked: list[str] = []

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):  # type: ignore[no-untyped-def]
        name = host.decode() if isinstance(host, bytes) else host
        asked.append(name)
        address = names.get(name, name)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(_socket, "getaddrinfo", getaddrinfo)
    return asked


def _only(name: str):  # type: ignore[no-untyped-def]
    """A policy that allows one name and nothing else, not even loopback addresses."""
    return lambda host, port: host == name


def test_an_allowed_name_allows_the_address_it_resolved_to(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = listener.getsockname()[1]
    asked = _stub_resolver(monkeypatch, {"api.example.test": "127.0.0.1"})
    with network_guard(_only("api.example.test")):
        with socket.socket() as early, pytest.raises(NetworkBlockedError):
            early.connect(("127.0.0.1", port))  # not resolved from an allowed name yet
        with socket.create_connection(("api.example.test", port)):
            assert _pending_connections(listener)
    assert asked == ["api.example.test"]


def test_resolved_addresses_are_forgotten_when_the_guard_exits(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = listener.getsockname()[1]
    _stub_resolver(monkeypatch, {"api.example.test": "127.0.0.1"})
    with network_guard(_only("api.example.test")):
        socket.getaddrinfo("api.example.test", port)
    with (
        network_guard(_only("api.example.test")),  # the next test's guard
        socket.socket() as client,
        pytest.raises(NetworkBlockedError, match=rf"127\.0\.0\.1:{port}"),
    ):
        client.connect(("127.0.0.1", port))
    assert not _pending_connections(listener)


def test_a_refused_name_teaches_the_guard_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _stub_resolver(monkeypatch, {"evil.example.test": "127.0.0.1"})
    with network_guard(_only("api.example.test")):
        with pytest.raises(NetworkBlockedError, match=r"evil\.example\.test"):
            socket.getaddrinfo("evil.example.test", 443)
        assert asked == []
        with pytest.raises(NetworkBlockedError):
            socket.gethostbyname("127.0.0.1")  # an address is checked like a name


def test_the_flows_policy_allows_what_an_allowed_name_resolves_to(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The session's policy, with a stub resolver pointing the name at a loopback listener.
    port = listener.getsockname()[1]
    _stub_resolver(monkeypatch, {"api.example.test": "127.0.0.1"})
    with network_guard(loopback_only(["API.example.test"])):
        with socket.create_connection(("api.example.test", port)):
            assert _pending_connections(listener)
        with pytest.raises(NetworkBlockedError, match=r"other\.example\.test"):
            socket.create_connection(("other.example.test", port))


# -- every way around the guard is covered ---------------------------------------------------
DENY_LOCALHOST = lambda host, port: host not in {"localhost", "127.0.0.1"}  # noqa: E731


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("socket.gethostbyname_ex", lambda: socket.gethostbyname_ex("localhost")),
        ("_socket.gethostbyname_ex", lambda: _socket.gethostbyname_ex("localhost")),
        ("socket.gethostbyaddr", lambda: socket.gethostbyaddr("127.0.0.1")),
        ("_socket.gethostbyname", lambda: _socket.gethostbyname("localhost")),
        ("socket.getnameinfo", lambda: socket.getnameinfo(("127.0.0.1", 80), 0)),
        ("_socket.getaddrinfo", lambda: _socket.getaddrinfo("localhost", 80)),
        ("socket.getaddrinfo(bytes)", lambda: socket.getaddrinfo(b"localhost", 80)),
    ],
)
def test_every_name_lookup_is_checked(name: str, call, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # Stubs behind the guard: had the guard let a lookup through, it would land here.
    reached: list[str] = []
    for function in (
        "getaddrinfo",
        "gethostbyname",
        "gethostbyname_ex",
        "gethostbyaddr",
        "getnameinfo",
    ):
        stub = lambda *args, _f=function: reached.append(_f)  # noqa: E731
        monkeypatch.setattr(_socket, function, stub)
        if function != "getaddrinfo":
            monkeypatch.setattr(socket, function, stub)
    with network_guard(DENY_LOCALHOST), pytest.raises(NetworkBlockedError):
        call()
    assert reached == [], f"{name} went around the guard"


def test_numeric_getnameinfo_is_not_a_lookup() -> None:
    flags = socket.NI_NUMERICHOST | socket.NI_NUMERICSERV
    with network_guard(lambda host, port: False):
        assert socket.getnameinfo(("127.0.0.1", 80), flags) == ("127.0.0.1", "80")


@pytest.fixture
def udp_listener() -> Iterator[socket.socket]:
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    try:
        yield server
    finally:
        server.close()


@pytest.mark.parametrize(
    "send",
    [
        lambda client, to: client.sendto(b"x", to),
        lambda client, to: client.sendto(b"x", 0, to),
        lambda client, to: client.sendmsg([b"x"], [], 0, to),
        lambda client, to: _socket.socket.sendto(client, b"x", to),
    ],
    ids=["sendto", "sendto-flags", "sendmsg", "_socket.socket.sendto"],
)
def test_datagrams_are_checked(udp_listener: socket.socket, send) -> None:  # type: ignore[no-untyped-def]
    to = udp_listener.getsockname()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as client:
        with network_guard(lambda host, port: port != to[1]), pytest.raises(NetworkBlockedError):
            send(client, to)
        assert not _pending_connections(udp_listener), "no datagram may leave"
        with network_guard(loopback_only()):
            send(client, to)
        assert _pending_connections(udp_listener)


def test_the_c_socket_type_is_checked_too(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    deny = lambda host, p: p != port  # noqa: E731
    with network_guard(deny):
        with socket.socket() as plain, pytest.raises(NetworkBlockedError):
            _socket.socket.connect(plain, ("127.0.0.1", port))
        raw = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            with pytest.raises(NetworkBlockedError):
                raw.connect(("127.0.0.1", port))
            assert raw.connect_ex is not None
            with pytest.raises(NetworkBlockedError):
                raw.connect_ex(("127.0.0.1", port))
        finally:
            raw.close()
        with socket.socket() as plain:  # isinstance still answers as before
            assert isinstance(plain, _socket.socket) and isinstance(plain, socket.SocketType)
    assert not _pending_connections(listener)
    assert _socket.socket is socket.SocketType and "connect" not in vars(socket.socket)


# -- allow_hosts must be a list ---------------------------------------------------------------
def test_a_string_allow_hosts_is_a_usage_error() -> None:
    string = r"got the string 'api\.openai\.com'.*allow_hosts=\['api\.openai\.com'\]"
    with pytest.raises(FlowsUsageError, match=string):
        loopback_only("api.openai.com")  # type: ignore[arg-type]
    with pytest.raises(FlowsUsageError, match=r"is a URL, not a host name.*\['api\.openai\.com'\]"):
        check_allow_hosts(["https://api.openai.com/v1"])
    with pytest.raises(FlowsUsageError, match="every entry must be a host name"):
        check_allow_hosts(["api.openai.com", None])
    assert check_allow_hosts(("API.openai.com",)) == ("api.openai.com",)


def test_a_string_allow_hosts_on_the_marker_or_the_session_is_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        """
        import pytest
        from pytest_flows._internal.errors import FlowsUsageError
        from pytest_flows._internal.session import FlowsSession

        @pytest.mark.flows(allow_hosts="api.openai.com")
        def test_marker():
            pass

        def test_session():
            with pytest.raises(FlowsUsageError, match="FlowsSession.allow_hosts"):
                FlowsSession(allow_hosts="api.openai.com")
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*test_marker: @pytest.mark.flows(allow_hosts=...) takes a list of host names, "
            "got the string 'api.openai.com'*"
        ]
    )
