"""`decoder { … }` blocks in the configuration: mpd 0.23.12's decoder_plugin_init_all.

Each pair of servers runs on the multi-format library with the same decoder blocks: a disabled plugin
is absent from `decoders` and no longer scans or plays its files (the next plugin for the suffix takes
them, or nobody does), gme's `default_fade` lengthens what `status` reports while a chiptune plays, and
blocks for unknown plugins, repeated blocks and unread keys change nothing.  Bad blocks stop both
servers at start-up with mpd's message.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

import conftest
import formatcases
import mpdtest

#: ffmpeg off: the m4a, mka, wma… files are no songs any more; gme with a 3 s fade and accurate emulation;
#: a block for a plugin neither has, a second gme block (ignored), an unread key (warned about).
NO_FFMPEG = """
decoder {
    plugin "ffmpeg"
    enabled "no"
}
decoder {
    plugin "gme"
    default_fade "3"
    accuracy "yes"
    junk "1"
}
decoder {
    plugin "gme"
    default_fade "20"
}
decoder {
    plugin "nosuch"
    enabled "maybe"
}
"""

#: sndfile, wavpack and mad off: FFmpeg reads the WAV, AIFF and WavPack files instead.
FFMPEG_TAKES_OVER = """
decoder {
    plugin "sndfile"
    enabled "no"
}
decoder {
    plugin "wavpack"
    enabled "false"
}
decoder {
    plugin "mad"
    enabled "no"
}
"""


#: a probesize libavformat cannot parse: every file FFmpeg would open fails (so FFmpeg reads nothing).
BAD_PROBESIZE = """
decoder {
    plugin "ffmpeg"
    probesize "abc"
    analyzeduration "5000000"
}
"""

#: hybrid_dsd on (it is off by default): the Hybrid-DSD M4A files play their DSD part.
HYBRID_DSD = """
decoder {
    plugin "hybrid_dsd"
    enabled "yes"
}
"""
HYBRID_FILES = ("dsd64-stereo.m4a", "dsd128-mono.m4a", "cut.m4a", "dst.m4a", "version2.m4a", "no-version.m4a",
                "plain-alac.m4a")

@pytest.fixture(scope="module")
def pairs(format_music):
    """One mpd and one Fermata for each block set, started on first use."""
    started: dict[str, conftest.Servers] = {}
    servers: list[mpdtest.Server] = []

    def get(name: str, blocks: str) -> conftest.Servers:
        if name in started:
            return started[name]
        ref = mpdtest.Server(f"ref-{name}", mpdtest.ref_binary(), format_music, conftest._workdir("ref"))
        sut_binary = mpdtest.sut_binary()
        if not sut_binary.exists():
            pytest.skip(f"system under test not found: {sut_binary}")
        sut = mpdtest.Server(f"sut-{name}", sut_binary, format_music, conftest._workdir("sut"))
        for server in (ref, sut):
            server.extra_config = blocks
        servers.extend([ref, sut])
        conftest._start([ref, sut], songs_hint_from=ref)
        started[name] = conftest.Servers(ref, sut)
        return started[name]

    yield get
    for server in servers:
        conftest._stop(server)


def _decoders(server) -> bytes:
    return server.query("decoders")


@pytest.mark.parametrize("name, blocks", [("no-ffmpeg", NO_FFMPEG), ("ffmpeg-takes-over", FFMPEG_TAKES_OVER),
                                         ("hybrid-dsd", HYBRID_DSD)])
def test_decoders(pairs, name, blocks):
    pair = pairs(name, blocks)
    ref, sut = _decoders(pair.ref), _decoders(pair.sut)
    assert sut == ref, f"{name}: mpd {ref.decode()}\nFermata {sut.decode()}"


@pytest.mark.parametrize("directory", ["ffmpeg/m4a", "ffmpeg/other", "pcmfiles/wav", "trackers", "dsd"])
def test_browse_without_ffmpeg(pairs, directory):
    pair = pairs("no-ffmpeg", NO_FFMPEG)
    formatcases.browse(pair, directory)


@pytest.mark.parametrize("directory", ["pcmfiles/wav", "pcmfiles/aiff", "pcmfiles/wavpack", "pcmfiles/tags"])
def test_browse_when_ffmpeg_takes_over(pairs, directory):
    pair = pairs("ffmpeg-takes-over", FFMPEG_TAKES_OVER)
    formatcases.browse(pair, directory)


@pytest.mark.parametrize("directory", ["ffmpeg/m4a", "ffmpeg/other"])
def test_browse_with_a_bad_probesize(pairs, directory):
    formatcases.browse(pairs("bad-probesize", BAD_PROBESIZE), directory)


def _stats_songs(server) -> str | None:
    return mpdtest.parse_pairs(server.query("stats")).get("songs")


def test_stats_count_only_songs_some_plugin_reads(pairs):
    for name, blocks in (("no-ffmpeg", NO_FFMPEG), ("ffmpeg-takes-over", FFMPEG_TAKES_OVER)):
        pair = pairs(name, blocks)
        # mpd caches its database statistics and refreshes them from its main loop after an update ends, so
        # right after start-up they may still count the songs of the unfinished scan: wait until they agree
        # with its listing.
        listed = str(sum(1 for line in pair.ref.query("listall").split(b"\n") if line.startswith(b"file: ")))
        mpdtest.wait_until(lambda: _stats_songs(pair.ref) == listed, 5)
        counts = [_stats_songs(s) for s in (pair.ref, pair.sut)]
        assert counts[0] == counts[1], f"{name}: mpd has {counts[0]} songs, Fermata {counts[1]}"


def _status_while_playing(server, uri: str, elapsed: float = 0.3) -> dict[str, str]:
    with server.connect() as c:
        for line in ("clear", f'add "{uri}"', "play"):
            reply = c.command(line)
            assert not reply.startswith(b"ACK"), f"{server.label}: {line!r} -> {reply!r}"
    deadline = time.monotonic() + mpdtest.scaled(10)
    status: dict[str, str] = {}
    while time.monotonic() < deadline:
        status = mpdtest.parse_pairs(server.query("status"))
        if status.get("state") == "play" and "duration" in status and float(status.get("elapsed", "0")) > elapsed:
            break
        time.sleep(0.05)
    with server.connect() as c:
        c.command("stop")
        c.command("clear")
    return status


def test_gme_default_fade_lengthens_the_playing_song(pairs):
    pair = pairs("no-ffmpeg", NO_FFMPEG)
    got = [_status_while_playing(s, "trackers/psg.vgm").get("duration") for s in (pair.ref, pair.sut)]
    assert got[0] is not None and got[1] == got[0], f"mpd {got[0]}, Fermata {got[1]}"


def test_browse_hybrid_dsd(pairs):
    """No scan of its own: the library has what FFmpeg reads (the ALAC part)."""
    formatcases.browse(pairs("hybrid-dsd", HYBRID_DSD), "hybriddsd")


@pytest.mark.parametrize("name", HYBRID_FILES)
def test_hybrid_dsd_plays_the_dsd_part(pairs, name):
    """The DSD part's format, length and bit rate while playing; the files the plugin refuses play as ALAC."""
    pair = pairs("hybrid-dsd", HYBRID_DSD)
    got = []
    for server in (pair.ref, pair.sut):
        status = _status_while_playing(server, f"hybriddsd/{name}", elapsed=0.1)
        got.append({k: status.get(k) for k in ("state", "audio", "duration", "bitrate")})
    if got[0]["audio"] and got[0]["audio"].startswith("44100"):
        got[0].pop("bitrate"), got[1].pop("bitrate")     # ALAC's bit rate varies per chunk
    assert got[1] == got[0], f"{name}: mpd {got[0]}, Fermata {got[1]}"


