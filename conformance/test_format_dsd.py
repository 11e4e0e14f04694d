"""DSD files (DSF and DSDIFF): the `dsd` directory of the multi-format library (tools/fixtures/dsd.py).

* Browsing, searching, readcomments/readpicture and the queue, as mpd 0.23.12's `dsf` and `dsdiff`
  plugins see the files: durations of whole DSF blocks, the ID3 tag at a DSF's end, DSDIFF tags only
  where 0.23.12's double skip after the audio lands on them, damaged files left out.
* `decoders`: the two plugins' blocks, byte for byte.
* `status` after play, pause and seek.
* The samples an ALSA device (alsa-lib's `file` plugin) receives, recorded for mpd and for Fermata
  on the same file: native DSD (DSD_U8, bit for bit), and DSD converted to PCM for an output whose
  `format` asks for float or 24-bit (dsd2pcm at 352800 Hz for DSD64, bit for bit too), and DSD over
  PCM with `dop "yes"` (24-bit words at 176400 Hz for DSD64, bit for bit).  mpd pads
  its last ALSA period with silence (0x69 for DSD, zeros for PCM); Fermata does not, so mpd's
  recording may be longer by less than a period of silence.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

DIRECTORY = "dsd"


def test_browse(format_pair):
    formatcases.browse(format_pair, DIRECTORY)
    formatcases.browse(format_pair, f"{DIRECTORY}/broken")


def test_search(format_pair):
    formatcases.search(format_pair, DIRECTORY)


def test_comments_and_pictures(format_pair, format_music):
    formatcases.comments_and_pictures(format_pair, format_music, DIRECTORY)


def test_queue(format_pair):
    formatcases.queue(format_pair, DIRECTORY)


def test_decoders_lists_the_dsd_plugins_as_mpd(format_pair):
    formatcases.decoders_match(format_pair, ["dsdiff", "dsf"])


def _status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def _wait(predicate, what: str, timeout: float = 10) -> None:
    if not mpdtest.wait_until(predicate, timeout):
        pytest.fail(f"timed out waiting for {what}", pytrace=False)


@pytest.mark.parametrize("name", ["tone-dsd64.dsf", "tone-dsd64.dff", "mono-dsd128.dsf", "msb-first-48k.dsf"])
def test_status_after_play_pause_and_seek(format_pair, name):
    """Paused while playing: audio (dsd64:2, 384000:dsd:2…), bitrate, duration; then after a seek, the
    seek target.  (`audio:` and `bitrate:` after a seek while paused are left out: Fermata drops them
    for every format there, which is the player's, not the DSD plugins', difference.)"""
    paused_fields = ("state", "song", "duration", "bitrate", "audio")
    seek_fields = ("state", "song", "time", "elapsed", "duration")
    seen = {}
    for server in (format_pair.ref, format_pair.sut):
        with server.connect() as c:
            for line in ("clear", f'add "{DIRECTORY}/{name}"', "play"):
                assert not c.command(line).startswith(b"ACK")
            # Until a chunk has been played (before that, mpd's bitrate is still 0).
            _wait(lambda: float(_status(server).get("elapsed", "0")) >= 0.02, f"{server.label} to play {name}")
            assert not c.command("pause 1").startswith(b"ACK")
            time.sleep(0.2)
            paused = _status(server)
            assert not c.command("seekcur 0.1").startswith(b"ACK")
        _wait(lambda: _status(server).get("elapsed") == "0.100", f"{server.label} to seek", 5)
        time.sleep(0.2)
        sought = _status(server)
        seen[server.label] = ({k: paused.get(k) for k in paused_fields}, {k: sought.get(k) for k in seek_fields})
        server.query("stop")
        server.query("clear")
    ref, sut = seen.values()
    assert sut == ref, seen


# ---------------------------------------------------------------------------
# The samples

def _record(server_factory, kind: str, music: Path, directory: Path, uri: str, output: dict,
            log: list[str] | None = None) -> tuple[str, bytes]:
    """The one file the output recorded and its bytes; with `log`, the server's log is appended to it."""
    directory.mkdir()
    config = directory / "alsa.conf"
    audiofiles.write_alsa_config(config, audiofiles.file_pcm("rec", str(directory / "rec-%f-%r-%c.raw")))
    server = server_factory(kind, music=music, env={"ALSA_CONFIG_PATH": str(config)},
                            outputs=[{"type": "alsa", "name": "Recorder", "device": "rec",
                                      "mixer_type": "none", **output}])
    with server.connect() as c:
        for line in ("clear", f'add "{uri}"', "play"):
            assert not c.command(line).startswith(b"ACK"), line
    _wait(lambda: _status(server).get("state") == "stop", f"{server.label} to play {uri}", 30)
    deadline = time.monotonic() + mpdtest.scaled(10)
    while True:
        files = list(directory.glob("rec-*.raw"))
        # `state: stop` comes before the output has written its last periods: under load mpd's recording once
        # lacked its last 0.125 s. The recording is whole once the server has closed the device (both close it
        # when the queue ends) and it stops growing.
        if len(files) == 1 and files[0].stat().st_size > 0 and not _held_open(server, files[0]):
            size = files[0].stat().st_size
            time.sleep(mpdtest.scaled(0.3))
            if files[0].stat().st_size == size:
                if log is not None:
                    log.append(server.log_path.read_bytes().decode("utf-8", "replace"))
                return files[0].name, files[0].read_bytes()
        if time.monotonic() > deadline:
            pytest.fail(f"no recording in {directory}: {[f.name for f in files]}", pytrace=False)
        time.sleep(0.05)


