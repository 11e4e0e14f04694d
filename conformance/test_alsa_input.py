"""The alsa input plugin (`alsa://DEVICE?format=RATE:BITS:CHANNELS`), against mpd.

No sound card: both servers get an ALSA configuration of the test's own ($ALSA_CONFIG_PATH) in which the
capture PCM `cap` is alsa-lib's `file` plugin over `null` with an `infile` (what the "microphone" hears: a
second of a known byte pattern), and the output PCM `rec` is the `file` plugin writing what the server
plays. `null` paces nothing, so both servers capture and play as fast as they can: each case takes well under
a second of playing.

* What the queue and `status` say while a capture plays (`audio: 44100:16:2`, no duration), and that the
  samples that reach the output are the infile's, byte for byte, on both servers.
* The errors of an unknown device and of bad formats (`Failed to decode URI; REASON`), as mpd's.
* `default_device` and `default_format` from `input { plugin "alsa" … }`; pause and resume.
* `urlhandlers` lists `alsa://`; `input { plugin "alsa" enabled "no" }` refuses `add alsa://…` as mpd does.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

#: One second of 44100:16:2 (a pattern no tone repeats: every 16-bit word is distinct over 64 Ki words).
INFILE = bytes((i * 7 + (i >> 9)) & 0xFF for i in range(176_400))

URL = "alsa://cap?format=44100:16:2"


def alsa_config(directory: Path) -> Path:
    """cap (captures INFILE) and rec (records to directory/rec-FORMAT-RATE-CHANNELS.raw)."""
    directory.mkdir(parents=True, exist_ok=True)
    infile = directory / "in.raw"
    infile.write_bytes(INFILE)
    config = directory / "alsa.conf"
    audiofiles.write_alsa_config(
        config,
        f'pcm.cap {{\n    type file\n    slave {{ pcm {{ type null }} }}\n    file "/dev/null"\n'
        f'    infile "{infile}"\n    format "raw"\n}}\n'
        + audiofiles.file_pcm("rec", str(directory / "rec-%f-%r-%c.raw")))
    return config


def start(server_factory, kind: str, directory: Path, extra_config: str = ""):
    """A server whose only output is the ALSA PCM `rec`, with `cap` to capture from."""
    config = alsa_config(directory)
    (directory / "music").mkdir(exist_ok=True)
    return server_factory(kind, music=directory / "music", env={"ALSA_CONFIG_PATH": str(config)},
                          outputs=[{"type": "alsa", "name": "Recorder", "device": "rec", "mixer_type": "none"}],
                          extra_config=extra_config)


@pytest.fixture
def pair(server_factory, tmp_path):
    return {kind: (start(server_factory, kind, tmp_path / kind), tmp_path / kind) for kind in ("ref", "sut")}


def status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


#: `status` lines that change with time.
VOLATILE = ("elapsed", "bitrate")


def capture(server, directory: Path, url: str = URL) -> tuple[list[str], bytes, bytes, str, bytes]:
    """Plays `url` until the recording holds twice the infile; `status` (times normalised), `currentsong`,
    `playlistinfo`, the recording's name and its first len(INFILE) bytes."""
    with server.connect() as c:
        for line in ("clear", f"add {url}", "play"):
            reply = c.command(line)
            assert reply == b"OK\n", f"{server.label}: {line} -> {reply!r}"
    if not mpdtest.wait_until(lambda: "audio" in status(server), 5):
        pytest.fail(f"{server.label}: no audio: in status: {status(server)}\n{server.log_tail()}", pytrace=False)

    def recording() -> Path | None:
        files = [f for f in directory.glob("rec-*.raw") if f.stat().st_size >= 2 * len(INFILE)]
        return files[0] if files else None

    if not mpdtest.wait_until(lambda: recording() is not None, 10):
        found = {f.name: f.stat().st_size for f in directory.glob("rec-*.raw")}
        pytest.fail(f"{server.label}: recording did not grow: {found}\n{server.log_tail()}", pytrace=False)
    lines = []
    for line in server.query("status").decode().splitlines():
        key, _, value = line.partition(": ")
        if key in VOLATILE or line == "OK":
            continue
        if key == "time":
            value = "T:" + value.split(":")[1]
        lines.append(f"{key}: {value}")
    song = server.query("currentsong")
    queue = server.query("playlistinfo")
    server.query("stop")
    time.sleep(0.1)
    file = recording()
    return lines, song, queue, file.name, file.read_bytes()[:len(INFILE)]