def _start_up(binary: Path, blocks: str, tmp: Path) -> tuple[int, str]:
    """Runs a server on a configuration that must fail; its exit status and output."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "music").mkdir(exist_ok=True)
    conf = tmp / "server.conf"
    conf.write_text("\n".join([
        f'music_directory "{tmp / "music"}"', f'db_file "{tmp / "db"}"', 'bind_to_address "127.0.0.1"',
        f'port "{mpdtest.free_port()}"', 'zeroconf_enabled "no"',
        'audio_output {', '    type "null"', '    name "n"', '}', blocks]) + "\n")
    command = ([str(binary), "--no-daemon", "--stderr", str(conf)] if mpdtest.is_mpd(binary)
               else [str(binary), str(conf)])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=mpdtest.scaled(10),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{binary} started on a bad decoder block:\n{blocks}", pytrace=False)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("blocks, message", [
    ('decoder {\n    enabled "no"\n}', "block without 'plugin' in line 10"),
    ('decoder {\n    plugin "flac"\n    enabled "maybe"\n}',
     'Error in setting "enabled" on line 12; Not a valid boolean ("yes" or "no"): "maybe"'),
    ('decoder {\n    plugin "gme"\n    default_fade "abc"\n}',
     "Failed to initialize decoder plugin 'gme'; Error in setting \"default_fade\" on line 12; "
     "Failed to parse number"),
    ('decoder {\n    plugin "gme"\n    default_fade "-1"\n}',
     "Failed to initialize decoder plugin 'gme'; Error in setting \"default_fade\" on line 12; "
     "Value must not be negative"),
])
def test_bad_blocks_stop_both_at_start_up(tmp_path, blocks, message):
    sut_binary = mpdtest.sut_binary()
    if not sut_binary.exists():
        pytest.skip(f"system under test not found: {sut_binary}")
    for binary in (mpdtest.ref_binary(), sut_binary):
        status, output = _start_up(binary, blocks, tmp_path / binary.name)
        assert status == 1, f"{binary}: status {status}\n{output}"
        assert message in output, f"{binary}: {message!r} not in\n{output}"
