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
    """uptime/db_update differ between two mpds; the comparison must ignore them.

    (`stats` only: by now the session's mpd has run queue commands, so its
    `status` shows a different `playlist:` version than a fresh mpd's.)"""
    other = server_factory("ref")
    c = make_case("stats\n", replies=1)
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


def test_count_replies():
    assert mpdtest.count_replies(b"ping\nfoo\n") == 2
    assert mpdtest.count_replies(b"command_list_ok_begin\nping\nping\ncommand_list_end\nping\n") == 2
    assert mpdtest.count_replies(b"ping\nidle\n") is None          # blocks
    assert mpdtest.count_replies(b"ping\nPing\n") is None          # closes the connection
    assert mpdtest.count_replies(b"command_list_begin\nping\n") is None   # still open
    assert make_case("ping\nping\n", replies="auto").replies == 2
    assert make_case([("a", "ping\n"), ("b", "ping\n")], replies="auto").replies is None
    assert make_case(case("ping\n"), replies="auto").replies == 1
    assert make_case(case("ping\n", replies=5), replies="auto").replies == 5


def test_render_is_readable():
    lines = mpdtest.render([("send", 0, "a", b"ping x\r\n\tpi"),
                            ("recv", 0, "a", b"OK MPD 0.23.5\nACK [5@0] {} x\n"),
                            ("closed", (("a", True),))])
    assert lines == ["a> ping x\\r", "a> \\tpi  ⟵ no newline", "a< OK MPD 0.23.5",
                     "a< ACK [5@0] {} x", "a: connection CLOSED by server"]


# --- tools/make-fixtures.py ---------------------------------------------------------

def tree_digest(root: Path) -> str:
    """Names (bytes), mtimes, contents and symlink targets of everything under root."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames
                                        if os.path.islink(os.path.join(dirpath, d))]):
            p = Path(dirpath) / name
            st = p.lstat()
            h.update(os.fsencode(p.relative_to(root)) + b"\0")
            h.update(str(int(st.st_mtime)).encode())
            h.update(os.fsencode(os.readlink(p)) if p.is_symlink() else p.read_bytes())
    return h.hexdigest()


def make_fixtures(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make-fixtures.py"), *args],
                          capture_output=True, text=True, timeout=120, check=True)


def test_make_fixtures_is_deterministic_and_idempotent(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    # 120 songs: the hand-written ones (about 80) plus some generated filler.
    make_fixtures(str(a), "--songs", "120")
    make_fixtures(str(b), "--songs", "120")
    assert tree_digest(a) == tree_digest(b)
    stamp = a / ".make-fixtures.json"
    before = stamp.stat().st_mtime_ns
    out = make_fixtures(str(a), "--songs", "120").stdout
    assert "up to date" in out and stamp.stat().st_mtime_ns == before
    make_fixtures(str(a), "--songs", "121")          # parameters changed: rebuilt
    assert sum(1 for p in a.rglob("*.mp3")) == sum(1 for p in b.rglob("*.mp3")) + 1
    assert (a / "Links" / "loop to root").is_symlink() and (a / ".mpdignore").exists()


def test_make_fixtures_refuses_foreign_dir(tmp_path):
    (tmp_path / "mine.txt").write_text("precious")
    r = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make-fixtures.py"),
                        str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and (tmp_path / "mine.txt").exists()
