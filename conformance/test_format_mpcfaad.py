"""Musepack (mpd's mpcdec plugin) and raw AAC (its faad plugin), tools/fixtures/mpcfaad.py, compared between
mpd and the system under test.

* the library: browsing, searching, readcomments, readpicture and the queue of each directory (mpd stores a
  duration and no format for either plugin; broken files it still lists, others it leaves out);
* the player: `status` while playing (audio format, duration) and, for Musepack, after a seek (elapsed).
  Not `bitrate`: mpd shows the rate of the chunk its player thread last handed to the outputs, up to 64
  chunks ahead of what is heard (for these short files, the last frame's), while Fermata shows the rate of
  the chunk being played; both plugins compute each frame's rate as mpd's do (see FormatsTests). Raw AAC
  is not seekable in mpd: a seek into it while its decoder runs fails with "Not seekable", and a seek that
  has to start it plays it from the beginning;
* the samples: what an ALSA output on alsa-lib's `file` plugin receives from mpd and from the system under
  test, the whole file and (Musepack) after a seek, byte for byte; also for the Musepack (SV7, SV8) and
  ADTS files of mutagen's test data (real files nobody here wrote; see test_real_files.py).
"""

from __future__ import annotations

import time

import pytest

import audiofiles
import formatcases
import mpdtest
from test_real_files import mutagen_other_music  # noqa: F401  (the fixture: mutagen's test data)

DIRECTORIES = ("mpcfaad/mpc", "mpcfaad/aac", "mpcfaad/broken")

#: Playable files and the ALSA sample format both servers open the device with (no `format` setting).
PLAYABLE = {
    "mpcfaad/mpc/stereo-44k.mpc": "S24_LE",
    "mpcfaad/mpc/mono-48k.mpc": "S24_LE",
    "mpcfaad/mpc/stereo-32k.mpc": "S24_LE",
    "mpcfaad/mpc/replaygain.mpc": "S24_LE",
    "mpcfaad/mpc/id3v2-first.mpc": "S24_LE",
    "mpcfaad/broken/truncated.mpc": "S24_LE",
    "mpcfaad/aac/stereo-44k.aac": "S16_LE",
    "mpcfaad/aac/mono-48k.aac": "S16_LE",
    "mpcfaad/aac/stereo-22k.aac": "S16_LE",
    "mpcfaad/aac/ape-tag.aac": "S16_LE",
    "mpcfaad/aac/id3v2-first.aac": "S16_LE",
    "mpcfaad/aac/junk-first.aac": "S16_LE",
    "mpcfaad/broken/truncated.aac": "S16_LE",
}

SEEKABLE = sorted(uri for uri in PLAYABLE if uri.endswith(".mpc"))


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


def test_decoders_entries(format_pair):
    """The `decoders` reply's faad and mpcdec entries: mpd's suffixes and MIME types."""
    formatcases.decoders_match(format_pair, ["faad", "mpcdec"])


# ---------------------------------------------------------------------------
# The player

_status = audiofiles.status_of
_command = audiofiles.commands


def _playing(server, uri: str, seek: float | None) -> dict[str, str]:
    """Format and duration while playing (these cases leave the bit rate out); then paused, as
    `formatcases.play_status`."""
    return formatcases.play_status(server, uri, seek, playing_fields=("audio", "duration"))


@pytest.mark.parametrize("uri", sorted(PLAYABLE))
def test_status_while_playing(format_pair, uri):
    """The same audio format and duration while playing, as mpd."""
    assert _playing(format_pair.sut, uri, None) == _playing(format_pair.ref, uri, None)


@pytest.mark.parametrize("uri", SEEKABLE)
def test_status_after_seek(format_pair, uri):
    """Musepack seeks: paused after `seekcur 0.5`, the same elapsed time as mpd."""
    assert _playing(format_pair.sut, uri, 0.5) == _playing(format_pair.ref, uri, 0.5)


def test_surround_plays_nothing_as_in_mpd(format_pair):
    """5.1 AAC: libfaad announces 6 channels but mixes the frames down to 2, so mpd's plugin stops at the
    first frame ("channel count changed"): the song plays nothing and the player stops, without an error."""
    uri = "mpcfaad/aac/surround-48k.aac"
    for server in (format_pair.ref, format_pair.sut):
        _command(server, "clear", f'add "{uri}"', "play")
        ended = mpdtest.wait_until(lambda: _status(server).get("state") == "stop", mpdtest.scaled(3))
        status = _status(server)
        _command(server, "stop", "clear")
        assert ended and "error" not in status, f"{server.label}: {status}"


