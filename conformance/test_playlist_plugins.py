"""Playlist files inside the music directory: mpd's m3u, extm3u, pls, xspf, asx, rss and cue plugins.

mpd and the system under test on a library of their own (tools/fixtures/playlists.py, built with
``make-format-fixtures.py --only playlists``: its songs and playlists would change the root listings,
`stats` and queue ids of the shared format library), compared byte for byte:

* browsing: `lsinfo`, `listall`, `listallinfo`, `listfiles` of the directories (`playlist:` entries);
* `listplaylist` and `listplaylistinfo` of every playlist (database songs with their full blocks merged
  with the playlist's tags, other entries as `file:` or with the tags the playlist gave);
* `load` with and without a range, then `playlistinfo`;
* a cue sheet in a FLAC file's CUESHEET tag (mpd's embcue plugin), each track a range of that file;
* where the playlist directory comes first (a stored playlist named like a music-directory playlist),
  and the commands that refuse music-directory playlists (`playlistadd`, `save`).

Playlists with absolute paths depend on where the library is: this module writes them into it before
the servers start.
"""

from __future__ import annotations

import array
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest
from mpdtest import arg

PLAYLISTS = [
    "top.m3u", "lists/plain.m3u", "lists/ext.m3u", "lists/header-spaces.m3u8", "lists/no-header.m3u8",
    "lists/bom.m3u", "lists/crlf.m3u", "lists/empty.m3u", "lists/comments.m3u", "lists/nul.m3u",
    "lists/non-utf8.m3u", "lists/huge-line.m3u", "lists/upper.M3U", "lists/range.m3u", "lists/list.pls",
    "lists/late-count.pls", "lists/zero.pls", "lists/no-count.pls", "lists/no-section.pls", "lists/list.xspf",
    "lists/bad.xspf", "lists/not-xml.xspf", "lists/empty.xspf", "lists/list.asx", "lists/feed.rss",
    "lists/absolute.m3u", "cue/album.cue", "cue/odd.cue", "cue/empty.cue", "lists/missing.m3u",
    "songs/one.flac", "embedded/sheet.flac", "embedded/plain.flac", "embedded/refs.m3u", "lists", "lists/",
    "lists/../top.m3u", "/lists/plain.m3u",
]


@pytest.fixture(scope="module")
def playlist_music() -> Path:
    music = (formatcases.format_library("playlists", only="playlists") / "playlists").resolve()
    absolute = (f"{music}/songs/one.flac\nfile://{music}/songs/two.flac\n{music}/lists/../songs/three.flac\n"
                f"{music}/songs/missing.flac\n{music}\n{music}/\nfile://{music}/../elsewhere.flac\n"
                f"file://relative.flac\n{music}/songs/nested/four.flac\n")
    path = music / "lists" / "absolute.m3u"
    if not path.exists() or path.read_text() != absolute:
        path.write_text(absolute)
        os.utime(path, (1_600_000_000, 1_600_000_000))
    return music


@pytest.fixture(scope="module")
def pair(playlist_music, server_pair):
    servers = server_pair(playlist_music)
    servers.require_sut()
    return servers


@pytest.mark.parametrize("directory", [
    # embedded/: mpd marks a song whose tags have a CUESHEET pair (`has_playlist`) and lists it as a playlist
    # too, after its song block, wherever the database prints songs (lsinfo, listall(info), find, search).
    # cue/: mpd 0.23.12 lists a cue sheet also as a directory of virtual songs (`album.cue/track0001`…, the
    # cue plugin's `as_directory`) and hides the file they name from listings (`hide_playlist_targets`).
    "lists", "songs", "songs/nested", "embedded", "cue",
    # The root's recursive listings include cue/.
    "",
])
def test_browse(pair, directory):
    formatcases.browse(pair, directory)


def test_lsinfo_root(pair):
    formatcases.run(pair, "lsinfo\nlsinfo /\n", "lsinfo root")


def test_list_file_has_no_playlist_lines(pair):
    # `list file` prints each song's file: line alone: no `playlist:` line after a song holding a cue sheet, as
    # `listall` prints one; the files a cue sheet names stay hidden.
    formatcases.run(pair, "list file\nlist file \"(base 'embedded')\"\nlist file \"(base 'cue')\"\n", "list file")
    embedded = pair.sut.query("list file \"(base 'embedded')\"")
    assert b"file: embedded/" in embedded and b"playlist:" not in embedded


@pytest.mark.parametrize("playlist", PLAYLISTS)
def test_list(pair, playlist):
    p = arg(playlist)
    formatcases.run(pair, f"listplaylist {p}\nlistplaylistinfo {p}\n", f"list {playlist}")


@pytest.mark.parametrize("playlist", PLAYLISTS)
def test_load(pair, playlist):
    p = arg(playlist)
    formatcases.run(pair, f"clear\nload {p}\nplaylistinfo\nclear\n", f"load {playlist}")


@pytest.mark.parametrize("window", ["0:1", "1:3", "2:", "3:2", "4:100", "9:", "0:0", "x", "1:2 0", "0:2 9"])
@pytest.mark.parametrize("playlist", ["lists/range.m3u", "lists/list.pls", "cue/album.cue", "lists/ext.m3u",
                                      "embedded/sheet.flac"])