def _held_open(server, path: Path) -> bool:
    """Whether the server's process has `path` open (its ALSA `file` PCM still writes there)."""
    return os.path.realpath(path) in mpdtest.open_paths(server.proc.pid)


@pytest.mark.parametrize("name, output, silence, wire", [
    ("tone-dsd64.dsf", {}, b"\x69", "rec-DSD_U8-352800-2.raw"),
    ("tone-dsd64.dff", {}, b"\x69", "rec-DSD_U8-352800-2.raw"),
    ("mono-dsd128.dsf", {}, b"\x69", "rec-DSD_U8-705600-1.raw"),
    ("tone-dsd64.dsf", {"format": "*:f:*"}, b"\0", "rec-FLOAT_LE-352800-2.raw"),
    ("tone-dsd64.dff", {"format": "*:24:*"}, b"\0", "rec-S24_LE-352800-2.raw"),
    ("three-channels.dsf", {"format": "*:f:*"}, b"\0", "rec-FLOAT_LE-352800-3.raw"),
    ("tone-dsd64.dsf", {"dop": "yes"}, b"\0", "rec-S24_LE-176400-2.raw"),
    ("tone-dsd64.dff", {"dop": "yes"}, b"\0", "rec-S24_LE-176400-2.raw"),
])
def test_samples_are_mpds(server_factory, format_music, tmp_path, name, output, silence, wire):
    uri = f"{DIRECTORY}/{name}"
    ref_log: list[str] = []
    ref_name, ref = _record(server_factory, "ref", format_music, tmp_path / "mpd", uri, output, ref_log)
    sut_name, sut = _record(server_factory, "sut", format_music, tmp_path / "sut", uri, output)
    assert ref_name == wire
    assert sut_name == wire
    assert len(sut) > 0 and len(sut) <= len(ref)
    if sut != ref[:len(sut)]:
        first = next(i for i, (a, b) in enumerate(zip(sut, ref)) if a != b)
        pytest.fail(f"{name}: first different byte at {first} of {len(sut)}", pytrace=False)
    tail = ref[len(sut):]
    # mpd's padding of its last period: silence only (zeros for PCM and for DSD over PCM, 0x69 for DSD),
    # less than 50 ms; more only where mpd's ring buffer ran dry under load and it wrote whole periods of silence
    # (125 ms each, its default period) to avoid an xrun, which it logs (CI-39: 88200 bytes of DSD64 silence).
    assert tail == silence * len(tail), f"mpd's recording goes on with sound after {len(sut)} bytes"
    _, kind, rate, channels = wire[:-len(".raw")].split("-")
    bytes_per_second = int(rate) * int(channels) * (1 if kind == "DSD_U8" else 4)
    if len(tail) >= bytes_per_second // 20:
        assert "Decoder is too slow; playing silence to avoid xrun" in ref_log[0], \
            f"mpd's recording has {len(tail)} bytes of silence more than Fermata's and logged no underrun"


def test_samples_resampled_to_cd_are_mpds(server_factory, format_music, tmp_path):
    """`format "44100:16:2"`: DSD64 → 352800 Hz PCM → libsamplerate (Debian's mpd default resampler) → 16-bit,
    sample for sample as mpd: the same length (neither plays what libsamplerate holds at the end), mpd's
    recording followed by its period's silence only."""
    import array
    uri = f"{DIRECTORY}/tone-dsd64.dsf"
    output = {"format": "44100:16:2"}
    ref_name, ref = _record(server_factory, "ref", format_music, tmp_path / "mpd", uri, output)
    sut_name, sut = _record(server_factory, "sut", format_music, tmp_path / "sut", uri, output)
    assert ref_name == sut_name == "rec-S16_LE-44100-2.raw"
    want = array.array("h", ref)
    got = array.array("h", sut)
    # 352256 frames at 352800 Hz are 44032 frames at 44100 Hz, less libsamplerate's delay.
    assert 2 * (44032 - 64) <= len(got) <= 2 * 44032
    assert got == want[:len(got)], "the samples differ from mpd's"
    assert not any(want[len(got):]), "mpd's recording goes on with sound"
    assert max(abs(v) for v in got) > 8000, "no tone"
