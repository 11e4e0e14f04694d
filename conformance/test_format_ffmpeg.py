"""FFmpeg formats (tools/fixtures/ffmpeg.py): M4A with AAC and ALAC, WMA, Matroska, WebM, TTA, AC3, and
damaged files, compared between mpd and the system under test.

* the library: browsing, searching, readcomments, readpicture and the queue of each directory;
* the player: `status` after play and after a seek (duration, audio format, bit rate, elapsed);
* the samples: what an ALSA output on alsa-lib's `file` plugin receives from mpd and from the system
  under test, the whole file and after a seek, byte for byte; for lossless codecs also against
  `ffmpeg`'s own decode of the file.
"""

from __future__ import annotations

import subprocess

import pytest

import audiofiles
import formatcases
import mpdtest
import mutagendata

DIRECTORIES = ("ffmpeg/m4a", "ffmpeg/other", "ffmpeg/broken")

#: Playable files, their ALSA sample format name as both servers open the device (no `format` setting).
PLAYABLE = {
    "ffmpeg/m4a/aac-44k-stereo.m4a": "FLOAT_LE",
    "ffmpeg/m4a/aac-48k-mono.m4a": "FLOAT_LE",
    "ffmpeg/m4a/alac-16-44k-stereo.m4a": "S16_LE",
    "ffmpeg/m4a/alac-16-48k-mono.m4a": "S16_LE",
    "ffmpeg/m4a/alac-24-96k-stereo.m4a": "S32_LE",
    "ffmpeg/other/wmav2.wma": "FLOAT_LE",
    "ffmpeg/other/flac-in.mka": "S32_LE",
    "ffmpeg/other/opus.webm": "FLOAT_LE",
    "ffmpeg/other/true-audio.tta": "S32_LE",
    "ffmpeg/other/dolby.ac3": "FLOAT_LE",
    "ffmpeg/other/pcm-in.mka": "S16_LE",
    "ffmpeg/broken/truncated.wma": "FLOAT_LE",
    "ffmpeg/broken/truncated.mka": "S32_LE",
    "ffmpeg/broken/damaged-middle.m4a": "S16_LE",
}

#: Lossless files: the recording must also equal `ffmpeg -f FORMAT` of the file.
LOSSLESS = {
    "ffmpeg/m4a/alac-16-44k-stereo.m4a": "s16le",
    "ffmpeg/m4a/alac-24-96k-stereo.m4a": "s32le",
    "ffmpeg/other/flac-in.mka": "s32le",
    "ffmpeg/other/pcm-in.mka": "s16le",
}


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_browse(format_pair, directory):
    formatcases.browse(format_pair, directory)


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_search(format_pair, directory):
    formatcases.search(format_pair, directory)


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_comments_and_pictures(format_pair, format_music, directory):
    formatcases.comments_and_pictures(format_pair, format_music, directory)


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_queue(format_pair, directory):
    formatcases.queue(format_pair, directory)


def test_decoders_entry(format_pair):
    """The `decoders` reply's ffmpeg entry: mpd's suffix and MIME type tables, unchanged."""
    formatcases.decoders_match(format_pair, ["ffmpeg"])


# ---------------------------------------------------------------------------
# The player

@pytest.mark.parametrize("uri", sorted(PLAYABLE))
@pytest.mark.parametrize("seek", [None, 0.5])
def test_status_after_play_and_seek(format_pair, uri, seek):
    """While playing: the same audio format, bit rate and duration; paused after `seekcur 0.5`: the same
    elapsed time."""
    want = formatcases.play_status(format_pair.ref, uri, seek)
    got = formatcases.play_status(format_pair.sut, uri, seek)
    assert got == want


# ---------------------------------------------------------------------------
# The samples

_recorder = audiofiles.file_recorder
_record = audiofiles.record_queue


def _recorders(server_factory, format_music, tmp_path):
    return {kind: (_recorder(server_factory, kind, format_music, tmp_path / kind), tmp_path / kind)
            for kind in ("ref", "sut")}


def _compare_recordings(recorders, uri, lines, mismatches):
    got = {kind: _record(server, directory, lines) for kind, (server, directory) in recorders.items()}
    (ref_name, ref_data), (sut_name, sut_data) = got["ref"], got["sut"]
    if not ref_name.startswith(f"rec-{PLAYABLE[uri]}-"):
        mismatches.append(f"{uri} {lines[-1]}: mpd opened the device as {ref_name}")
    if sut_name != ref_name:
        mismatches.append(f"{uri} {lines[-1]}: device {sut_name}, mpd's {ref_name}")
    else:
        # mpd's ALSA output completes the last period with silence when it drains; nothing else may differ.
        padding = ref_data[len(sut_data):]
        if ref_data[:len(sut_data)] != sut_data or padding.count(0) != len(padding):
            mismatches.append(f"{uri} {lines[-1]}: {_first_difference(sut_data, ref_data)}")
    return sut_data