def test_load_range(pair, playlist, window):
    p = arg(playlist)
    formatcases.run(pair, f"clear\nadd songs/one.flac\nload {p} {window}\nplaylistinfo\nclear\n",
                    f"load {playlist} {window}")


def test_find_marks_embedded_sheets(pair):
    """find and search print a song's playlist line after its block, sorted or not."""
    formatcases.run(pair, "find base embedded\nfind base embedded sort Title\nsearch title sheet\n",
                    "find embedded")


def test_tag_types(pair):
    """Tags the playlist gives are filtered by the client's tag types like the database's."""
    formatcases.run(pair, "tagtypes clear\ntagtypes enable Title Name\nlistplaylistinfo lists/ext.m3u\n"
                          "listplaylistinfo cue/album.cue\ntagtypes all\n", "tagtypes")


def test_playlist_directory_first(pair):
    """A stored playlist named like a playlist of the music directory's root is the one listed."""
    formatcases.run(pair, "save top.m3u\nlistplaylist top.m3u\nrm top.m3u\nlistplaylist top.m3u\n",
                    "playlist directory first")


def test_refusals(pair):
    formatcases.run(pair, "playlistadd lists/plain.m3u songs/one.flac\nsave lists/new.m3u\n"
                          "playlistclear lists/plain.m3u\nrm lists/plain.m3u\nlistplaylists\n"
                          "load http://\nlistplaylist lists/plain.m3u/x\n", "refusals")


# ---------------------------------------------------------------------------
# cue sheets as directories of virtual songs (mpd's cue plugin `as_directory`, `hide_playlist_targets`)

def test_cue_directories(pair):
    """A cue sheet's directory and its tracks (each a `Range` of the file, completed with that file's tags), and
    the file they name, hidden from listings but still found by its URI."""
    formatcases.run(pair, "lsinfo cue/album.cue\nlsinfo cue/odd.cue\nlistall cue/album.cue\nlistallinfo cue/odd.cue\n"
                          "lsinfo cue/album.flac\nlsinfo cue/album.cue/track0002\nlsinfo cue/album.cue/track0009\n"
                          "listall cue/album.cue/track0001\nlistallinfo\n", "cue directories")


def test_cue_tracks_searched(pair):
    """find, search, list and count see the tracks (not the file they name); count adds the ranges' lengths,
    count group and stats the file's."""
    formatcases.run(pair, "find title Opening\nsearch title e\nfind artist 'File Artist'\nfind file cue/album.flac\n"
                          "find base cue/album.flac\nfind base cue/album.cue sort -Title\nsearch any cue window 1:3\n"
                          "find '(Range == \"x\")'\nlist title base cue\nlist album\nlist artist group album\n"
                          "list genre base cue/odd.cue\ncount base cue\ncount base cue/album.cue group artist\n"
                          "count group artist\ncount title Second\nstats\n", "cue tracks searched")


def test_cue_tracks_queued(pair):
    """A track added by its URI keeps its range; the file it names is not added with its directory."""
    formatcases.run(pair, "clear\nadd cue/album.cue/track0002\nplaylistinfo\naddid cue/odd.cue/track0001\n"
                          "add cue/album.cue\nadd cue\nplaylistinfo\nclear\nadd /\nplaylistinfo\nclear\n",
                    "cue tracks queued", queue=True, probe_uri="cue/album.cue/track0002")


def test_cue_track_plays(pair):
    """A track plays its range: `elapsed` counts from its start, its `duration` is the range's, and at the
    range's end the next track follows."""
    got = {}
    for server in (pair.ref, pair.sut):
        got[server.role[:3]] = formatcases.play_status(server, "cue/album.cue/track0002", seek=1.5,
                                                       playing_fields=("audio", "duration"))
    assert got["sut"] == got["ref"]
    assert got["ref"]["duration"] == "2.493" and got["ref"]["elapsed"] == "1.500"
    ends = {}
    for server in (pair.ref, pair.sut):
        with server.connect() as c:
            for line in ("clear", "add cue/album.cue/track0001", "add cue/album.cue/track0002", "play", "pause 1",
                         "seekcur 1.8", "pause 0"):
                assert not c.command(line).startswith(b"ACK")

        def status(server=server):
            return mpdtest.parse_pairs(server.query("status"))

        assert mpdtest.wait_until(lambda: status().get("song") == "1", mpdtest.scaled(5)), server.label
        after = status()
        server.query("stop")
        server.query("clear")
        ends[server.role[:3]] = (after.get("state"), after.get("duration"), float(after.get("elapsed", "9")) < 1.0)
    assert ends["sut"] == ends["ref"] == ("play", "2.493", True)


def _wait_updated(server):
    assert mpdtest.wait_until(lambda: b"updating_db" not in server.query("status"), mpdtest.scaled(10)), server.label


