"""`getfingerprint` against mpd 0.23.12 on songs of every format (tools/fixtures/fingerprint.py, a library
of its own): the `chromaprint:` lines byte for byte, the errors, command lists, local clients, and which
permission levels list it in `commands` and `notcommands`.

mpd 0.23.12's `getfingerprint` hangs for good on kernels with io_uring whenever its file read is not complete
yet (it waits on an io_uring input stream without a handler that would wake it; fixed upstream later). The
reference mpd here therefore runs with io_uring_setup() refused (mpdtest.deny_io_uring), which makes it read
files with read() as it does on kernels without io_uring; nothing else of its behaviour changes.

Takes about 15 s on a loaded 2-core machine (most of it the two servers fingerprinting the three 130 s songs),
plus about a minute the first time, to make the files.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

import formatcases
import mpdtest
from mpdtest import arg

ROOT = "fingerprint"

#: Every song, one case each: a format, a decoder plugin, a sample format mpd converts differently.
SONGS = [
    "song/song.mp3",           # mad: 24-bit, mpd's dither to 16 bits
    "song/mono-22050.mp3",
    "song/16.flac",
    "song/24.flac",            # 24-bit: dither
    "song/mono-22050.flac",
    "song/song.ogg",           # Vorbis: float, truncated to 16 bits
    "song/48000.ogg",
    "song/song.opus",
    "song/16.wav",             # sndfile: 16-bit
    "song/8.wav",
    "song/24.wav",             # sndfile: 32-bit (dither)
    "song/32.wav",
    "song/float.wav",
    "song/song.m4a",           # FFmpeg (AAC): float
    "song/song.aac",           # faad
    "song/song.wv",            # WavPack
    "song/24.wv",
    "song/song.mpc",           # Musepack: float
    "song/alac16.m4a",         # FFmpeg: planar 16-bit
    "song/alac24.m4a",         # FFmpeg: planar 32-bit (dither)
    "song/song.wma",           # FFmpeg: planar float
    "song/song.ac3",
    "song/song.tta",
    "song/flac.mka",
    "song/song.aiff",          # sndfile
    # Longer than the two minutes mpd feeds.
    "long/long.flac",
    "long/long.mp3",
    "long/long.ogg",
    # Not songs, or broken ones.
    "bad/empty.flac",
    "bad/notes.txt",
    "bad/text.mp3",
    "bad/truncated.ogg",
] + [f"bad/{kind}.{suffix}" for kind in ("empty", "garbage")
     for suffix in ["wv", "aac", "vgm", "nsf", "mod", "it", "sid", "ogg", "opus", "m4a", "wav", "mpc", "dsf", "dff",
                    "mid"]]

ERRORS = {
    "missing file": 'getfingerprint "song/nope.flac"\n',
    "missing file, no suffix": 'getfingerprint "song/nope"\n',
    "suffix of another case": 'getfingerprint "song/16.FLAC"\n',
    "directory": 'getfingerprint "song"\n',
    "empty URI": 'getfingerprint ""\n',
    "dot file": 'getfingerprint ".flac"\n',
    "trailing dot": 'getfingerprint "song."\n',
    "inside a file": 'getfingerprint "song/16.flac/x"\n',
    "inside a file, with a suffix": 'getfingerprint "song/16.flac/x.flac"\n',
    "dot dot": 'getfingerprint "../nope.flac"\n',
    "dot segment": 'getfingerprint "song/./16.flac"\n',
    "double slash": 'getfingerprint "song//16.flac"\n',
    "absolute path over TCP": 'getfingerprint "/etc/passwd"\n',
    "file URI over TCP": 'getfingerprint "file:///etc/passwd"\n',
    "unsupported scheme": 'getfingerprint "foo://x"\n',
    "refused smb share": 'getfingerprint "smb://127.0.0.1:9/share/x.flac"\n',
    "no argument": "getfingerprint\n",
    "two arguments": "getfingerprint a b\n",
    # A failed command list stops at the failing background command; a good one drops the rest of the list.
    "in a list, failing": 'command_list_ok_begin\nping\ngetfingerprint "song/nope.flac"\nping\ncommand_list_end\n'
                          "ping\n",
    "in an OK list": 'command_list_ok_begin\nping\ngetfingerprint "song/16.flac"\nping\ncommand_list_end\nping\n',
    "in a list": 'command_list_begin\nping\ngetfingerprint "song/16.flac"\nstatus\ncommand_list_end\nping\n',
    "pipelined": 'getfingerprint "song/16.flac"\ngetfingerprint "song/song.mp3"\nping\n',
}


@pytest.fixture(scope="module")
def music() -> Path:
    return (formatcases.format_library(ROOT, only=ROOT) / ROOT).resolve()


class Pair:
    def __init__(self, ref, sut, sockets):
        self.ref, self.sut, self.sockets = ref, sut, sockets


@pytest.fixture(scope="module")
def pair(music):
    yield from _pair(music, "fingerprint")


#: Songs of the format library (conftest's `format_music`) in formats the fingerprint library lacks.
OTHER_FORMATS = [
    "dsd/tone-dsd64.dsf",      # DSD through dsd2pcm as 24-bit, then mpd's dither
    "dsd/tone-dsd64.dff",
    "dsd/mono-dsd128.dsf",
]

#: Songs whose reference mpd is slow to stop after answering (see test_fingerprint_of_a_sid_tune).
SLOW_TO_STOP = ["sidplay/one.sid"]


@pytest.fixture(scope="module")
def format_pair(format_music, tmp_path_factory):
    """A pair on copies of OTHER_FORMATS (the whole format library takes mpd long to scan)."""
    yield from _pair(_copies(format_music, tmp_path_factory, OTHER_FORMATS), "fingerprint-formats")


def _copies(format_music, tmp_path_factory, uris) -> Path:
    music = tmp_path_factory.mktemp("fingerprint-formats")
    for uri in uris:
        (music / uri).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(format_music / uri, music / uri)
    return music


def _pair(music, name, kill_reference: bool = False, extra_config: str = ""):
    sut_binary = mpdtest.sut_binary()
    if not sut_binary.exists():
        pytest.skip(f"system under test not found: {sut_binary}")
    sockets = Path(tempfile.mkdtemp(prefix=f"fermata-conformance-{name}-"))
    servers = []
    for role, binary in ((f"ref-{name}", mpdtest.ref_binary()), (f"sut-{name}", sut_binary)):
        server = mpdtest.Server(role, binary, music, Path(tempfile.mkdtemp(prefix=f"fermata-conformance-{role}-")),
                                {"bind_to_address": [mpdtest.HOST, str(sockets / role)]})
        server.deny_io_uring = mpdtest.is_mpd(binary)
        server.extra_config = extra_config
        servers.append(server)
    try:
        for server in servers:
            server.start()
        yield Pair(servers[0], servers[1], {s: sockets / s.role for s in servers})
    finally:
        crashed = []
        for server in servers:
            if kill_reference and server is servers[0] and server.proc is not None:
                server.proc.kill()
                server.proc.wait(timeout=10)
                server.stopped = True
            server.stop()
            if server.crashed:
                crashed.append(server.label)
            else:
                shutil.rmtree(server.workdir, ignore_errors=True)
        shutil.rmtree(sockets, ignore_errors=True)
        assert not crashed, f"{', '.join(crashed)} crashed or exited by itself"


def compare(pair, spec, name):
    """One connection; each server is given until it has answered (decoding takes a while), up to
    mpdtest.SETTLE_MAX, rather than until it is quiet."""
    data = spec.encode()
    case = mpdtest.Case(steps=[mpdtest.Step("a", data, wait=True)], replies=mpdtest.count_replies(data))
    try:
        ref, _ = mpdtest.compare(case, pair.ref, pair.sut, name)
    except mpdtest.DifferentialMismatch as exc:
        pytest.fail(str(exc), pytrace=False)
    # Two transcripts of the greeting alone would be equal too.
    assert ref.replies >= 1, f"mpd did not answer {spec!r} in time"


#: Fingerprints Fermata is known to compute differently from mpd's (none now).
EXPECTED_FAILURES: dict[str, str] = {}


def _song(uri):
    if uri in EXPECTED_FAILURES:
        return pytest.param(uri, marks=pytest.mark.xfail(
            reason=EXPECTED_FAILURES[uri], strict=not mpdtest.is_mpd(mpdtest.sut_binary())))
    return uri


@pytest.mark.parametrize("uri", [_song(uri) for uri in SONGS])
def test_fingerprint(pair, uri):
    compare(pair, f"getfingerprint {arg(uri)}\n", uri)


@pytest.mark.parametrize("uri", OTHER_FORMATS)
def test_fingerprint_of_other_formats(format_pair, uri):
    compare(format_pair, f"getfingerprint {arg(uri)}\n", uri)


def test_fingerprint_of_a_sid_tune(format_music, tmp_path_factory):
    """A SID tune through the sidplay plugin, 20 s long by `default_songlength` (emulating the two minutes
    that are fed otherwise takes mpd about 12 s and Fermata about 20 under load). mpd's sidplay decoder goes
    on emulating after the command was answered and mpd does not exit before it is done, so the reference is
    killed, not stopped. About 8 s."""
    blocks = 'decoder {\n  plugin "sidplay"\n  default_songlength "20"\n}\n'
    for pair in _pair(_copies(format_music, tmp_path_factory, SLOW_TO_STOP), "fingerprint-sid",
                      kill_reference=True, extra_config=blocks):
        for uri in SLOW_TO_STOP:
            data = f"getfingerprint {arg(uri)}\n".encode()
            case = mpdtest.Case(steps=[mpdtest.Step("a", data, wait=True, wait_max=60)], replies=1)
            try:
                ref, _ = mpdtest.compare(case, pair.ref, pair.sut, uri)
            except mpdtest.DifferentialMismatch as exc:
                pytest.fail(str(exc), pytrace=False)
            received = b"".join(event[3] for event in ref.events if event[0] == "recv")
            assert b"\nchromaprint: AQA" in received, received


def test_fingerprint_of_opus_songs_shorter_than_two_minutes(tmp_path_factory):
    """mpd's opus plugin ends a seekable file by throwing StopDecoder (its `OnOggEnd`), which getfingerprint
    catches before `chromaprint_finish`: what libchromaprint still buffers is left out of the fingerprint (a 4 s
    song gives 6 items where the whole song gives 11). Songs of 4 and 10 s, and one of 2.5 min that reaches the
    two minutes first (then mpd finishes). About 6 s."""
    import audiofiles
    audiofiles.require_tools("sox", "opusenc")
    music = tmp_path_factory.mktemp("fingerprint-opus")
    for seconds in (4, 10, 150):
        wav = music / f"{seconds}.wav"
        subprocess.run(["sox", "-n", "-r", "48000", "-b", "16", "-c", "2", str(wav), "synth", str(seconds),
                        "sine", "300-3000", "vol", "0.5"], check=True, timeout=60)
        subprocess.run(["opusenc", "--quiet", str(wav), str(music / f"{seconds}.opus")], check=True, timeout=120)
        wav.unlink()
    for pair in _pair(music, "fingerprint-opus"):
        for seconds in (4, 10, 150):
            compare(pair, f"getfingerprint {arg(f'{seconds}.opus')}\n", f"{seconds} s")


def test_every_fixture_is_tried(music):
    on_disk = sorted(str(p.relative_to(music)) for p in music.rglob("*") if p.is_file())
    assert on_disk == sorted(SONGS)


def test_fingerprints_are_not_empty(pair):
    """The songs are long enough for a real fingerprint (mpd answers `AQAAAA` for a second of audio), and
    the long ones differ from the short ones (two minutes are fed, not all of them)."""
    short = pair.sut.query('getfingerprint "song/16.flac"', timeout=30)
    long = pair.sut.query('getfingerprint "long/long.flac"', timeout=30)
    assert short.startswith(b"chromaprint: AQAA") and len(short) > 100, short
    assert long.startswith(b"chromaprint: AQAD") and long != short, long


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(pair, name):
    compare(pair, ERRORS[name], name)


def _local(path: Path, text: str) -> bytes:
    """`text` sent over the Unix socket at `path` (a local client); the replies up to the last OK or ACK."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(str(path))
        f = s.makefile("rb")
        f.readline()
        s.sendall(text.encode())
        out = b""
        for _ in range(text.count("\n")):
            while True:
                line = f.readline()
                out += line
                if not line or line == b"OK\n" or line.startswith(b"ACK "):
                    break
        return out