def test_capture_plays_the_device_samples(pair):
    """status/currentsong/playlistinfo as mpd's while a capture plays; both recordings start with the infile."""
    results = {kind: capture(server, directory) for kind, (server, directory) in pair.items()}
    ref, sut = results["ref"], results["sut"]
    assert "audio: 44100:16:2" in ref[0] and "state: play" in ref[0]
    assert ref[4] == INFILE, "mpd's recording is not the infile"
    assert sut[0] == ref[0]
    assert sut[1] == ref[1]
    assert sut[2] == ref[2]
    assert sut[3] == ref[3] == "rec-S16_LE-44100-2.raw"
    assert sut[4] == INFILE, "Fermata's recording is not the infile"


def test_configured_defaults(server_factory, tmp_path):
    """`default_device` and `default_format` of the `input` block: `alsa://` captures `cap` in mono."""
    block = 'input {\n    plugin "alsa"\n    default_device "cap"\n    default_format "44100:16:1"\n}'
    results = {}
    for kind in ("ref", "sut"):
        server = start(server_factory, kind, tmp_path / kind, extra_config=block)
        results[kind] = capture(server, tmp_path / kind, "alsa://")
    assert "audio: 44100:16:1" in results["ref"][0]
    assert results["sut"][:4] == results["ref"][:4]
    assert results["ref"][3] == "rec-S16_LE-44100-1.raw"
    assert results["ref"][4] == results["sut"][4] == INFILE


def test_pause_and_resume(pair):
    """Paused, the capture stops being read (the device overruns); resumed, it plays on without an error."""
    for kind, (server, directory) in pair.items():
        with server.connect() as c:
            for line in ("clear", f"add {URL}", "play"):
                assert c.command(line) == b"OK\n"
        assert mpdtest.wait_until(lambda: "audio" in status(server), 5), server.label
        server.query("pause 1")
        assert status(server)["state"] == "pause"
        time.sleep(0.3)
        size = sum(f.stat().st_size for f in directory.glob("rec-*.raw"))
        server.query("pause 0")
        assert mpdtest.wait_until(
            lambda: sum(f.stat().st_size for f in directory.glob("rec-*.raw")) > size + len(INFILE), 5), server.label
        now = status(server)
        assert now["state"] == "play" and "error" not in now and now["audio"] == "44100:16:2", (server.label, now)
        server.query("stop")


#: URLs that fail, each for its own reason.
ERRORS = ["alsa://nosuch?format=44100:16:2", "alsa://cap?format=44100:17:2", "alsa://cap?format=foo",
          "alsa://cap?format=44100:16:2&x=1", "alsa://?format=22050:8:1"]


def test_errors(pair):
    """An unknown device and bad formats: the same `error:` once playback stopped."""
    for url in ERRORS:
        got = {kind: formatcases.state_after_playing(server, url, ("state", "error"), timeout=5)
               for kind, (server, _) in pair.items()}
        assert got["ref"]["error"].startswith(f"Failed to decode {url}; "), got
        assert got["sut"] == got["ref"], url


def test_urlhandlers_and_disabled(server_factory, tmp_path):
    """`alsa://` is listed; with the plugin disabled it is not, and `add` is refused in mpd's words."""
    disabled = 'input {\n    plugin "alsa"\n    enabled "no"\n}'
    replies = {}
    for kind in ("ref", "sut"):
        on = start(server_factory, kind, tmp_path / kind)
        assert b"handler: alsa://\n" in on.query("urlhandlers")
        off = start(server_factory, kind, tmp_path / f"{kind}-off", extra_config=disabled)
        assert b"handler: alsa://\n" not in off.query("urlhandlers")
        replies[kind] = off.query(f"add {URL}")
    assert replies["ref"].startswith(b"ACK")
    assert replies["sut"] == replies["ref"]
