"""WAV, AIFF, AU & co. (mpd's sndfile plugin) and WavPack (its wavpack plugin) against mpd.

The library is tools/fixtures/pcmfiles.py's directory of the multi-format library. Per directory:
browsing, searching, listing, readcomments and readpicture, the queue; then `status` after play and
seek; and what the output receives, recorded through alsa-lib's `file` plugin, compared bit for bit
with the source (sox's raw decode of the WAV/AIFF, `wvunpack`'s of the WavPack).
"""

from __future__ import annotations

import array
import subprocess
import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest
import mutagendata

ROOT = "pcmfiles"
DIRECTORIES = ["wav", "tags", "aiff", "wavpack", "wavpack/lossy", "apetags", "broken"]


@pytest.fixture(scope="module")
def music(format_music) -> Path:
    return format_music


def test_decoders_entries(format_pair):
    """`decoders` lists sndfile and wavpack with mpd's suffixes and MIME types, in mpd's order."""
    formatcases.decoders_match(format_pair, ["sndfile", "wavpack"])


@pytest.mark.parametrize("sub", DIRECTORIES)
def test_browse(format_pair, sub):
    formatcases.browse(format_pair, f"{ROOT}/{sub}")


@pytest.mark.parametrize("sub", DIRECTORIES)
def test_search(format_pair, sub):
    formatcases.search(format_pair, f"{ROOT}/{sub}")


@pytest.mark.parametrize("sub", DIRECTORIES)
def test_comments_and_pictures(format_pair, music, sub):
    formatcases.comments_and_pictures(format_pair, music, f"{ROOT}/{sub}")


@pytest.mark.parametrize("sub", DIRECTORIES)
def test_queue(format_pair, sub):
    formatcases.queue(format_pair, f"{ROOT}/{sub}")


def test_embedded_cue_sheet(format_pair):
    """mpd marks a song whose tags hold a cue sheet (here a WavPack file's APE `Cuesheet` item) and lists it as a
    playlist too (`playlist:` after its song block)."""
    formatcases.browse(format_pair, f"{ROOT}/cuesheet")


# ---------------------------------------------------------------------------
# status after play and seek

#: Files played (paused right away, then seeked) on both servers.
PLAYED = [
    "wav/s16-stereo-44100.wav", "wav/s24-stereo-48000.wav", "wav/float-stereo-44100.wav",
    "wav/u8-mono-44100.wav", "wav/double-mono-48000.wav", "aiff/s24-stereo-48000.aif",
    "wav/s16-stereo-44100.au", "wavpack/s16-stereo-44100.wv", "wavpack/s24-stereo-48000.wv",
    "wavpack/float-stereo-44100.wv", "wavpack/u8-mono-44100.wv", "wavpack/hybrid-with-wvc.wv", "wavpack/dsd64-stereo.wv",
]

#: What is compared while the song plays. `bitrate` only for libsndfile's formats (always 0): for WavPack mpd
#: shows the rate of the block it last queued to the outputs (for these short files, the last block), a
#: player matter.
PLAYING_KEYS = ("state", "song", "duration", "audio", "bitrate")
#: What is compared after a seek while paused (Fermata's player drops `audio:` from `status` after a seek in
#: pause, whatever the format: not this plugin's business, so `audio` is compared while playing).
SEEKED_KEYS = ("state", "song", "duration", "elapsed")


def status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def play_and_seek(server, uri: str, seconds: str) -> tuple[dict[str, str], dict[str, str]]:
    """Queues `uri` alone and plays it: the status once the output plays, and once paused and seeked to
    `seconds`."""
    def command(line):
        reply = server.query(line)
        assert not reply.startswith(b"ACK"), (server.label, line, reply)

    for line in ("clear", f"add {mpdtest.arg(uri)}", "play"):
        command(line)
    mpdtest.wait_until(lambda: "audio" in status(server), mpdtest.scaled(5))
    playing = status(server)
    command("pause 1")
    command(f"seekcur {seconds}")
    mpdtest.wait_until(lambda: status(server).get("elapsed") == f"{float(seconds):.3f}", mpdtest.scaled(5))
    seeked = status(server)
    server.query("clear")
    keys = PLAYING_KEYS if not uri.endswith(".wv") else tuple(k for k in PLAYING_KEYS if k != "bitrate")
    return {k: playing.get(k, "") for k in keys}, {k: seeked.get(k, "") for k in SEEKED_KEYS}


@pytest.mark.parametrize("uri", PLAYED)
def test_status_after_play_and_seek(format_pair, uri):
    """duration, audio (the decoder's output format) and the exact elapsed time after a seek."""
    want = play_and_seek(format_pair.ref, f"{ROOT}/{uri}", "0.25")
    got = play_and_seek(format_pair.sut, f"{ROOT}/{uri}", "0.25")
    assert got == want


state_after_playing = formatcases.state_after_playing


@pytest.mark.parametrize("uri", ["broken/truncated.wav", "broken/truncated.aiff", "broken/truncated.wv"])
def test_truncated_files_play_to_their_end(format_pair, uri):
    """A truncated file plays what it holds and stops without an error."""
    assert state_after_playing(format_pair.sut, f"{ROOT}/{uri}") == state_after_playing(format_pair.ref, f"{ROOT}/{uri}")


def test_song_without_frames_stops(format_pair):
    """A song of 0 frames (a WAV header without samples) ends playback at once, without an error."""
    uri = f"{ROOT}/broken/header-only.wav"
    assert state_after_playing(format_pair.sut, uri) == state_after_playing(format_pair.ref, uri)


# ---------------------------------------------------------------------------
# The samples