@pytest.mark.parametrize("form", ["absolute", "file URI", "missing", "not a song", "unreadable dir"])
def test_local_client(pair, music, form):
    """A local client may name files by absolute path and `file://` URI, inside the music directory or out."""
    path = {"absolute": f"{music}/song/song.ogg", "file URI": f"file://{music}/song/24.flac",
            "missing": f"{music}/nope.flac", "not a song": f"{music}/bad/notes.txt",
            "unreadable dir": "/proc/self/nope.flac"}[form]
    text = f"getfingerprint {arg(path)}\n"
    replies = [_local(pair.sockets[s], text) for s in (pair.ref, pair.sut)]
    assert replies[1] == replies[0], f"mpd: {replies[0]!r}\nsut: {replies[1]!r}"


PASSWORDS = ["ro@read", "adder@add", "ctl@control", "root@read,add,player,control,admin"]


@pytest.fixture(scope="module")
def empty_music(tmp_path_factory):
    return tmp_path_factory.mktemp("fingerprint-perm-music")


@pytest.mark.parametrize("level", [None, "ro", "adder", "ctl", "root"], ids=lambda x: x or "none")
def test_permission_levels(server_pair, empty_music, level):
    """Who may run it (`read`), where `commands` and `notcommands` list it: mpd's lists, restricted to the
    commands both servers know, are the same, in the same order."""
    servers = server_pair(empty_music, password=PASSWORDS)
    servers.require_sut()
    login = f"password {level}\n" if level else ""
    both = mpdtest.known_commands(servers.ref) & mpdtest.known_commands(servers.sut)
    assert "getfingerprint" in both
    lists = []
    for server in (servers.ref, servers.sut):
        with server.connect() as c:
            if level:
                c.send(login)
                assert c.read_reply() == b"OK\n"
            c.send("commands\n")
            listed = [n for n in mpdtest.command_names(c.read_reply()) if n in both]
            c.send("notcommands\n")
            unlisted = [n for n in mpdtest.command_names(c.read_reply()) if n in both]
            c.send('getfingerprint "x.flac"\n')
            answer = c.read_reply()
        lists.append((listed, unlisted, answer))
    assert lists[1] == lists[0]


def test_client_leaving_mid_computation(pair):
    """Clients that close while their song is decoded: the server drops the work and goes on serving."""
    for server in (pair.ref, pair.sut):
        for _ in range(3):
            with socket.create_connection((mpdtest.HOST, server.port), timeout=10) as s:
                s.recv(64)
                s.sendall(b'getfingerprint "long/long.opus"\n')
        assert server.query("ping", timeout=10) == b"OK\n"
        assert server.query('getfingerprint "song/16.flac"', timeout=30).startswith(b"chromaprint: AQAA")
        assert server.alive()
