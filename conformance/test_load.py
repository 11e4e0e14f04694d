"""Non-differential load tests, against the system under test only.

* 10,000 pipelined pings get 10,000 OKs, in order;
* 500 idle clients are held and all woken by one event;
* a client that floods large replies and never reads does not slow down the
  ping round trips of another client (p99 < 50 ms).
"""

import selectors
import socket
import subprocess
import sys
import threading
import time

import pytest

import mpdtest
from mpdtest import HOST, scaled


def read_exactly_lines(sock: socket.socket, count: int, timeout: float) -> bytes:
    """Read until `count` newline-terminated lines have arrived (or fail)."""
    sock.settimeout(scaled(timeout))
    buf = bytearray()
    lines = 0
    deadline = time.monotonic() + scaled(timeout)
    while lines < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"only {lines} of {count} lines after {timeout}s")
        data = sock.recv(1 << 16)
        if not data:
            raise AssertionError(f"connection closed after {lines} of {count} lines")
        lines += data.count(b"\n")
        buf += data
    return bytes(buf)


def send_in_background(sock: socket.socket, data: bytes) -> threading.Thread:
    t = threading.Thread(target=sock.sendall, args=(data,), daemon=True)
    t.start()
    return t


def test_10000_pipelined_pings(sut, require_commands):
    require_commands("ping")
    with sut.connect(timeout=scaled(20)) as c:
        sender = send_in_background(c.sock, b"ping\n" * 10000)
        data = read_exactly_lines(c.sock, 10000, timeout=20)
        sender.join(scaled(5))
    assert data == b"OK\n" * 10000


def test_pipelined_replies_stay_in_order(sut, require_commands):
    """Every 1000th ping has a bad argument: its ACK must come exactly there."""
    require_commands("ping")
    lines = [b"ping x\n" if i % 1000 == 999 else b"ping\n" for i in range(10000)]
    ack = b'ACK [2@0] {ping} wrong number of arguments for "ping"\n'
    want = b"".join(ack if line != b"ping\n" else b"OK\n" for line in lines)
    with sut.connect(timeout=scaled(20)) as c:
        sender = send_in_background(c.sock, b"".join(lines))
        data = read_exactly_lines(c.sock, 10000, timeout=20)
        sender.join(scaled(5))
    assert data == want


IDLERS = 500


def test_500_idle_clients_all_woken(server_factory, require_commands):
    require_commands("idle", "subscribe")
    limit = mpdtest.raise_nofile_limit(IDLERS * 2 + 200)
    if limit < IDLERS + 100:
        pytest.skip(f"RLIMIT_NOFILE is only {limit}")
    server = server_factory("sut", max_connections=str(IDLERS + 100))
    mpdtest.wait_until(lambda: mpdtest.server_side_connections(server.port) == 0, 2)
    baseline = mpdtest.server_side_connections(server.port)
    sel = selectors.DefaultSelector()
    socks = []
    try:
        # One at a time (connect, greeting): a burst of 500 SYNs overflows a
        # small listen backlog and costs 1 s SYN retransmits.
        for _ in range(IDLERS):
            s = socket.create_connection((HOST, server.port), timeout=scaled(5))
            socks.append(s)
            s.settimeout(scaled(5))
            greeting = s.recv(64)
            assert greeting.startswith(b"OK MPD "), greeting
        for s in socks:
            s.sendall(b"idle subscription\n")
        # Nobody may have been answered or dropped.
        time.sleep(scaled(0.3))
        for s in socks:
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
        early = sel.select(0)
        assert not early, f"{len(early)} idle clients got data or were closed before any event"
        assert mpdtest.server_side_connections(server.port) >= baseline + IDLERS

        # One event wakes all of them.
        t0 = time.monotonic()
        with server.connect() as waker:
            assert waker.command("subscribe wake") == b"OK\n"
            got = {s: b"" for s in socks}
            want = b"changed: subscription\nOK\n"
            pending = set(socks)
            deadline = time.monotonic() + scaled(10)
            while pending and time.monotonic() < deadline:
                for key, _ in sel.select(0.1):
                    s = key.fileobj
                    data = s.recv(4096)
                    got[s] += data
                    if not data or len(got[s]) >= len(want):
                        sel.unregister(s)
                        pending.discard(s)
            woken = time.monotonic() - t0
            wrong = [g for g in got.values() if g != want]
            assert not wrong, (f"{len(wrong)} of {IDLERS} idle clients got something else, "
                               f"e.g. {wrong[0]!r}")
            # The server is still fine, and it answers the waker.
            assert waker.command("ping") == b"OK\n"
        assert woken < scaled(5), f"waking {IDLERS} clients took {woken:.2f}s"
    finally:
        sel.close()
        for s in socks:
            s.close()
    assert mpdtest.wait_until(
        lambda: mpdtest.server_side_connections(server.port) <= baseline, 10), \
        "the server did not close its side of the 500 connections"


