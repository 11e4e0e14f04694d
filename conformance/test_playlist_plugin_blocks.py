"""`playlist_plugin` blocks: mpd's `enabled` and `as_directory` per plugin, on the playlists fixture library
(see test_playlist_plugins.py), each configuration on a pair of servers of its own, compared byte for byte:
which files the update lists as playlists and which as directories of their songs (`trackNNNN`), and what
`listplaylist`, `listplaylistinfo` and `load` read with a plugin switched off.

Each pair scans the small library once (about 1 s); the cases take milliseconds.
"""

from __future__ import annotations

import pytest

import formatcases
from mpdtest import arg
from test_playlist_plugins import playlist_music  # noqa: F401  (the fixture: the library with its absolute.m3u)


def blocks(*plugins: tuple[str, dict[str, str]]) -> str:
    lines = []
    for name, keys in plugins:
        lines += ["playlist_plugin {", f'    name "{name}"', *(f'    {k} "{v}"' for k, v in keys.items()), "}"]
    return "\n".join(lines)


CONFIGURATIONS = {
    # m3u off (extm3u still reads files with a header), cue sheets flat, pls and xspf as directories, no
    # sheets from song tags.
    "mixed": blocks(("m3u", {"enabled": "no"}), ("cue", {"as_directory": "no"}), ("pls", {"as_directory": "yes"}),
                    ("xspf", {"as_directory": "yes"}), ("embcue", {"enabled": "no"})),
    # Every plugin mpd 0.23.12 has, off.
    "none": blocks(*((name, {"enabled": "no"}) for name in
                     ("extm3u", "m3u", "pls", "xspf", "asx", "rss", "soundcloud", "flac", "cue", "embcue"))),
    # extm3u as a directory; its as_directory wins for .m3u files with or without a header (mpd picks the
    # first plugin claiming the suffix).
    "extm3u-directory": blocks(("extm3u", {"as_directory": "yes"})),
}

LISTS = ["top.m3u", "lists/plain.m3u", "lists/ext.m3u", "lists/list.pls", "lists/list.xspf", "lists/list.asx",
         "lists/feed.rss", "cue/album.cue", "embedded/sheet.flac", "lists/no-header.m3u8"]


@pytest.fixture(scope="module", params=list(CONFIGURATIONS))
def pair(request, playlist_music, server_pair):  # noqa: F811
    servers = server_pair(playlist_music, extra_config=CONFIGURATIONS[request.param])
    servers.require_sut()
    return servers


@pytest.mark.parametrize("directory", ["", "lists", "cue", "embedded", "lists/list.pls", "lists/list.xspf",
                                       "lists/ext.m3u", "top.m3u", "cue/album.cue"])
def test_browse(pair, directory):
    formatcases.browse(pair, directory)


@pytest.mark.parametrize("uri", LISTS)
def test_read_playlist(pair, uri):
    formatcases.run(pair, f"listplaylist {arg(uri)}\nlistplaylistinfo {arg(uri)}\n", f"read {uri}")


@pytest.mark.parametrize("uri", LISTS)
def test_load(pair, uri):
    formatcases.run(pair, f"clear\nload {arg(uri)}\nplaylistinfo\nclear\n", f"load {uri}")


def test_find_virtual_songs(pair):
    formatcases.run(pair, 'find "(file =~ \'track\')"\nfind base "lists"\ncount base "cue"\n', "find")
