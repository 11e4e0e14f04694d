"""`rtsp://` streams (issue 13): mpd's ffmpeg decoder plugin opens them itself, with libavformat's rtsp demuxer,
before any input plugin is asked (its `TryUriDecode`); `urlhandlers` lists `rtsp://` and `rtsps://` for it.

tools/rtspserver.py serves a WAV file's samples as RTP L16 over the RTSP connection on 127.0.0.1; both servers
get the same URLs, and what they answer (and play) is compared. A station that never sends is a case only
Fermata can pass: mpd's plugin gives libavformat no interrupt callback, so its player waits on the read.
"""

from __future__ import annotations

import math
import struct
import subprocess
import sys
import time
import wave

import pytest

import mpdtest
from mpdtest import REPO_ROOT

#: The tone: 44.1 kHz, 16-bit stereo, 2 s (the left channel 440 Hz, the right 660 Hz).
SECONDS = 2


def _tone(path) -> bytes:
    frames = bytearray()
    for n in range(44100 * SECONDS):
        left = int(12000 * math.sin(2 * math.pi * 440 * n / 44100))
        right = int(12000 * math.sin(2 * math.pi * 660 * n / 44100))
        frames += struct.pack("<hh", left, right)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(bytes(frames))
    return bytes(frames)


@pytest.fixture(scope="module")
def rtsp(tmp_path_factory):
    """(`rtsp://127.0.0.1:PORT`, the tone's samples as little-endian 16-bit frames)."""
    root = tmp_path_factory.mktemp("rtsp")
    samples = _tone(root / "tone.wav")
    port_file = root / "port"
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "tools" / "rtspserver.py"), "--root", str(root),
                             "--port-file", str(port_file), "--lifetime", "600"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert mpdtest.wait_until(port_file.exists, 10), "rtspserver did not start"
    yield f"rtsp://127.0.0.1:{port_file.read_text().strip()}", samples
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def pair(server_pair, tmp_path_factory):
    servers = server_pair(tmp_path_factory.mktemp("rtsp-music"))
    servers.require_sut()
    return servers


def _status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def _settled(reply: bytes) -> list[str]:
    return [line for line in reply.decode().splitlines() if not line.startswith(("elapsed: ", "time: "))]


def test_an_rtsp_stream_plays_as_in_mpd(server_factory, rtsp, tmp_path):
    """`add`, `playlistinfo`, then `play`: both servers show the stream as mpd does (`audio: 44100:16:2`, the
    bit rate of L16, no duration), play every sample of the tone through a pipe output unchanged, and stop
    without an error at the stream's end. About 6 s."""
    base, samples = rtsp
    url = f"{base}/tone.wav"
    got: dict[str, dict[str, object]] = {}
    for kind in ("ref", "sut"):
        record = tmp_path / f"{kind}.raw"
        record.write_bytes(b"")
        server = server_factory(kind, music=tmp_path, outputs=[
            {"type": "pipe", "name": "p", "command": f"cat >> {record}"}])
        got[kind] = {"queued": server.query(f"command_list_begin\nadd {mpdtest.arg(url)}\nplaylistinfo\n"
                                            "command_list_end\n")}
        server.query("play")
        assert mpdtest.wait_until(lambda: float(_status(server).get("elapsed", "0")) > 0.3, mpdtest.scaled(10)), \
            (kind, _status(server))
        got[kind]["playing"] = _settled(server.query("command_list_begin\nstatus\ncurrentsong\ncommand_list_end\n"))
        assert mpdtest.wait_until(lambda: _status(server).get("state") == "stop", mpdtest.scaled(15)), kind
        got[kind]["after"] = {k: _status(server).get(k) for k in ("state", "song", "error")}
        size = -1
        while size != record.stat().st_size:    # the pipe's reader may still be writing
            size = record.stat().st_size
            time.sleep(mpdtest.scaled(0.3))
        got[kind]["samples"] = record.read_bytes() == samples
    assert got["sut"] == got["ref"]
    assert got["ref"]["samples"] is True and "audio: 44100:16:2" in got["ref"]["playing"], got["ref"]


