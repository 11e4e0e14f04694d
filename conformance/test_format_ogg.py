"""Ogg Vorbis and Ogg Opus: mpd and Fermata on the ogg/ directory of the multi-format library.

* Metadata (tools/fixtures/ogg.py): browsing, searching, listing, readcomments, readpicture and the
  queue of every directory, byte for byte.
* The `decoders` stanzas of the vorbis and opus plugins (suffixes and MIME types).
* `status` after a paused seek (elapsed, time, duration, bitrate; `audio` is the player's business and
  is left out as in test_playback.py).
* Samples: an ALSA output on alsa-lib's `file` plugin records what each server writes to the device.
  Opus must be what `opusdec --no-dither` decodes, bit for bit, for mpd (which proves the reference) and
  for Fermata; Vorbis must be mpd's own float recording bit for bit (5.1 included, so the channel order
  is mpd's), and within a 16-bit step of sox's decode (libvorbisfile).
"""

from __future__ import annotations

import array
import os
import subprocess
import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

DIRECTORIES = ["ogg/vorbis", "ogg/vorbis-tags", "ogg/opus", "ogg/opus-tags", "ogg/chained", "ogg/damaged"]


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_browse(format_pair, directory):
    formatcases.browse(format_pair, directory)


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_search(format_pair, directory):
    formatcases.search(format_pair, directory)


#: Comments holding invalid UTF-8: mpd's readcomments sends their bytes as they are, and so does Fermata
#: (its pairs are RawText-decoded); compared on their own below, with readpicture.
INVALID_UTF8 = {"ogg/vorbis-tags/invalid-utf8.ogg", "ogg/opus-tags/invalid-utf8.opus"}


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_comments_and_pictures(format_pair, format_music, directory):
    names = [n for n in formatcases.files(format_music, directory) if n not in INVALID_UTF8]
    arg = mpdtest.arg
    formatcases.run(format_pair, "".join(f"readcomments {arg(n)}\n" for n in names), f"readcomments in {directory}")
    formatcases.run(format_pair, "binarylimit 1048576\n" + "".join(f"readpicture {arg(n)} 0\n" for n in names),
                    f"readpicture in {directory}")
    formatcases.run(format_pair, "binarylimit 64\n" + "".join(f"readpicture {arg(n)} 64\n" for n in names),
                    f"readpicture second chunk in {directory}")


@pytest.mark.parametrize("uri", sorted(INVALID_UTF8))
def test_readcomments_invalid_utf8(format_pair, uri):
    formatcases.run(format_pair, f"readcomments {mpdtest.arg(uri)}\nreadpicture {mpdtest.arg(uri)} 0\n", uri)


@pytest.mark.parametrize("directory", DIRECTORIES)
def test_queue(format_pair, directory):
    formatcases.queue(format_pair, directory)


def test_decoders_stanzas(format_pair):
    formatcases.decoders_match(format_pair, ["vorbis", "oggflac", "opus"])


def test_files_of_other_plugins(format_pair):
    """Leading junk (FFmpeg reads it in mpd) and Ogg FLAC (the oggflac plugin): the vorbis and opus
    plugins must pass them on."""
    formatcases.browse(format_pair, "ogg/other-plugins")


# ---------------------------------------------------------------------------
# status after a seek

def status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


#: Files whose end-of-stream page mpd's decoder finds (it misses it in files so short that its first reads
#: passed the last page's start, rate-8000.ogg and chained-vorbis.ogg: it then answers `seekcur` with
#: "Not seekable" when its decoder still runs, where Fermata's decoder seeks by decoding from the start).
SEEKS = [("ogg/vorbis/long-48k.ogg", 1.25), ("ogg/vorbis/stereo-q3.ogg", 2.5), ("ogg/opus/long.opus", 7.75),
         ("ogg/opus/stereo-44k.opus", 1.25), ("ogg/opus/mono.opus", 0.3)]


@pytest.mark.parametrize("uri,seconds", SEEKS)
def test_status_after_paused_seek(format_pair, uri, seconds):
    def probe(server):
        # Paused once the song is heard (what the player heard decides `bitrate`, in mpd too), and status once
        # the seek is done, rather than after a fixed time that a loaded machine overruns.
        with server.connect() as c:
            for line in ("clear", f'add "{uri}"', "play"):
                assert not c.command(line).startswith(b"ACK"), line
        assert mpdtest.wait_until(lambda: "audio" in status(server), mpdtest.scaled(5))
        with server.connect() as c:
            assert not c.command("pause 1").startswith(b"ACK")
        assert mpdtest.wait_until(lambda: status(server).get("state") == "pause", mpdtest.scaled(5))
        with server.connect() as c:
            assert not c.command(f"seekcur {seconds}").startswith(b"ACK")
        mpdtest.wait_until(lambda: status(server).get("elapsed") == f"{seconds:.3f}", mpdtest.scaled(5))
        s = status(server)
        server.query("stop")
        return {k: s.get(k) for k in ("state", "elapsed", "time", "duration", "bitrate", "error")}

    assert probe(format_pair.sut) == probe(format_pair.ref)


# ---------------------------------------------------------------------------
# Samples

def command(server, *lines: str) -> None:
    with server.connect() as c:
        for line in lines:
            reply = c.command(line)
            assert not reply.startswith(b"ACK"), f"{line!r} -> {reply!r}"