def reference_pcm(music: Path, uri: str, sample_format: str) -> bytes:
    """The source's samples as the device gets them: `wvunpack --raw` for WavPack (16-bit as is, 24-bit in
    32-bit words like mpd's S24_P32), else sox's decode to 16- or 32-bit signed integers."""
    path = music / ROOT / uri
    if path.suffix == ".wv":
        raw = subprocess.run(["wvunpack", "-q", "-y", "--raw", str(path), "-o", "-"], check=True,
                             capture_output=True, timeout=60).stdout
        if sample_format == "S24_LE":
            return b"".join(raw[i:i + 3] + (b"\xff" if raw[i + 2] & 0x80 else b"\0") for i in range(0, len(raw), 3))
        if sample_format == "S8":
            return bytes(b ^ 0x80 for b in raw)   # WAV's unsigned 8-bit bytes; mpd plays them signed
        return raw
    encoding, bits = {"S16_LE": ("signed", "16"), "S32_LE": ("signed", "32"),
                      "FLOAT_LE": ("floating-point", "32")}[sample_format]
    return subprocess.run(["sox", "-D", str(path), "-t", "raw", "-e", encoding, "-b", bits, "-"], check=True,
                          capture_output=True, timeout=60).stdout


#: (file, what the ALSA device is opened as): the decoder's own format reaches the device unconverted.
RECORDED = [
    ("wav/s16-stereo-44100.wav", "S16_LE-44100-2"),
    ("wav/s24-stereo-48000.wav", "S32_LE-48000-2"),
    ("wav/s32-stereo-96000.wav", "S32_LE-96000-2"),
    ("wav/u8-mono-44100.wav", "S16_LE-44100-1"),
    ("aiff/s24-stereo-48000.aif", "S32_LE-48000-2"),
    ("wavpack/s16-stereo-44100.wv", "S16_LE-44100-2"),
    ("wavpack/s24-stereo-48000.wv", "S24_LE-48000-2"),
    ("wavpack/hybrid-with-wvc.wv", "S16_LE-44100-2"),
    ("wavpack/u8-mono-44100.wv", "S8-44100-1"),
    ("wavpack/float-stereo-44100.wv", "FLOAT_LE-44100-2"),
    ("wav/float-stereo-44100.wav", "FLOAT_LE-44100-2"),
]


@pytest.mark.parametrize("uri,device", RECORDED)
def test_samples_bit_exact(server_factory, music, tmp_path, uri, device):
    """Fermata plays the file to an ALSA `file` PCM: every sample as the source has it, nothing more."""
    audiofiles.require_tools("sox", "wvunpack")
    sample_format = device.split("-")[0]
    want = reference_pcm(music, uri, sample_format)
    config = tmp_path / "alsa.conf"
    audiofiles.write_alsa_config(config, audiofiles.file_pcm("rec", str(tmp_path / "rec-%f-%r-%c.raw")))
    server = server_factory(
        "sut", music=music, env={"ALSA_CONFIG_PATH": str(config)},
        outputs=[{"type": "alsa", "name": "Recorder", "device": "rec", "mixer_type": "none"}])
    with server.connect() as c:
        for line in ("clear", f"add {mpdtest.arg(ROOT + '/' + uri)}", "play"):
            reply = c.command(line)
            assert not reply.startswith(b"ACK"), (line, reply)
    assert mpdtest.wait_until(lambda: status(server).get("state") == "stop", 30), "the song did not end"
    deadline = time.monotonic() + mpdtest.scaled(10)
    while True:
        files = list(tmp_path.glob("rec-*.raw"))
        if len(files) == 1 and files[0].stat().st_size >= len(want):
            break
        assert time.monotonic() < deadline, (f"found {[(f.name, f.stat().st_size) for f in files]}, want "
                                             f"{len(want)} bytes\n{server.log_tail()}")
        time.sleep(0.02)
    time.sleep(mpdtest.scaled(0.2))
    assert files[0].name == f"rec-{device}.raw"
    got = files[0].read_bytes()
    code = {"S16_LE": "h", "S8": "b", "FLOAT_LE": "f"}.get(sample_format, "i")
    assert got == want, audiofiles.first_difference(array.array(code, got), array.array(code, want))


# ---------------------------------------------------------------------------
# Real files: mutagen's test data

#: mutagen's sdist files for these plugins (WAV with and without ID3 chunks, AIFF, WavPack incl. DSD).
REAL_SUFFIXES = (".wav", ".aif", ".aiff", ".au", ".wv")


@pytest.fixture(scope="session")
def real_music() -> Path:
    return mutagendata.music("mutagen-pcmfiles", REAL_SUFFIXES)


@pytest.fixture
def real_pair(real_music, server_pair):
    pair = server_pair(real_music)
    pair.require_sut()
    return pair


def test_real_files_present(real_music):
    names = formatcases.files(real_music, ".")
    assert sum(n.endswith(".wv") for n in names) >= 2 and sum(n.endswith(".wav") for n in names) >= 2, names


def test_real_browse_and_search(real_pair):
    formatcases.browse(real_pair, "")
    formatcases.search(real_pair, "")


def test_real_comments_and_pictures(real_pair, real_music):
    formatcases.comments_and_pictures(real_pair, real_music, ".")


@pytest.mark.parametrize("name", ["silence-44-s.wv", "silence-2s-PCM-44100-16-ID3v23.wav",
                                  "with-id3.aif"])
def test_real_status_after_play_and_seek(real_pair, name):
    want = play_and_seek(real_pair.ref, name, "0.5")
    got = play_and_seek(real_pair.sut, name, "0.5")
    assert got == want
