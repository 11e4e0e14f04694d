"""The shout output into a real Icecast: the test starts Debian's icecast2 on 127.0.0.1 (its own config, as
`nobody` when run as root, since icecast2 refuses root), and a Fermata with two shout outputs (`lame` to an
MP3 mount, `vorbis` through the older `encoding "ogg"` to an Ogg mount) playing the tones of test_httpd.py.
A listener of each mount gets audio that decodes (ffmpeg) to the playing tone, and Icecast's stream title
follows the song."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from xml.etree import ElementTree

import pytest

import conftest
import mpdtest
from test_httpd import TONES, assert_tones, decode, elapsed, httpd_music, read_for, request  # noqa: F401

HOST = mpdtest.HOST
PASSWORD = "fermata-test"

ICECAST_CONFIG = """<icecast>
    <limits><clients>20</clients><sources>4</sources><burst-on-connect>1</burst-on-connect>
        <source-timeout>10</source-timeout></limits>
    <authentication><source-password>{password}</source-password><admin-user>admin</admin-user>
        <admin-password>{password}</admin-password></authentication>
    <hostname>127.0.0.1</hostname>
    <listen-socket><port>{port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
    <fileserve>1</fileserve>
    <paths><basedir>{root}</basedir><logdir>{root}</logdir><webroot>/usr/share/icecast2/web</webroot>
        <adminroot>/usr/share/icecast2/admin</adminroot></paths>
    <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel></logging>
    <security><chroot>0</chroot>{owner}</security>
    <mount><mount-name>/ref-long.mp3</mount-name><charset>UTF-8</charset></mount>
    <mount><mount-name>/sut-long.mp3</mount-name><charset>UTF-8</charset></mount>
</icecast>
"""


@pytest.fixture(scope="module")
def icecast():
    binary = shutil.which("icecast2")
    if binary is None:
        pytest.skip("icecast2 is not installed (scripts/install-deps.sh test installs it)")
    # Not under pytest's own temporary directory, which `nobody` cannot enter.
    root = conftest._workdir("icecast")
    os.chmod(root, 0o777)
    port = mpdtest.free_port()
    owner = "<changeowner><user>nobody</user><group>nogroup</group></changeowner>" if os.getuid() == 0 else ""
    config = root / "icecast.xml"
    config.write_text(ICECAST_CONFIG.format(password=PASSWORD, port=port, root=root, owner=owner))
    proc = subprocess.Popen([binary, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)

    def up():
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/status-json.xsl", timeout=1):
                return True
        except OSError:
            return False

    if not mpdtest.wait_until(up, timeout=10):
        proc.kill()
        log = root / "error.log"
        pytest.fail(f"icecast2 did not start: {log.read_text(errors='replace')[-2000:] if log.exists() else ''}")
    yield port
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(root, ignore_errors=True)


def sources(port: int) -> dict[str, dict]:
    """Icecast's sources by mount."""
    with urllib.request.urlopen(f"http://{HOST}:{port}/status-json.xsl", timeout=2) as reply:
        stats = json.loads(reply.read().decode("utf-8", "replace"))["icestats"]
    found = stats.get("source", [])
    if isinstance(found, dict):
        found = [found]
    return {source["listenurl"].rsplit("/", 1)[1]: source for source in found}


def listed(port: int, mount: str) -> bool:
    """Whether Icecast lists the mount, read off its status as raw bytes: a title cut inside a UTF-8 sequence
    (test_a_long_title_is_cut_at_1023_bytes_as_mpd) can leave Icecast's JSON unreadable while that source lives."""
    with urllib.request.urlopen(f"http://{HOST}:{port}/status-json.xsl", timeout=2) as reply:
        return f'/{mount}"'.encode() in reply.read()


def title_of(source: dict) -> str:
    """The stream title Icecast shows: `artist - title` (MP3 metadata) or its Ogg comments'."""
    title = str(source.get("title", ""))
    artist = str(source.get("artist", ""))
    return f"{artist} - {title}" if artist and artist not in title else title


@pytest.fixture(scope="module")
def shouting(icecast, httpd_music):
    binary = mpdtest.sut_binary()
    if not binary.exists():
        pytest.skip(f"system under test not found: {binary}")
    server = mpdtest.Server("sut-shout", binary, httpd_music, conftest._workdir("sut"))
    common = {"type": "shout", "host": HOST, "port": str(icecast), "password": PASSWORD, "format": "44100:16:2"}
    server.outputs = [
        {**common, "name": "Fermata MP3", "mount": "/fermata.mp3", "encoder": "lame", "bitrate": "128",
         "genre": "Tones", "description": "test tones"},
        {**common, "name": "Fermata Ogg", "mount": "/fermata.ogg", "encoding": "ogg", "quality": "4"},
    ]
    conftest._start([server])
    server.query("repeat 1")
    for index in range(len(TONES)):
        server.query(f'add "{index}-tone.mp3"')
    server.query("play 1")
    assert mpdtest.wait_until(lambda: {"fermata.mp3", "fermata.ogg"} <= set(sources(icecast)), timeout=10), \
        f"mounts: {sorted(sources(icecast))}\n{server.log_tail()}"
    yield server, icecast
    conftest._stop(server)


def listen(port: int, mount: str, seconds: float) -> bytes:
    sock, head = request(port, path=f"/{mount}")
    assert head.startswith(b"HTTP/1.") and b" 200 " in head.split(b"\r\n", 1)[0], head
    data = read_for(sock, seconds)
    sock.close()
    return data


@pytest.mark.parametrize("mount", ["fermata.mp3", "fermata.ogg"])
def test_a_listener_of_the_mount_hears_the_playing_song(shouting, mount):
    server, port = shouting
    samples = decode(listen(port, mount, 2.5))
    # Icecast's burst on connect gives a listener some of the past too: at least 1.5 s in 2.5 s.
    assert len(samples) / 8000 >= 1.5, f"{len(samples) / 8000:.2f} s of audio"
    assert_tones(samples)
    source = sources(port)[mount]
    assert source["server_name"] == ("Fermata MP3" if mount.endswith("mp3") else "Fermata Ogg")
    if mount.endswith("mp3"):
        assert source["genre"] == "Tones" and source["server_description"] == "test tones"


def test_the_stream_title_follows_the_song(shouting):
    server, port = shouting
    server.query("play 0")
    for mount in ("fermata.mp3", "fermata.ogg"):
        assert mpdtest.wait_until(lambda: "First Tone" in title_of(sources(port)[mount]), timeout=5), \
            f"{mount}: {title_of(sources(port)[mount])!r}"
    server.query("next")
    for mount in ("fermata.mp3", "fermata.ogg"):
        assert mpdtest.wait_until(lambda: "Second Tone" in title_of(sources(port)[mount]), timeout=5), \
            f"{mount}: {title_of(sources(port)[mount])!r}"
    assert title_of(sources(port)["fermata.mp3"]) == "Tone Maker - Second Tone"


def test_stop_ends_the_source_and_play_brings_it_back(shouting):
    server, port = shouting
    server.query("stop")
    assert mpdtest.wait_until(lambda: "fermata.mp3" not in sources(port), timeout=5), sorted(sources(port))
    server.query("play 2")
    assert mpdtest.wait_until(lambda: "fermata.mp3" in sources(port), timeout=10), sorted(sources(port))
    assert_tones(decode(listen(port, "fermata.mp3", 2.0)))


def _admin_title(port: int, mount: str) -> str | None:
    """The title of a mount in Icecast's admin statistics (XML: its status-json.xsl writes a title ` - ` unquoted,
    which is not JSON): "" when it has none; `None` when there is no such mount."""
    request = urllib.request.Request(f"http://{HOST}:{port}/admin/stats")
    request.add_header("Authorization", "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode())
    with urllib.request.urlopen(request, timeout=2) as reply:
        root = ElementTree.fromstring(reply.read())
    for source in root.iter("source"):
        if source.get("mount") == f"/{mount}":
            title = source.find("title")
            return "" if title is None else (title.text or "")
    return None


def _mp3_sources(icecast: int, music: Path, label: str) -> dict[str, mpdtest.Server]:
    """An mpd ("ref") and a Fermata ("sut") on `music`, not started yet, each with a shout output (lame) to a
    mount of its own on `icecast`: /ref-LABEL.mp3 and /sut-LABEL.mp3."""
    servers = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", mpdtest.sut_binary())):
        if not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        server = mpdtest.Server(f"{kind}-shout-{label}", binary, music, conftest._workdir(kind))
        server.outputs = [{"type": "shout", "host": HOST, "port": str(icecast), "password": PASSWORD,
                           "name": f"{kind} MP3", "mount": f"/{kind}-{label}.mp3", "encoder": "lame",
                           "bitrate": "128", "format": "44100:16:2"}]
        servers[kind] = server
    return servers


def _title_of_each(servers: dict[str, mpdtest.Server], song: str, title) -> dict:
    """Starts `servers`, has each play `song` on repeat, one after the other, and gives `title(kind, server)` of
    each once it plays; stops them."""
    titles = {}
    try:
        conftest._start(list(servers.values()))
        for kind, server in servers.items():
            server.query(f'command_list_begin\nrepeat 1\nadd "{song}"\nplay\ncommand_list_end\n')
            titles[kind] = title(kind, server)
    finally:
        for server in servers.values():
            conftest._stop(server)
    return titles


def test_a_song_without_tags_sets_the_title_as_mpd(icecast, httpd_music):
    """A local file without tags (radio.mp3) gives its output an empty tag as it starts: mpd sends the MP3 mount
    libshout's metadata `song` ` - ` (artist and title, both empty), and Icecast shows it as the title. An mpd and
    a Fermata, each with a mount of its own: the same title."""
    def title(kind: str, server: mpdtest.Server) -> str | None:
        mount = f"{kind}-untagged.mp3"
        assert mpdtest.wait_until(lambda: _admin_title(icecast, mount) is not None, timeout=10), server.log_tail()
        mpdtest.wait_until(lambda: _admin_title(icecast, mount), timeout=5)
        return _admin_title(icecast, mount)

    titles = _title_of_each(_mp3_sources(icecast, httpd_music, "untagged"), "radio.mp3", title)
    assert titles["ref"] is not None, titles
    assert titles["sut"] == titles["ref"]


def _icy_title(port: int, mount: str) -> bytes:
    """The first ICY metadata block a listener of `mount` gets from Icecast (`StreamTitle='…';`, as sent)."""
    sock, head = request(port, path=f"/{mount}", icy=True)
    try:
        found = re.search(rb"(?i)icy-metaint:\s*(\d+)", head)
        assert found, head
        interval = int(found.group(1))
        data = b""
        while True:
            while len(data) < interval + 1 or len(data) < interval + 1 + data[interval] * 16:
                chunk = sock.recv(65536)
                assert chunk, "the stream ended"
                data += chunk
            length = data[interval] * 16
            if length:
                return data[interval + 1:interval + 1 + length].rstrip(b"\0")
            data = data[interval + 1:]
    finally:
        sock.close()


def test_a_long_title_is_cut_at_1023_bytes_as_mpd(icecast, tmp_path):
    """mpd writes the MP3 mount's `song` metadata (`artist - title`) into a 1024-byte buffer: a longer one is cut
    at 1023 bytes, here inside a two-byte UTF-8 sequence. An mpd and a Fermata, each with a mount of its own on one
    Icecast (mounts whose charset is UTF-8, so that Icecast passes the bytes on as they came), playing a song whose
    title is 1 + 600 × 2 bytes: a listener asking for ICY metadata gets the same `StreamTitle` from both, ending in
    the first byte of a cut `é`."""
    music = tmp_path / "music"
    music.mkdir()
    title = "x" + "é" * 600
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=20",
                    "-ac", "2", "-metadata", "artist=Tone Maker", "-metadata", f"title={title}",
                    str(music / "long.flac")], check=True, capture_output=True)
    def stream_title(kind: str, server: mpdtest.Server) -> bytes:
        mount = f"{kind}-long.mp3"
        assert mpdtest.wait_until(lambda: listed(icecast, mount), timeout=10), server.log_tail()
        seen = []

        def titled() -> bool:
            seen.append(_icy_title(icecast, mount))
            return b"Tone Maker" in seen[-1]
        assert mpdtest.wait_until(titled, timeout=10), (seen[-1:], server.log_tail())
        return seen[-1]

    titles = _title_of_each(_mp3_sources(icecast, music, "long"), "long.flac", stream_title)
    assert titles["ref"] == b"StreamTitle='" + f"Tone Maker - {title}".encode()[:1023] + b"';"
    assert titles["ref"].endswith(b"\xc3';")
    assert titles["sut"] == titles["ref"]


