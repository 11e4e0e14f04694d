"""Tracker modules and chiptunes (tools/fixtures/trackers.py): mpd's openmpt and gme plugins.

The library directory `trackers` holds hand-built files (Debian ships no encoder for these formats):
a 3-song NSF that mpd lists as a container directory of `tune_00N.nsf` songs, a 1-song NSF, a VGM
with a GD3 tag, an SPC with an ID666 tag, ProTracker modules, and broken or truncated copies.  Each
case compares mpd and Fermata byte for byte; the audio cases record what both servers' ALSA
outputs write (the `file` PCM plugin) and compare the bytes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest

DIR = "trackers"
#: Songs whose playback the cases compare: container songs (one timed by an M3U playlist), a module, VGMs, a module
#: played by libmodplug.
PLAYED = ("trackers/square.nsf/tune_002.nsf", "trackers/tune.mod", "trackers/psg.vgm",
          "trackers/listed.nsf/tune_001.nsf", "trackers/packed.vgz", "trackers/tune.dfm")


def test_browse(format_pair):
    formatcases.browse(format_pair, DIR)
    formatcases.browse(format_pair, f"{DIR}/square.nsf")
    formatcases.browse(format_pair, f"{DIR}/listed.nsf")


def test_search_and_lists(format_pair):
    formatcases.search(format_pair, DIR)
    formatcases.run(format_pair, 'find "(file == \\"trackers/square.nsf/tune_003.nsf\\")"\n'
                    'search "(album == \\"square game\\")"\nlist album group date\n', "find container songs")


def test_comments_and_pictures(format_pair, format_music):
    formatcases.comments_and_pictures(format_pair, format_music, DIR)
    # Songs inside a container: mpd opens their path as a file first, which fails.
    songs = [f"{DIR}/square.nsf/tune_00{n}.nsf" for n in (1, 2, 3)]
    formatcases.run(format_pair, "".join(f'readcomments "{s}"\nreadpicture "{s}" 0\n' for s in songs),
                    "readcomments in a container")


def test_queue(format_pair):
    formatcases.queue(format_pair, DIR)
    formatcases.queue(format_pair, f"{DIR}/square.nsf")


def _status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def _playing(server, uri: str) -> dict[str, str]:
    return formatcases.playing(server, uri)


#: Status fields that depend on timing, or on what earlier tests of the session queued (ids, versions).
VOLATILE = ("elapsed", "time", "bitrate", "songid", "nextsongid", "playlist")


@pytest.mark.parametrize("uri", PLAYED)
def test_status_while_playing(format_pair, uri):
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        s = _playing(server, uri)
        got[server.label] = {k: v for k, v in s.items() if k not in VOLATILE}
        got[server.label]["time-total"] = s["time"].split(":")[1]
        with server.connect() as c:
            c.command("seekcur 1")
        time.sleep(mpdtest.scaled(0.5))
        after = _status(server)
        got[server.label]["after-seek"] = (after.get("state"), after.get("audio"),
                                          float(after.get("elapsed", "0")) >= 1.0)
        with server.connect() as c:
            c.command("stop")
            c.command("clear")
    ref, sut = got[format_pair.ref.label], got[format_pair.sut.label]
    assert sut == ref, f"{uri}: mpd {ref}\nFermata {sut}"


def test_seeking_into_the_fade_and_past_the_end(format_pair):
    """mpd's gme decoder reports the play length plus the 8 s fade: a seek into the fade plays on, one past
    it ends the song."""
    uri = "trackers/square.nsf/tune_002.nsf"
    got = {}
    for server in (format_pair.ref, format_pair.sut):
        _playing(server, uri)
        states = []
        for target in ("155", "170"):
            with server.connect() as c:
                c.command(f"seekcur {target}")
            if target == "155":
                mpdtest.wait_until(lambda: float(_status(server).get("elapsed", "0")) >= 155.3, mpdtest.scaled(10))
            else:
                mpdtest.wait_until(lambda: _status(server).get("state") == "stop", mpdtest.scaled(10))
            s = _status(server)
            states.append((s.get("state"), s.get("duration"), float(s.get("elapsed", "0")) >= 155))
        got[server.label] = states
        with server.connect() as c:
            c.command("stop")
            c.command("clear")
    ref, sut = got[format_pair.ref.label], got[format_pair.sut.label]
    assert sut == ref, f"mpd {ref}\nFermata {sut}"


def _record(server_factory, kind: str, music: Path, tmp: Path, uri: str) -> tuple[str, bytes]:
    tmp.mkdir(parents=True, exist_ok=True)
    config = tmp / "alsa.conf"
    audiofiles.write_alsa_config(config, audiofiles.file_pcm("rec", str(tmp / "rec-%f-%r-%c.raw")))
    server = server_factory(
        kind, music=music, env={"ALSA_CONFIG_PATH": str(config)},
        outputs=[{"type": "alsa", "name": "Recorder", "device": "rec", "mixer_type": "none"}])
    with server.connect() as c:
        for line in ("clear", f'add "{uri}"', "play"):
            reply = c.command(line)
            assert not reply.startswith(b"ACK"), f"{kind}: {line!r} -> {reply!r}"
    if not mpdtest.wait_until(lambda: _status(server).get("state") == "stop", mpdtest.scaled(60)):
        pytest.fail(f"{kind} did not finish {uri}", pytrace=False)
    # The file plugin writes what it buffered when the device is drained or closed: wait for it to settle.
    last = None
    deadline = time.monotonic() + mpdtest.scaled(10)
    while time.monotonic() < deadline:
        files = sorted(tmp.glob("rec-*.raw"))
        now = [(f.name, f.stat().st_size) for f in files]
        if files and now == last:
            break
        last = now
        time.sleep(mpdtest.scaled(0.3))
    files = sorted(tmp.glob("rec-*.raw"))
    assert len(files) == 1, f"{kind}: recordings {[f.name for f in files]}"
    return files[0].name, files[0].read_bytes()


#: mpd's ALSA output fills the last period with silence when it drains, and sometimes writes another
#: period of it (its buffer is 500 ms); Fermata's does not, so mpd's recording may end in zeros more.
PADDING_SECONDS = 0.5


@pytest.mark.parametrize("uri", PLAYED)
def test_samples_equal_mpds(server_factory, format_music, tmp_path, uri):
    """Every sample the ALSA output writes for the whole song equals what mpd's writes."""
    ref_name, ref = _record(server_factory, "ref", format_music, tmp_path / "ref", uri)
    sut_name, sut = _record(server_factory, "sut", format_music, tmp_path / "sut", uri)
    assert sut_name == ref_name
    assert len(ref) > 0 and any(ref)
    _, sample, rate, channels = ref_name[:-len(".raw")].split("-")
    frame = {"FLOAT_LE": 4, "S16_LE": 2, "S32_LE": 4, "S24_LE": 4}[sample] * int(channels)
    padding = len(ref) - len(sut)
    if sut != ref[:len(sut)] or not 0 <= padding < int(rate) * PADDING_SECONDS * frame or any(ref[len(sut):]):
        first = next((i for i, (a, b) in enumerate(zip(sut, ref)) if a != b), min(len(sut), len(ref)))
        tail = ref[len(sut):] if len(ref) > len(sut) else sut[len(ref):]
        pytest.fail(f"{uri}: {len(sut)} bytes vs mpd's {len(ref)}; first difference at byte {first}; "
                    f"longer one's tail all zero: {not any(tail)}; frames {len(sut) // frame} vs {len(ref) // frame}",
                    pytrace=False)


def test_updating_a_container_song_deletes_it(format_pair):
    """mpd's quirk: a container song is no file on disk, so `update` of its URI deletes it (until the
    container file changes).  Last in this file: it changes the library of the session's servers."""
    for server in (format_pair.ref, format_pair.sut):
        server.query('update "trackers/square.nsf/tune_003.nsf"')
        if not mpdtest.wait_until(lambda: "updating_db" not in _status(server), mpdtest.scaled(10)):
            pytest.fail(f"{server.label}: the update did not finish", pytrace=False)
    formatcases.browse(format_pair, f"{DIR}/square.nsf")
    formatcases.run(format_pair, "count base trackers\n", "count after the update")
