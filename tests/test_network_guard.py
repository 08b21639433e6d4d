"""The network guard refuses connections before they are made.

Every address used here is on this machine: the guard is shown refusing a
loopback port it was told to deny, never aimed at another host.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator

import pytest

from pytest_flows.errors import NetworkBlockedError
from pytest_flows.network import is_loopback, loopback_only, network_guard


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
