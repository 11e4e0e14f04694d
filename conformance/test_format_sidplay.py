"""C64 SID tunes and AdLib songs (tools/fixtures/sidplay.py, tools/fixtures/adplug.py): mpd's sidplay
(libsidplayfp) and adplug (AdPlug) plugins.

The library directory `sidplay` holds hand-built PSID/RSID tunes (one song, several songs, a second SID chip,
Windows-1252 header texts, no texts), files under the plugin's other suffixes (PRG, P00, MUS, STR, an upper-case
`.SID`) and broken ones; mpd lists every tune as a container directory of `tune_00N.sid` songs. The directory
`adplug` holds RdosPlay RAW captures (tagged, untagged, empty, truncated) and files no AdPlug player loads.
Each case compares mpd and Fermata byte for byte; the audio cases record what both servers' ALSA outputs
write (the `file` PCM plugin) and compare the bytes (AdPlug) or, since mpd's SID output differs from one play
to the next, the pitch and level of each channel (sidplay).
"""

from __future__ import annotations

import array
import math
import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

DIRS = ("sidplay", "adplug")
#: Container songs whose status while playing the cases compare: mono, stereo, an RSID, an untitled tune.
#: Not the PRG: after the pcmfiles cases have played, mpd's decoder thread spins inside libsidplayfp's `play()`
#: on `tune.prg` (a program at $1000 with no BASIC ROM configured), elapsed stays at 0.077 and mpd's main
#: thread then blocks on its player; seen in every full run of the format files, never with the sidplay file
#: alone (libsidplayfp draws its power-on state from the process's shared `rand()`).
PLAYED_SIDS = ("sidplay/three.sid/tune_002.sid", "sidplay/stereo.sid/tune_001.sid", "sidplay/rsid.sid/tune_001.sid",
               "sidplay/Upper.SID/tune_001.sid")
PLAYED_ADLIB = ("adplug/tagged.raw", "adplug/plain.raw")


def test_decoders_lists_both_plugins_as_mpd(format_pair):
    """Their names and suffixes (mpd's upper-case `P00` too), sidplay before adplug."""
    formatcases.decoders_match(format_pair, ["sidplay", "adplug"])


@pytest.mark.parametrize("directory", DIRS)
def test_browse(format_pair, directory):
    formatcases.browse(format_pair, directory)


def test_browse_containers(format_pair):
    for name in ("three.sid", "one.sid", "stereo.sid", "latin.sid", "tune.P00", "Upper.SID"):
        formatcases.browse(format_pair, f"sidplay/{name}")


@pytest.mark.parametrize("directory", DIRS)
def test_search_and_lists(format_pair, directory):
    formatcases.search(format_pair, directory)


def test_find_container_songs(format_pair):
    formatcases.run(format_pair, 'find "(file == \\"sidplay/three.sid/tune_003.sid\\")"\n'
                    'search "(album == \\"three songs\\")"\nfind title "Two Chips (2/2)"\n'
                    'list album group date\nlist title base "sidplay/latin.sid"\n', "find container songs")


@pytest.mark.parametrize("directory", DIRS)
def test_comments_and_pictures(format_pair, format_music, directory):
    formatcases.comments_and_pictures(format_pair, format_music, directory)


def test_comments_in_containers(format_pair):
    songs = [f"sidplay/three.sid/tune_00{n}.sid" for n in (1, 2, 3)] + ["sidplay/one.sid/tune_001.sid"]
    formatcases.run(format_pair, "".join(f'readcomments "{s}"\nreadpicture "{s}" 0\n' for s in songs),
                    "readcomments in a container")


@pytest.mark.parametrize("directory", DIRS + ("sidplay/three.sid",))
def test_queue(format_pair, directory):
    formatcases.queue(format_pair, directory)


def _status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


#: Status fields that depend on timing, or on what earlier tests of the session queued (ids, versions).
VOLATILE = ("elapsed", "time", "bitrate", "songid", "nextsongid", "playlist")


@pytest.mark.parametrize("uri", PLAYED_SIDS + PLAYED_ADLIB)
def test_status_while_playing(format_pair, uri):
    """The audio format and length while playing, and what a seek does (AdPlug songs cannot seek)."""
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        s = formatcases.playing(server, uri)
        got[server.label] = {k: v for k, v in s.items() if k not in VOLATILE}
        got[server.label]["time-total"] = s["time"].split(":")[1]
        with server.connect() as c:
            got[server.label]["seek-reply"] = c.command("seekcur 1")
        time.sleep(mpdtest.scaled(0.5))
        after = _status(server)
        got[server.label]["after-seek"] = (after.get("state"), after.get("audio"))
        audiofiles.commands(server, "stop", "clear")
    ref, sut = got[format_pair.ref.label], got[format_pair.sut.label]
    assert sut == ref, f"{uri}: mpd {ref}\nFermata {sut}"


