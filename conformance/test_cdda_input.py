"""The cdio_paranoia input plugin (`cdda://[DEVICE][/TRACK]`), against mpd, on a disc image.

libcdio opens a `.cue` sheet (over a raw `.bin`) as a CD drive, so both servers play the tracks of a
two-track image that the test writes (a tone each, 2 s and 1.5 s of 44100:16:2). Their only output is an ALSA
`file` PCM over `null` (see audiofiles.py), which records what they play as fast as they play it.

* A track and the whole disc: the same queue and recording as mpd's (the track's bytes, then at most silence).
* A malformed track (`cdda://DIR/disc.cue`: the track is what follows the last `/`), a missing device and no
  drive at all (`cdda://`): mpd's `error:`.
* `urlhandlers` lists `cdda://`.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

SECTOR = 2352


def tone(seconds: float, frequency: float) -> bytes:
    """A stereo 16-bit little-endian tone, padded to whole CD sectors."""
    frames = int(44100 * seconds)
    out = bytearray()
    for i in range(frames):
        value = int(12000 * math.sin(2 * math.pi * frequency * i / 44100))
        out += value.to_bytes(2, "little", signed=True) * 2
    out += bytes(-len(out) % SECTOR)
    return bytes(out)


@pytest.fixture(scope="module")
def disc(tmp_path_factory) -> tuple[Path, list[bytes]]:
    directory = tmp_path_factory.mktemp("cdda")
    tracks = [tone(2, 440), tone(1.5, 660)]
    (directory / "disc.bin").write_bytes(b"".join(tracks))
    start = len(tracks[0]) // SECTOR
    (directory / "disc.cue").write_text(
        'FILE "disc.bin" BINARY\n  TRACK 01 AUDIO\n    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n'
        f'    INDEX 01 {start // 4500:02d}:{start // 75 % 60:02d}:{start % 75:02d}\n')
    return directory, tracks


@pytest.fixture
def pair(server_factory, tmp_path):
    music = tmp_path / "music"
    music.mkdir()
    return {kind: (audiofiles.file_recorder(server_factory, kind, music, tmp_path / kind), tmp_path / kind)
            for kind in ("ref", "sut")}


def status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def play(server, directory: Path, url: str) -> tuple[bytes, tuple[str, bytes]]:
    """`playlistinfo` after `add`, and the recording of playing `url` to its end."""
    for old in directory.glob("rec-*.raw"):
        old.unlink()
    audiofiles.commands(server, "clear", f'add "{url}"')
    queue = server.query("playlistinfo")
    audiofiles.commands(server, "play")
    if not mpdtest.wait_until(lambda: status(server).get("state") == "stop", 10):
        pytest.fail(f"{server.label} did not reach the end of {url}", pytrace=False)
    assert "error" not in status(server), status(server)
    time.sleep(mpdtest.scaled(0.3))      # the device is drained and closed
    files = list(directory.glob("rec-*.raw"))
    assert len(files) == 1, files
    return queue, (files[0].name, files[0].read_bytes())


@pytest.mark.parametrize("track", ["2", ""])
def test_track_and_disc(pair, disc, track):
    """Track 2, and the whole disc (`…/disc.cue/`): mpd's queue and samples."""
    directory, tracks = disc
    url = f"cdda://{directory}/disc.cue/{track}"
    got = {kind: play(server, where, url) for kind, (server, where) in pair.items()}
    want = tracks[1] if track else b"".join(tracks)
    name, data = got["ref"][1]
    assert name == "rec-S16_LE-44100-2.raw" and data[:len(want)] == want, "mpd did not play the image"
    assert got["sut"][0] == got["ref"][0]
    sut_data = got["sut"][1][1]
    assert sut_data[:len(want)] == want, "Fermata did not play the track's samples"
    assert audiofiles.recording_mismatch(url, got["ref"][1], got["sut"][1]) is None


def test_errors(pair, disc):
    directory, _ = disc
    # `cdda://`: no drive with an audio CD in it on a test machine.
    for url in (f"cdda://{directory}/disc.cue", "cdda:///nonexistent/x.cue/1", "cdda://"):
        got = {kind: formatcases.state_after_playing(server, url, ("state", "error"), timeout=5)
               for kind, (server, _) in pair.items()}
        assert got["ref"]["error"].startswith(f"Failed to decode {url}; "), got
        assert got["sut"] == got["ref"], url


def test_urlhandlers(pair):
    for server, _ in pair.values():
        assert b"handler: cdda://\n" in server.query("urlhandlers")