def test_cue_sheet_updated(playlist_music, server_pair, tmp_path):
    """`update` after a cue sheet changes lists its new tracks (and after it is gone, none, while the file it
    named stays hidden until a restart, as mpd 0.23 keeps the mark); both servers keep the tracks across a
    restart, which shows the file again, from their own database file and (Fermata) from mpd's format."""
    music = tmp_path / "cue-update"
    shutil.copytree(playlist_music / "cue", music / "cue")
    shutil.copytree(playlist_music / "songs", music / "songs")
    # A sheet naming its file by an absolute path: those tracks are kept, with nothing from the file.
    (music / "cue" / "abs.cue").write_text(
        f'PERFORMER "P"\nFILE "{music}/cue/album.flac" WAVE\n  TRACK 01 AUDIO\n    TITLE "Abs"\n'
        '    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    INDEX 01 00:01:00\n')
    os.utime(music / "cue" / "abs.cue", (1_600_000_000, 1_600_000_000))
    servers = server_pair(music)
    servers.require_sut()
    browse = "lsinfo cue\nlsinfo cue/album.cue\nlistall\nlistallinfo cue/odd.cue\nlsinfo cue/abs.cue\n"
    formatcases.run(servers, browse, "cue before")
    for server in (servers.ref, servers.sut):
        audiofiles.commands(server, "add cue/album.cue/track0002", "add cue/odd.cue/track0001", "add songs/two.flac",
                            "add cue/abs.cue/track0001")
    sheet = music / "cue" / "album.cue"
    # No longer album.flac: mpd 0.23 keeps it hidden until a restart all the same.
    sheet.write_text('PERFORMER "Changed"\nFILE "../songs/one.flac" WAVE\n  TRACK 01 AUDIO\n    TITLE "Only"\n'
                     '    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    TITLE "Elsewhere"\n    INDEX 01 00:01:10\n'
                     'FILE "missing.flac" WAVE\n  TRACK 03 AUDIO\n    INDEX 01 00:00:50\n')
    os.utime(sheet, (1_700_000_000, 1_700_000_000))
    (music / "cue" / "odd.cue").unlink()
    for server in (servers.ref, servers.sut):
        server.query("update cue")
        _wait_updated(server)
    formatcases.run(servers, browse + "lsinfo songs\nfind title Elsewhere\n", "cue updated")
    # mpd deletes a changed sheet's tracks before it makes the new ones: they leave the queue, even where a new
    # track has the same URI.
    formatcases.run(servers, "playlistinfo\n", "cue tracks dequeued", queue=True, probe_uri="songs/one.flac")
    assert b"album.cue/track" not in servers.sut.query("playlistinfo")
    for server in (servers.ref, servers.sut):
        server.overrides["state_file"] = str(server.workdir / "state")
    for restart in ("restart", "restart from mpd's format"):
        for server in (servers.ref, servers.sut):
            server.stop()
            if restart != "restart" and server is servers.sut:
                for companion in server.workdir.glob("database.fermata"):
                    companion.unlink()
            server.start()
        formatcases.run(servers, browse + "lsinfo songs\nfind title Elsewhere\ncount group artist\n", f"cue {restart}")
        if restart == "restart":
            # A queued track goes into the state file with its range and tags, and comes back from it.
            for server in (servers.ref, servers.sut):
                audiofiles.commands(server, "clear", "add cue/album.cue/track0002", "add songs/two.flac")
    states = [(server.workdir / "state").read_text() for server in (servers.ref, servers.sut)]
    queues = [state[state.index("playlist_begin"):] for state in states]
    assert queues[1] == queues[0]
    assert "song_begin: cue/album.cue/track0002\nRange: 1133-\n" in queues[0]
    formatcases.run(servers, "playlistinfo\n", "cue track restored", queue=True,
                    probe_uri="cue/album.cue/track0002")


def test_cue_tracks_join(server_factory, playlist_music, tmp_path):
    """Two tracks of a sheet played one after the other reach the device as the file's own samples: the first
    from where `seek` put it to its range's end, the second from there to the end of the file, no frame lost or
    repeated (an ALSA `file` output records them, as in test_audio.py)."""
    raw = subprocess.run(["flac", "--silent", "-d", "-c", "--force-raw-format", "--endian=little", "--sign=signed",
                          str(playlist_music / "cue" / "album.flac")], check=True, capture_output=True, timeout=60).stdout
    decoded = array.array("h", raw)
    # track0002 starts at 2.000 s; seeking 2.25 s into it is frame 4.25 × 44100 (2.25 is exact in binary, so
    # the seek's own rounding plays no part); it ends at 4.493 s, frame 198141, where track0003 starts and runs
    # to the end of the file.
    want = decoded[187_425 * 2:]
    directory = tmp_path / "rec"
    server = audiofiles.file_recorder(server_factory, "sut", playlist_music, directory)
    name, data = audiofiles.record_queue(
        server, directory, ["add cue/album.cue/track0002", "add cue/album.cue/track0003", "seek 0 2.25"])
    assert name == "rec-S16_LE-44100-2.raw"
    got = array.array("h", data)
    assert got[:len(want)] == want, audiofiles.first_difference(got, want)
    assert not any(got[len(want):]), "only silence after the file's end"