def test_samples_as_mpd(server_factory, format_music, tmp_path):
    """Each playable file, whole: the same device format and bytes as mpd's; lossless files also equal
    `ffmpeg`'s decode (so nothing is converted on the way)."""
    recorders = _recorders(server_factory, format_music, tmp_path)
    mismatches: list[str] = []
    for uri in sorted(PLAYABLE):
        data = _compare_recordings(recorders, uri, [f'add "{uri}"', "play"], mismatches)
        if uri in LOSSLESS:
            want = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(format_music / uri),
                                   "-f", LOSSLESS[uri], "-"], check=True, capture_output=True).stdout
            if data != want:
                mismatches.append(f"{uri} against ffmpeg: {_first_difference(data, want)}")
    assert not mismatches, "\n".join(mismatches)


def test_samples_after_seek_as_mpd(server_factory, format_music, tmp_path):
    """Each playable file started with `seek 0 0.37`: the same bytes as mpd's (its packet seek, then the
    samples before the position dropped)."""
    recorders = _recorders(server_factory, format_music, tmp_path)
    mismatches: list[str] = []
    for uri in sorted(PLAYABLE):
        _compare_recordings(recorders, uri, [f'add "{uri}"', "seek 0 0.37"], mismatches)
    assert not mismatches, "\n".join(mismatches)


def _first_difference(got: bytes, want: bytes) -> str:
    for index, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"first different byte at {index} of {len(got)} (want {len(want)}): got {a}, want {b}"
    return f"lengths differ: got {len(got)} bytes, want {len(want)}"


# ---------------------------------------------------------------------------
# Real files nobody here wrote: mutagen's test data

#: The suffixes of mutagen's test files that only FFmpeg reads in Debian's mpd (`.aac` goes to faad first,
#: `.mpc` to mpcdec, so they are left out).
REAL_SUFFIXES = (".m4a", ".mp4", ".m4b", ".wma", ".ape", ".tta", ".ac3", ".eac3", ".tak", ".spx")


@pytest.fixture(scope="module")
def real_music():
    return mutagendata.music("mutagen-ffmpeg", REAL_SUFFIXES)


@pytest.fixture(scope="module")
def real_pair(real_music, server_pair):
    pair = server_pair(real_music)
    pair.require_sut()
    return pair


def test_real_files(real_pair, real_music):
    """mutagen's M4A/MP4/M4B, WMA, APE, TTA, AC3, E-AC3, TAK and Speex test files: the database, comments,
    pictures and queue, as mpd has them."""
    names = sorted(p.name for p in real_music.iterdir() if p.is_file() and not p.name.startswith("."))
    assert len(names) >= 15, names
    formatcases.run(real_pair, "listallinfo\n", "listallinfo")
    formatcases.run(real_pair, "".join(f"readcomments {mpdtest.arg(n)}\n" for n in names), "readcomments")
    formatcases.run(real_pair, "binarylimit 1048576\n" + "".join(f"readpicture {mpdtest.arg(n)} 0\n" for n in names),
                    "readpicture")
    formatcases.run(real_pair, "clear\nadd /\nplaylistinfo\nclear\n", "queue")


def test_replay_gain_from_mp4_freeform_atoms(server_factory, format_music, tmp_path):
    """`replay_gain_mode track` and `album`: the ReplayGain of `----:com.apple.iTunes:replaygain_*` atoms
    (FFmpeg metadata) scales the samples as in mpd. Within 0.2 % (and 4 steps for integers), not bit for bit:
    mpd applies the scale on its volume grid of 1/1024 (with dither for integer samples), which is the
    player's business, not the FFmpeg plugin's; the plugin's part is reading the same gain and peak."""
    import array
    recorders = _recorders(server_factory, format_music, tmp_path)
    mismatches: list[str] = []
    for mode, uri, raw, code in (("track", "ffmpeg/m4a/aac-44k-stereo.m4a", "f32le", "f"),
                                 ("album", "ffmpeg/m4a/alac-16-44k-stereo.m4a", "s16le", "h")):
        lines = [f"replay_gain_mode {mode}", f'add "{uri}"', "play"]
        got = {kind: _record(server, directory, lines)[1] for kind, (server, directory) in recorders.items()}
        ref, sut = (array.array(code, got[k][:len(got[k]) // 4 * 4]) for k in ("ref", "sut"))
        plain = array.array(code, subprocess.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-i", str(format_music / uri), "-f", raw, "-"],
            check=True, capture_output=True).stdout)
        steps = 0 if code == "f" else 4      # mpd's dither moves 16-bit samples by a few steps
        far = [i for i, (a, b) in enumerate(zip(sut, ref)) if abs(a - b) > abs(b) * 0.002 + steps]
        if len(sut) > len(ref) or far:
            mismatches.append(f"{uri} ({mode}): {len(far)} samples off, first at {far[:1]}; "
                              f"{len(sut)} samples, mpd {len(ref)}; "
                              f"{[(sut[i], ref[i], plain[i]) for i in far[:4]]}")
        if sut[:len(plain)] == plain[:len(sut)]:
            mismatches.append(f"{uri}: {mode} mode left the samples unchanged")
    assert not mismatches, "\n".join(mismatches)
