"""Connection limits, against Fermata and the real mpd alike (issue 7): `connection_timeout` closes a
silent client but never an idling one, `max_connections` closes the extra connection at once, and a
client trickling one byte at a time neither blocks the others nor keeps its connection forever.
127.0.0.1 only; bounded in time."""

import socket
import time

import pytest

from mpdtest import HOST, scaled


def greeted(port: int) -> socket.socket:
    s = socket.create_connection((HOST, port), timeout=scaled(5))
    assert s.recv(100).startswith(b"OK MPD ")
    return s


def closed_within(s: socket.socket, seconds: float) -> bool:
    """Whether the server closes `s` within `seconds` (reading whatever it sends first)."""
    s.settimeout(0.2)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if s.recv(4096) == b"":
                return True
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
    return False


@pytest.mark.parametrize("kind", ["ref", "sut"])
def test_connection_timeout_spares_idle_clients(server_factory, kind):
    server = server_factory(kind, connection_timeout="2")
    silent = greeted(server.port)
    idler = greeted(server.port)
    idler.sendall(b"idle\n")
    assert closed_within(silent, scaled(5)), "a silent client is closed after connection_timeout"
    assert not closed_within(idler, scaled(1)), "an idling client stays"
    idler.settimeout(scaled(5))
    idler.sendall(b"noidle\n")
    assert idler.recv(100) == b"OK\n"
    idler.close()


@pytest.mark.parametrize("kind", ["ref", "sut"])
def test_max_connections_closes_the_extra_one(server_factory, kind):
    server = server_factory(kind, max_connections="3")
    held = [greeted(server.port) for _ in range(3)]
    extra = socket.create_connection((HOST, server.port), timeout=scaled(5))
    assert closed_within(extra, scaled(3)), "the fourth connection is closed"
    extra.close()
    held[0].close()
    time.sleep(0.2)
    again = greeted(server.port)             # a freed slot is usable again
    again.sendall(b"ping\n")
    assert again.recv(100) == b"OK\n"
    for s in held[1:] + [again]:
        s.close()


@pytest.mark.parametrize("kind", ["ref", "sut"])
def test_a_trickling_client_does_not_block_others(server_factory, kind):
    server = server_factory(kind, connection_timeout="3")
    slow = greeted(server.port)
    rtts = []
    with greeted(server.port) as fast:
        fast.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for byte in b"status" * 3:
            slow.sendall(bytes([byte]))      # never a whole line
            t0 = time.perf_counter()
            fast.sendall(b"ping\n")
            assert fast.recv(100) == b"OK\n"
            rtts.append(time.perf_counter() - t0)
            time.sleep(0.1)
        assert max(rtts) < 0.05, f"ping took {max(rtts) * 1000:.1f} ms while another client trickled"
        # The trickler sends no whole command: connection_timeout ends it, as mpd ends it.
        assert closed_within(slow, scaled(6))