class _RefusingSourceServer:
    """A source server of our own on 127.0.0.1 that takes a `SOURCE` request as Icecast does (`401` to libshout's
    first try without credentials, `200 OK` with them, then reads and drops the stream) and answers everything else,
    libshout's metadata updates (`GET /admin/metadata…`), with `403`: the update fails as where a server refuses
    it."""

    def __init__(self):
        self.listener = socket.create_server((HOST, 0))
        self.port = self.listener.getsockname()[1]
        self.requests: list[bytes] = []
        self.closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            head = b""
            conn.settimeout(5)
            try:
                while b"\r\n\r\n" not in head:
                    data = conn.recv(4096)
                    if not data:
                        break
                    head += data
            except OSError:
                conn.close()
                continue
            self.requests.append(head.split(b"\r\n", 1)[0])
            if head.startswith(b"SOURCE ") and b"\r\nauthorization: basic " not in head.lower():
                conn.sendall(b"HTTP/1.0 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
                conn.close()
            elif head.startswith(b"SOURCE "):
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n")
                threading.Thread(target=self._drain, args=(conn,), daemon=True).start()
            else:
                conn.sendall(b"HTTP/1.0 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                conn.close()

    @staticmethod
    def _drain(conn):
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass
        conn.close()

    def close(self):
        self.closed = True
        self.listener.close()


def test_a_refused_metadata_update_is_logged_as_mpd(httpd_music):
    """A server that takes the stream but refuses libshout's metadata update: both log `shout_output: error
    setting shout metadata` as the song starts, and stream on."""
    logged = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", mpdtest.sut_binary())):
        if not binary.exists():
            pytest.skip(f"server not found: {binary}")
        fake = _RefusingSourceServer()
        server = mpdtest.Server(f"{kind}-shout-refused", binary, httpd_music, conftest._workdir(kind))
        server.outputs = [{"type": "shout", "host": HOST, "port": str(fake.port), "password": PASSWORD,
                           "name": f"{kind} MP3", "mount": "/refused.mp3", "encoder": "lame", "bitrate": "128",
                           "format": "44100:16:2"}]
        try:
            conftest._start([server])
            server.query('command_list_begin\nrepeat 1\nadd "0-tone.mp3"\nplay\ncommand_list_end\n')
            found = lambda: mpdtest.log_matches(  # noqa: E731
                server.log_path.read_text(errors="replace"), r"\b(shout_output: error setting shout metadata)$")
            mpdtest.wait_until(lambda: found() and any(b"metadata" in r for r in fake.requests), timeout=10)
            logged[kind] = (found()[:1], sorted({r.split(b" ", 1)[0] for r in fake.requests}))
        finally:
            conftest._stop(server)
            fake.close()
    assert logged["ref"][0] == ["shout_output: error setting shout metadata"], logged
    assert logged["sut"] == logged["ref"]