@pytest.mark.parametrize("path", ["missing", "refused"])
def test_a_failing_rtsp_url_stops_with_mpds_error(pair, rtsp, path):
    """A 404 from the RTSP server and a refused connection: mpd's `error:` (`Failed to decode URL;
    avformat_open_input() failed: …`), and the player stops."""
    url = "rtsp://127.0.0.1:1/x" if path == "refused" else f"{rtsp[0]}/{path}"
    got = {}
    for server in (pair.ref, pair.sut):
        server.query(f"command_list_begin\nclear\nadd {mpdtest.arg(url)}\nplay\ncommand_list_end\n")
        assert mpdtest.wait_until(lambda: "error" in _status(server), mpdtest.scaled(10)), server.label
        s = _status(server)
        got[server.label] = {k: s.get(k) for k in ("state", "song", "error")}
        server.query("command_list_begin\nclearerror\nclear\ncommand_list_end\n")
    assert got[pair.sut.label] == got[pair.ref.label]
    assert "avformat_open_input() failed" in got[pair.ref.label]["error"]


def test_rtsp_urls_have_no_input_plugin(pair, rtsp):
    """Only playback opens `rtsp://` through the decoder plugin: `lsinfo` (a tag scan) and `getfingerprint` go
    through the input plugins, which have none for it, as in mpd."""
    url = mpdtest.arg(f"{rtsp[0]}/tone.wav")
    spec = f"lsinfo {url}\ngetfingerprint {url}\nadd {mpdtest.arg('rtsps://127.0.0.1:1/x')}\n"
    mpdtest.compare(mpdtest.make_case(spec, replies="auto"), pair.ref, pair.sut, "rtsp without an input plugin")


def test_a_disabled_ffmpeg_decoder_takes_rtsp_away(server_factory):
    """`decoder { plugin "ffmpeg" enabled "no" }`: `urlhandlers` has no `rtsp://` (the ffmpeg input plugin still
    lists `rtp://`), and `add` refuses it, as in mpd."""
    block = 'decoder {\n    plugin "ffmpeg"\n    enabled "no"\n}\n'
    ref = server_factory("ref", extra_config=block)
    sut = server_factory("sut", extra_config=block)
    spec = "add rtsp://127.0.0.1:1/x\nadd rtsps://127.0.0.1:1/x\nadd rtp://127.0.0.1:1\n"
    mpdtest.compare(mpdtest.make_case(spec, replies="auto"), ref, sut, "no ffmpeg decoder")
    # The rest of the list differs by mpd's alsa, cdio and mms input plugins (test_reflection).
    for server in (ref, sut):
        handlers = server.query("urlhandlers")
        assert b"handler: rtsp://" not in handlers and b"handler: rtp://" in handlers, (server.label, handlers)


def test_a_silent_station_does_not_hold_the_player(pair, rtsp):
    """A station that answers PLAY and never sends a packet: `stop` and `play` of another song answer at once
    and other clients keep their latency (libavformat's read returns when the player cancels it). mpd gives
    the demuxer no interrupt callback, so only Fermata is tried. About 3 s."""
    server = pair.sut
    if mpdtest.is_mpd(server.binary):
        pytest.skip("mpd waits on the silent station")
    server.query(f"command_list_begin\nclear\nadd {mpdtest.arg(rtsp[0] + '/silent/tone.wav')}\n"
                 f"add {mpdtest.arg(rtsp[0] + '/tone.wav')}\nplay 0\ncommand_list_end\n")
    time.sleep(mpdtest.scaled(1))
    for _ in range(5):
        start = time.monotonic()
        assert server.query("ping") == b"OK\n"
        assert time.monotonic() - start < mpdtest.scaled(0.5)
    start = time.monotonic()
    assert server.query("play 1") == b"OK\n"
    assert mpdtest.wait_until(lambda: float(_status(server).get("elapsed", "0")) > 0.2, mpdtest.scaled(5)), \
        _status(server)
    assert time.monotonic() - start < mpdtest.scaled(5)
    start = time.monotonic()
    assert server.query("command_list_begin\nstop\nclear\ncommand_list_end\n") == b"OK\n"
    assert time.monotonic() - start < mpdtest.scaled(1)
