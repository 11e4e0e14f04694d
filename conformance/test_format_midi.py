"""MIDI files (tools/fixtures/midi.py): mpd's fluidsynth plugin, compared between mpd and the system under test.

mpd's scan of a `.mid` file only checks that it starts with `MThd` (no tags, no duration, no format); its
wildmidi plugin is compiled in but absent (it needs /etc/timidity/timidity.cfg). Playback loads the plugin's
SoundFont, by default /usr/share/sounds/sf2/FluidR3_GM.sf2, which this machine does not have (Debian's
fluid-soundfont-gm is not installed): every MIDI file fails to decode, and the player goes on with the next
song, as in mpd. (Playing with another SoundFont needs a `decoder` block, which Fermata does not read yet; the
unit tests play TimGM6mb.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

DIR = "midi"
DEFAULT_SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")

_status = audiofiles.status_of
_command = audiofiles.commands


def test_library(format_pair, format_music):
    """Browsing, searching, readcomments and readpicture, and the queue of the directory."""
    for case in (formatcases.browse, formatcases.search, formatcases.queue):
        case(format_pair, DIR)
    formatcases.comments_and_pictures(format_pair, format_music, DIR)


def test_decoders_list_fluidsynth_and_not_wildmidi(format_pair):
    """fluidsynth's entry (`suffix: mid`), between mikmod and ffmpeg; wildmidi absent from both (no
    /etc/timidity/timidity.cfg)."""
    formatcases.decoders_match(format_pair, ["mikmod", "fluidsynth", "ffmpeg"])
    for server in (format_pair.ref, format_pair.sut):
        assert "wildmidi" not in formatcases.decoder_entries(server.query("decoders"))


@pytest.mark.skipif(DEFAULT_SOUNDFONT.exists(), reason="the default SoundFont is installed: mpd plays MIDI here")
@pytest.mark.parametrize("uris", [
    ("midi/tune.mid",),
    ("midi/tune.mid", "midi/chords.mid"),
])
def test_playing_without_the_default_soundfont_fails_as_in_mpd(format_pair, uris):
    """Each song fails to decode; the player moves on and stops at the end with the last song's error."""
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        _command(server, "clear", *(f'add "{uri}"' for uri in uris))
        # mpd's `play` waits for its player thread, and when the decoder has already failed by then (it fails in
        # milliseconds here, sooner or later than that wait depending on the machine's load) the reply is that
        # failure instead of OK; either is mpd's answer.
        reply = server.query("play")
        assert reply in (b"OK\n", f"ACK [5@0] {{play}} Failed to decode {uris[0]}\n".encode()), (server.label, reply)
        if not mpdtest.wait_until(lambda: "error" in _status(server) and _status(server).get("state") == "stop",
                                  mpdtest.scaled(5)):
            pytest.fail(f"{server.label}: {_status(server)}", pytrace=False)
        status = _status(server)
        _command(server, "clearerror", "clear")
        got[server.label] = (status.get("state"), status.get("song"), status.get("error"))
    ref, sut = got[format_pair.ref.label], got[format_pair.sut.label]
    assert ref == ("stop", str(len(uris) - 1), f"Failed to decode {uris[-1]}"), ref
    assert sut == ref