FLOODER = r"""
import socket, sys, time
port, cmd, seconds = int(sys.argv[1]), sys.argv[2].encode() + b"\n", float(sys.argv[3])
pushed = drops = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # fill up fast
        s.connect(("127.0.0.1", port))
        s.settimeout(0.05)
        while time.monotonic() < end:
            try:
                pushed += s.send(cmd)                # never read a byte
            except socket.timeout:
                pass                                 # the server stopped reading us
            time.sleep(0.001)   # ~1000 requests/s: enough to fill any output buffer
                                # in well under a second, without turning the test
                                # into a CPU benchmark of reply generation
    except OSError:
        drops += 1                                   # dropped by the server: reconnect
        time.sleep(0.01)
    finally:
        s.close()
print(pushed, drops)
"""


@pytest.mark.serial
def test_slow_reader_does_not_stall_others(sut, servers):
    """A client that sends a large-reply command in a loop and never reads.

    The flooder runs in its own process (a thread would compete with the
    measuring thread for the GIL and distort the round trips).  Its requests
    pile up replies on the server that are never read: the server must buffer
    (or drop that client) without blocking its other clients.
    """
    # Replies of ~10 kB (a subtree, not the whole 2000-song library: ~1 MB per reply
    # would make this a CPU benchmark of reply generation instead).
    candidates = {"listallinfo": 'listallinfo "Missing & Multi"',
                  "listall": 'listall "Missing & Multi"',
                  "commands": "commands", "tagtypes": "tagtypes"}
    cmd = next((line for c, line in candidates.items() if c in servers.sut_commands), None)
    if cmd is None or "ping" not in servers.sut_commands:
        pytest.skip("needs ping and one of " + ", ".join(candidates))
    duration = scaled(2.0)
    flooder = subprocess.Popen([sys.executable, "-c", FLOODER, str(sut.port), cmd,
                                str(duration + 1.0)], stdout=subprocess.PIPE, text=True)
    rtts = []
    try:
        time.sleep(scaled(0.3))                 # let the flood build up
        with sut.connect() as c:
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            end = time.monotonic() + duration
            while time.monotonic() < end or len(rtts) < 200:
                t0 = time.perf_counter()
                c.send(b"ping\n")
                assert c.file.readline() == b"OK\n"
                rtts.append(time.perf_counter() - t0)
                if len(rtts) > 100_000:
                    break
        out, _ = flooder.communicate(timeout=scaled(10))
    finally:
        if flooder.poll() is None:
            flooder.kill()
            flooder.wait()
    pushed, drops = map(int, out.split())
    rtts.sort()
    p99 = rtts[int(len(rtts) * 0.99) - 1]
    print(f"slow reader: ping p50 {rtts[len(rtts) // 2] * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms "
          f"over {len(rtts)} pings; flooder sent {pushed} bytes, was dropped {drops} times")
    assert pushed > 5_000, f"the flood only pushed {pushed} bytes"
    assert p99 < 0.050, (f"ping p99 {p99 * 1000:.1f} ms (median {rtts[len(rtts) // 2] * 1000:.2f}"
                         f" ms, {len(rtts)} pings) while another client floods `{cmd}` "
                         f"({pushed} bytes of requests, dropped {drops} times)")