def test_seeking_raw_aac_as_in_mpd(format_pair):
    """Raw AAC cannot seek: `seekcur`, `seek` and `seekid` into the playing song (its decoder still at work:
    40 s do not fit in mpd's buffer) fail as in mpd, with the error in `status`; playback goes on. Stopped,
    `seek 0 3` plays the song from its beginning."""
    uri = "mpcfaad/aac/long.aac"
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        _command(server, "clear", f'add "{uri}"', "play")
        if not mpdtest.wait_until(lambda: float(_status(server).get("elapsed", 0)) > 0.2, mpdtest.scaled(5)):
            pytest.fail(f"{server.label}: {uri} does not play", pytrace=False)
        songid = _status(server)["songid"]
        with server.connect() as c:
            replies = [c.command(line) for line in ("seekcur 5", "seek 0 7", f"seekid {songid} 3")]
        status = _status(server)
        _command(server, "stop", "seek 0 3")
        time.sleep(mpdtest.scaled(0.3))
        restarted = _status(server)
        _command(server, "stop", "clear")
        got[server] = (replies, status.get("state"), status.get("error"), restarted.get("state"),
                       float(restarted.get("elapsed", 99)) < 2.5)
    ref, sut = got[format_pair.ref], got[format_pair.sut]
    assert ref[0] == [b"ACK [5@0] {seekcur} Not seekable\n", b"ACK [5@0] {seek} Not seekable\n",
                      f"ACK [5@0] {{seekid}} Not seekable\n".encode()], ref
    assert ref[1:] == ("play", "Not seekable", "play", True), ref
    assert sut == ref


# ---------------------------------------------------------------------------
# The samples

_recorder = audiofiles.file_recorder
_record = audiofiles.record_queue


def _first_difference(got: bytes, want: bytes) -> str:
    for index, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"first different byte at {index} of {len(got)} (want {len(want)}): got {a}, want {b}"
    return f"lengths differ: got {len(got)} bytes, want {len(want)}"


def _compare(server_factory, format_music, tmp_path, uris, start, formats=PLAYABLE):
    recorders = {kind: (_recorder(server_factory, kind, format_music, tmp_path / kind), tmp_path / kind)
                 for kind in ("ref", "sut")}
    mismatches: list[str] = []
    for uri in uris:
        lines = [f'add "{uri}"', start]
        got = {kind: _record(server, directory, lines) for kind, (server, directory) in recorders.items()}
        (ref_name, ref_data), (sut_name, sut_data) = got["ref"], got["sut"]
        if not ref_name.startswith(f"rec-{formats[uri]}-"):
            mismatches.append(f"{uri} {start}: mpd opened the device as {ref_name}")
        if sut_name != ref_name:
            mismatches.append(f"{uri} {start}: device {sut_name}, mpd's {ref_name}")
        else:
            # mpd's ALSA output completes the last period with silence when it drains; nothing else may differ.
            padding = ref_data[len(sut_data):]
            if ref_data[:len(sut_data)] != sut_data or padding.count(0) != len(padding) or not sut_data:
                mismatches.append(f"{uri} {start}: {_first_difference(sut_data, ref_data)}")
    assert not mismatches, "\n".join(mismatches)


def test_samples_as_mpd(server_factory, format_music, tmp_path):
    """Each playable file, whole: the same device format and bytes as mpd's."""
    _compare(server_factory, format_music, tmp_path, sorted(PLAYABLE), "play")


def test_samples_after_seek_as_mpd(server_factory, format_music, tmp_path):
    """Each Musepack file started with `seek 0 0.37`: the same bytes as mpd's (libmpcdec seeks to the sample)."""
    _compare(server_factory, format_music, tmp_path, SEEKABLE, "seek 0 0.37")


#: mutagen's files that mpd plays with these plugins (its adif.aac goes to mpd's ffmpeg plugin, the SV4/SV5
#: headers and almostempty.mpc are not songs).
MUTAGEN_PLAYABLE = {"click.mpc": "S24_LE", "sv8_header.mpc": "S24_LE", "empty.aac": "S16_LE"}


def test_mutagen_files_samples_as_mpd(server_factory, mutagen_other_music, tmp_path):
    """mutagen's Musepack SV7 and SV8 and ADTS files: the same device format and bytes as mpd's."""
    missing = [name for name in MUTAGEN_PLAYABLE if not (mutagen_other_music / name).exists()]
    assert not missing, f"not in mutagen's test data any more: {missing}"
    _compare(server_factory, mutagen_other_music, tmp_path, sorted(MUTAGEN_PLAYABLE), "play", MUTAGEN_PLAYABLE)


def test_header_replaygain_samples_as_mpd(server_factory, format_music, tmp_path):
    """`replaygain "track"`: Musepack's header ReplayGain (mpcgain's, which mpd's plugin submits over the APE
    tag's) and an AAC file's APE tag ReplayGain scale the samples as in mpd."""
    uris = {"mpcfaad/mpc/replaygain.mpc": "S24_LE", "mpcfaad/aac/ape-tag.aac": "S16_LE"}
    recorders = {kind: (_recorder(server_factory, kind, format_music, tmp_path / kind, replaygain="track"),
                        tmp_path / kind) for kind in ("ref", "sut")}
    mismatches = []
    for uri in sorted(uris):
        got = {kind: _record(server, directory, [f'add "{uri}"', "play"])
               for kind, (server, directory) in recorders.items()}
        mismatch = audiofiles.recording_mismatch(uri, got["ref"], got["sut"])
        if mismatch:
            mismatches.append(mismatch)
    assert not mismatches, "\n".join(mismatches)