def test_prg_plays(format_pair):
    """The PRG plays on the system under test as the other tunes do (mpd is left out: see PLAYED_SIDS)."""
    s = formatcases.playing(format_pair.sut, "sidplay/tune.prg/tune_001.sid")
    assert (s.get("state"), s.get("audio"), s.get("time", "").split(":")[-1]) == ("play", "48000:16:1", "0")
    audiofiles.commands(format_pair.sut, "stop", "clear")


def test_broken_files_do_not_play(format_pair):
    """Files the plugins refuse are not in the library: adding them fails the same way."""
    formatcases.run(format_pair, 'add "sidplay/garbage.sid"\nadd "sidplay/empty.sid"\nadd "adplug/garbage.hsc"\n'
                    'add "adplug/zero.rad"\nadd "sidplay/three.sid/tune_009.sid"\n', "add broken files")


def _record_for(server, directory: Path, uri: str, seconds: float) -> tuple[str, bytes]:
    """Plays `uri` for about `seconds` (a SID song without a length never ends), stops, and returns the
    recording once it stopped growing."""
    audiofiles.commands(server, "clear", f'add "{uri}"', "play")
    time.sleep(seconds)
    audiofiles.commands(server, "stop", "clear")
    return audiofiles.settled_recording(server, directory)


def _pitch_and_level(samples: array.array) -> tuple[int, int]:
    """Cycles counted with a Schmitt trigger (half the RMS around the mean) and the RMS level, over
    0.1 s to 1 s of a 48 kHz channel."""
    x = samples[4800:48000]
    mean = sum(x) / len(x)
    rms = math.sqrt(sum((v - mean) ** 2 for v in x) / len(x))
    high, low, above, cycles = mean + rms / 2, mean - rms / 2, x[0] > mean, 0
    for v in x:
        if not above and v > high:
            above, cycles = True, cycles + 1
        elif above and v < low:
            above = False
    return cycles, round(rms)


@pytest.mark.parametrize("uri", ("sidplay/three.sid/tune_003.sid", "sidplay/stereo.sid/tune_002.sid"))
def test_sid_playback_matches_mpds_pitch_and_level(server_factory, format_music, tmp_path, uri):
    """What the ALSA output writes has mpd's format, and per channel mpd's pitch and level.

    Not the same bytes: mpd's own output differs from one play to the next (libsidplayfp's default power-on
    delay is random, and its dither draws from the process's rand()), so two mpd recordings of a song differ
    in nearly every sample; the pitch (which song, which SID chip on which channel) and the level (filter,
    mixing) do not. The songs have no length, so both servers are stopped after 2 s."""
    got = {}
    for kind in ("ref", "sut"):
        server = audiofiles.file_recorder(server_factory, kind, format_music, tmp_path / kind)
        got[kind] = _record_for(server, tmp_path / kind, uri, mpdtest.scaled(2))
    (ref_name, ref), (sut_name, sut) = got["ref"], got["sut"]
    assert sut_name == ref_name
    channels = int(ref_name[:-len(".raw")].split("-")[3])
    ref_samples, sut_samples = array.array("h", ref), array.array("h", sut)
    for channel in range(channels):
        want = _pitch_and_level(ref_samples[channel::channels])
        have = _pitch_and_level(sut_samples[channel::channels])
        assert want[0] > 100, f"{uri}: mpd's channel {channel} is not a tone: {want}"
        assert abs(have[0] - want[0]) <= 2 and abs(have[1] - want[1]) <= want[1] * 0.02, \
            f"{uri} channel {channel}: Fermata (cycles, RMS) {have}, mpd {want}"


#: mpd's ALSA output fills the last period with silence when it drains, and sometimes writes another
#: period of it (its buffer is 500 ms); Fermata's does not, so mpd's recording may end in zeros more.
PADDING_SECONDS = 0.5


@pytest.mark.parametrize("uri", PLAYED_ADLIB)
def test_adplug_samples_equal_mpds(server_factory, format_music, tmp_path, uri):
    """Every sample the ALSA output writes for the whole song equals what mpd's writes."""
    got = {}
    for kind in ("ref", "sut"):
        server = audiofiles.file_recorder(server_factory, kind, format_music, tmp_path / kind)
        got[kind] = audiofiles.record_queue(server, tmp_path / kind, [f'add "{uri}"', "play"])
    (ref_name, ref), (sut_name, sut) = got["ref"], got["sut"]
    assert sut_name == ref_name
    assert len(ref) > 0 and any(ref)
    _, sample, rate, channels = ref_name[:-len(".raw")].split("-")
    frame = 2 * int(channels)
    padding = len(ref) - len(sut)
    if sut != ref[:len(sut)] or not 0 <= padding < int(rate) * PADDING_SECONDS * frame or any(ref[len(sut):]):
        first = next((i for i, (a, b) in enumerate(zip(sut, ref)) if a != b), min(len(sut), len(ref)))
        pytest.fail(f"{uri}: {len(sut)} bytes vs mpd's {len(ref)}; first difference at byte {first}; "
                    f"frames {len(sut) // frame} vs {len(ref) // frame}", pytrace=False)
