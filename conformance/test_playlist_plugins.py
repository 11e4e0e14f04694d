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

import os
from pathlib import Path

import pytest

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
