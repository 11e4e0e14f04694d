"""Self-tests of the harness: it must notice differences, and only real ones.

These run against mpd only (plus tiny fake servers), so they pass before
Fermata exists and prove that a passing differential case means something.
"""

import hashlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import mpdtest
from mpdtest import REPO_ROOT, case, make_case


class FakeServer:
    """A deliberately wrong MPD: greets, then answers every line with `reply`."""

    def __init__(self, reply: bytes = b"OK\n", greeting: bytes = b"OK MPD 0.23.5\n"):
        self.reply = reply
        self.greeting = greeting
        self.listener = socket.create_server((mpdtest.HOST, 0))
        self.port = self.listener.getsockname()[1]
        self.label = "fake"
        self.stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        self.listener.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn):
        with conn:
            conn.sendall(self.greeting)
            buf = b""
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    _line, buf = buf.split(b"\n", 1)
                    conn.sendall(self.reply)

    def close(self):
        self.stop = True
        self.listener.close()


@pytest.fixture
def fake():
    servers = []

    def make(**kw):
        s = FakeServer(**kw)
        servers.append(s)
        return s
    yield make
    for s in servers:
        s.close()


def test_detects_a_different_reply(ref, fake):
    with pytest.raises(mpdtest.DifferentialMismatch) as err:
        mpdtest.compare(make_case("foo\n", replies=1), ref, fake(), "foo")
    text = str(err.value)
    assert '-a< ACK [5@0] {} unknown command "foo"' in text
    assert "+a< OK" in text


def test_detects_a_missing_close(ref, fake):
    with pytest.raises(mpdtest.DifferentialMismatch) as err:
        mpdtest.compare(make_case("Ping\n"), ref, fake(), "Ping")
    assert "-a: connection CLOSED by server" in str(err.value)
    assert "+a: connection still open" in str(err.value)


def test_detects_a_different_greeting(ref, fake):
    with pytest.raises(mpdtest.DifferentialMismatch):
        mpdtest.compare(make_case([]), ref, fake(greeting=b"OK MPD 0.24.0\n"), "greeting")


def test_detects_an_extra_reply(ref, fake):
    # The fake answers `noidle` outside idle, which mpd must not (OwnTone's bug).
    with pytest.raises(mpdtest.DifferentialMismatch):
        mpdtest.compare(make_case("noidle\n"), ref, fake(), "noidle")


def test_detects_a_tag_difference(ref, server_factory):
    """Two real mpds that differ only in metadata_to_use must differ."""
    other = server_factory("ref", metadata_to_use="artist,title")
    with pytest.raises(mpdtest.DifferentialMismatch) as err:
        mpdtest.compare(make_case("tagtypes\n", replies=1), ref, other, "tagtypes")
    assert "-a< tagtype: Album" in str(err.value)


def test_volatile_fields_are_normalised(ref, server_factory):
    """uptime/db_update differ between two mpds; the comparison must ignore them."""
    other = server_factory("ref")
    c = make_case("stats\nstatus\n", replies=2)
    t_ref, t_other = mpdtest.compare(c, ref, other, "stats")
    raw_ref = b"".join(e[3] for e in t_ref.events if e[0] == "recv")
    assert b"uptime: " in raw_ref and b"db_update: " in raw_ref
    assert b"uptime: <volatile>" in b"".join(
        e[3] for e in t_ref.normalized(c) if e[0] == "recv")


def test_sent_commands_and_skip_rule():
    c = make_case([("a", "command_list_ok_begin\nping\nfoo\nPing\n"),
                   ("b", 'idle "x"\nsubscri'), ("b", "be c\n")])
    assert c.sent_commands() == {"command_list_ok_begin", "ping", "foo", "idle", "subscribe"}
    mpd = {"ping", "idle", "subscribe", "status"}
    assert mpdtest.missing_commands(c, mpd, {"ping"}) == ["idle", "subscribe"]
    assert mpdtest.missing_commands(c, mpd, mpd) == []
    assert mpdtest.missing_commands(make_case("foo\n"), mpd, set()) == []
    assert mpdtest.missing_commands(case("ping\n", requires={"status"}), mpd, {"ping"}) \
        == ["status"]


def test_render_is_readable():
    lines = mpdtest.render([("send", 0, "a", b"ping x\r\n\tpi"),
                            ("recv", 0, "a", b"OK MPD 0.23.5\nACK [5@0] {} x\n"),
                            ("closed", (("a", True),))])
    assert lines == ["a> ping x\\r", "a> \\tpi  ⟵ no newline", "a< OK MPD 0.23.5",
                     "a< ACK [5@0] {} x", "a: connection CLOSED by server"]


# --- tools/make-fixtures.py ---------------------------------------------------------

def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            st = p.stat()
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(str(int(st.st_mtime)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def make_fixtures(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make-fixtures.py"), *args],
                          capture_output=True, text=True, timeout=120, check=True)


def test_make_fixtures_is_deterministic_and_idempotent(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    make_fixtures(str(a), "--songs", "30")
    make_fixtures(str(b), "--songs", "30")
    assert tree_digest(a) == tree_digest(b)
    stamp = a / ".make-fixtures.json"
    before = stamp.stat().st_mtime_ns
    out = make_fixtures(str(a), "--songs", "30").stdout
    assert "up to date" in out and stamp.stat().st_mtime_ns == before
    make_fixtures(str(a), "--songs", "31")          # parameters changed: rebuilt
    assert sum(1 for p in a.rglob("*.mp3")) == sum(1 for p in b.rglob("*.mp3")) + 1


def test_make_fixtures_refuses_foreign_dir(tmp_path):
    (tmp_path / "mine.txt").write_text("precious")
    r = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make-fixtures.py"),
                        str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and (tmp_path / "mine.txt").exists()