def recording(server_factory, kind: str, music: Path, tmp: Path, uri: str, want_bytes: int) -> tuple[str, bytes]:
    """What `kind` ("ref" or "sut") writes to an ALSA `file` PCM while playing `uri` to the end; mpd's
    silence after the song (checked to be silence) is cut off."""
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "alsa.conf"
    audiofiles.write_alsa_config(config, audiofiles.file_pcm("rec", str(tmp / "rec-%f-%r-%c.raw")))
    server = server_factory(
        kind, music=music, env={"ALSA_CONFIG_PATH": str(config)},
        outputs=[{"type": "alsa", "name": "Recorder", "device": "rec", "mixer_type": "none"}])
    command(server, "clear", f'add "{uri}"', "play")
    assert mpdtest.wait_until(lambda: status(server).get("state") == "stop", 30), "the end of the queue"
    deadline = time.monotonic() + mpdtest.scaled(10)
    while True:
        files = list(tmp.glob("rec-*.raw"))
        if len(files) == 1 and files[0].stat().st_size >= want_bytes:
            break
        if time.monotonic() > deadline:
            pytest.fail(f"{kind}: waited for {want_bytes} bytes; found "
                        f"{ {f.name: f.stat().st_size for f in files} }\n{server.log_tail()}", pytrace=False)
        time.sleep(0.02)
    time.sleep(mpdtest.scaled(0.2))
    data = files[0].read_bytes()
    if kind == "ref" and len(data) > want_bytes:
        # mpd's ALSA output may fill the last period with silence when it drains (seen on loaded machines).
        assert not any(data[want_bytes:]), "mpd wrote more than the song (not silence)"
        data = data[:want_bytes]
    return files[0].name, data


def opusdec(path: Path) -> bytes:
    audiofiles.require_tools("opusdec")
    return subprocess.run(["opusdec", "--quiet", "--rate", "48000", "--no-dither", str(path), "-"],
                          check=True, capture_output=True).stdout


def sox_s16(path: Path) -> array.array:
    raw = subprocess.run(["sox", str(path), "-t", "raw", "-e", "signed", "-b", "16", "-"], check=True,
                         capture_output=True).stdout
    return array.array("h", raw)


@pytest.mark.parametrize("uri,channels", [("ogg/opus/stereo-44k.opus", 2), ("ogg/opus/mono.opus", 1),
                                          ("ogg/opus/long.opus", 2)])
def test_opus_samples_equal_opusdec_no_dither(server_factory, format_music, tmp_path, uri, channels):
    want = opusdec(format_music / uri)
    for kind in ("ref", "sut"):
        name, data = recording(server_factory, kind, format_music, tmp_path / kind, uri, len(want))
        assert name == f"rec-S16_LE-48000-{channels}.raw", kind
        assert data == want, f"{kind}: " + audiofiles.first_difference(array.array("h", data), array.array("h", want))


def vorbis_recordings(server_factory, format_music, tmp_path, uri, rate, channels, seconds):
    """mpd's and Fermata's recordings of `uri` (`seconds` long) as float arrays."""
    want = round(seconds * rate) * channels
    ref_name, ref_data = recording(server_factory, "ref", format_music, tmp_path / "ref", uri, want * 4)
    assert ref_name == f"rec-FLOAT_LE-{rate}-{channels}.raw"
    name, data = recording(server_factory, "sut", format_music, tmp_path / "sut", uri, want * 4)
    assert name == ref_name
    return array.array("f", ref_data), array.array("f", data)


VORBIS_SAMPLES = [("ogg/vorbis/stereo-q3.ogg", 44100, 2, 3.0), ("ogg/vorbis/rate-22050.ogg", 22050, 2, 2.0),
                  ("ogg/vorbis/mono-q0.ogg", 44100, 1, 1.5), ("ogg/chained/chained-vorbis.ogg", 44100, 1, 2.5)]


@pytest.mark.parametrize("uri,rate,channels,seconds", VORBIS_SAMPLES)
def test_vorbis_samples_equal_mpd(server_factory, format_music, tmp_path, uri, rate, channels, seconds):
    ref, got = vorbis_recordings(server_factory, format_music, tmp_path, uri, rate, channels, seconds)
    assert got == ref, audiofiles.first_difference(got, ref)
    if "chained" not in uri:
        # sox (libvorbisfile, 16-bit; it stops after the first chain) agrees within a 16-bit step.
        reference = sox_s16(format_music / uri)
        assert len(reference) == len(got)
        assert max(abs(g - r / 32768) for g, r in zip(got, reference)) <= 1 / 32768 + 1e-7


def test_vorbis_surround_reaches_alsa_as_from_mpd(server_factory, format_music, tmp_path):
    """5.1: the decoder delivers Vorbis's channel order (mpd's), and the ALSA output moves it into ALSA's
    (FL FR BL BR FC LFE, mpd's PcmExport `alsa_channel_order`): the device gets mpd's samples in mpd's order."""
    ref, got = vorbis_recordings(server_factory, format_music, tmp_path, "ogg/vorbis/surround-5.1.ogg",
                                 48000, 6, 2.0)
    assert got == ref


def test_opus_output_gain_left_to_replay_gain(server_factory, format_music, tmp_path):
    """gain.opus has a +3 dB output gain in its OpusHead: mpd hands it to ReplayGain (off here) and sends
    libopus's samples unchanged, so the device gets what opusdec decodes with that gain cancelled."""
    want = subprocess.run(["opusdec", "--quiet", "--rate", "48000", "--no-dither", "--gain", "-3",
                           str(format_music / "ogg/opus/gain.opus"), "-"], check=True, capture_output=True).stdout
    for kind in ("ref", "sut"):
        name, data = recording(server_factory, kind, format_music, tmp_path / kind, "ogg/opus/gain.opus", len(want))
        assert name == "rec-S16_LE-48000-1.raw", kind
        assert data == want, kind
