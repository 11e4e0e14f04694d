"""Modules played by mpd's mikmod plugin (tools/fixtures/mikmod.py), compared between mpd and the system under
test.

mikmod comes after openmpt and modplug in mpd's order: it sees the suffixes only it claims (`stx`, `uni`) and
the files both earlier plugins refuse. Its scan stores a title and nothing else (no duration, no format); its
decoder mixes 16-bit stereo at 44100 Hz until libmikmod stops playing (no loop), reports no length and cannot
seek: a seek while it decodes fails with "Not seekable", one after it finished restarts the song.

* the library: browsing, searching, readcomments, readpicture and the queue of the directory; the `decoders`
  entry;
* the player: `status` while playing and after seeks;
* the samples: what an ALSA output on alsa-lib's `file` plugin receives from both servers, byte for byte.
"""

from __future__ import annotations

import time

import pytest

import audiofiles
import formatcases
import mpdtest

DIR = "mikmod"
PLAYED = ("mikmod/tune.stx", "mikmod/tune.uni", "mikmod/untitled.stx", "mikmod/jumpback.uni")

_status = audiofiles.status_of
_command = audiofiles.commands


@pytest.mark.parametrize("case", [formatcases.browse, formatcases.search, formatcases.queue],
                         ids=["browse", "search", "queue"])
def test_library(format_pair, case):
    case(format_pair, DIR)


def test_comments_and_pictures(format_pair, format_music):
    formatcases.comments_and_pictures(format_pair, format_music, DIR)


def test_decoders_entry(format_pair):
    """The `decoders` reply's mikmod entry, and its place: after modplug, before ffmpeg."""
    formatcases.decoders_match(format_pair, ["modplug", "mikmod", "ffmpeg"])


def _playing(server, uri: str) -> dict[str, str]:
    _command(server, "clear", f'add "{uri}"', "play")
    if not mpdtest.wait_until(lambda: float(_status(server).get("elapsed", 0)) > 0.3, mpdtest.scaled(10)):
        pytest.fail(f"{server.label}: {uri} does not play", pytrace=False)
    return _status(server)


#: Status fields that depend on timing, or on what earlier tests of the session queued (ids, versions).
VOLATILE = ("elapsed", "time", "bitrate", "songid", "nextsongid", "playlist")


@pytest.mark.parametrize("uri", PLAYED)
def test_status_while_playing(format_pair, uri):
    """The audio format, no duration; a seek once the decoder has finished (the module fits in the buffer)
    starts the song again."""
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        s = _playing(server, uri)
        state = {k: v for k, v in s.items() if k not in VOLATILE}
        state["time-total"] = s["time"].split(":")[1]
        time.sleep(mpdtest.scaled(0.5))
        with server.connect() as c:
            state["seek-reply"] = c.command("seekcur 3")
        time.sleep(mpdtest.scaled(0.5))
        after = _status(server)
        state["after-seek"] = (after.get("state"), after.get("audio"), after.get("error"),
                               float(after.get("elapsed", "99")) < 2.5)
        _command(server, "stop", "clear")
        got[server.label] = state
    ref, sut = got[format_pair.ref.label], got[format_pair.sut.label]
    assert sut == ref, f"{uri}: mpd {ref}\nFermata {sut}"


def test_seeking_while_decoding_fails(format_pair):
    """A 5-minute module (its decoder still at work): `seekcur` fails with "Not seekable", playback goes on."""
    uri = "mikmod/long.stx"
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        _playing(server, uri)
        with server.connect() as c:
            reply = c.command("seekcur 60")
        status = _status(server)
        _command(server, "stop", "clear")
        got[server.label] = (reply, status.get("state"), status.get("error"), float(status.get("elapsed", 99)) < 5)
    ref, sut = got[format_pair.ref.label], got[format_pair.sut.label]
    assert ref == (b"ACK [5@0] {seekcur} Not seekable\n", "play", "Not seekable", True), ref
    assert sut == ref


def test_samples_as_mpd(server_factory, format_music, tmp_path):
    """Each played module, whole: the same device format and bytes as mpd's (mpd's ALSA output completes the
    last period with silence when it drains)."""
    recorders = {kind: (audiofiles.file_recorder(server_factory, kind, format_music, tmp_path / kind), tmp_path / kind)
                 for kind in ("ref", "sut")}
    mismatches = []
    for uri in PLAYED:
        got = {kind: audiofiles.record_queue(server, directory, [f'add "{uri}"', "play"])
               for kind, (server, directory) in recorders.items()}
        (ref_name, ref), (sut_name, sut) = got["ref"], got["sut"]
        padding = ref[len(sut):]
        if ref_name != "rec-S16_LE-44100-2.raw" or sut_name != ref_name:
            mismatches.append(f"{uri}: device {sut_name}, mpd's {ref_name}")
        elif not sut or not any(sut) or ref[:len(sut)] != sut or any(padding) or len(padding) >= 44100 * 4 // 2:
            first = next((i for i, (a, b) in enumerate(zip(sut, ref)) if a != b), min(len(sut), len(ref)))
            mismatches.append(f"{uri}: {len(sut)} bytes vs mpd's {len(ref)}, first difference at {first}")
    assert not mismatches, "\n".join(mismatches)
