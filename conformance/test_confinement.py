"""Confinement, differentially (issue 7): no request reaches a file outside the music directory or
the playlist directory.  Every attempt gets the same ACK as from mpd 0.23.12, except where mpd
itself escapes (``listfiles ..``, ``albumart ../x``: see test_daemon.py, a strict deviation).

A second pair of servers runs on a small library holding a symlink to /etc and one to a file
outside, with ``follow_outside_symlinks "no"`` (and one with the default, yes): what mpd refuses,
Fermata refuses too."""

import os
import shutil

import pytest

import mpdtest
from mpdtest import differential_table

test_music_directory = differential_table({
    "add ../../etc/passwd": "add ../../etc/passwd\n",
    "addid ../etc/passwd": "addid ../etc/passwd\n",
    "add /etc/passwd (TCP client)": "add /etc/passwd\n",
    "add file:///etc/passwd (TCP client)": "add file:///etc/passwd\n",
    "addid file:///etc/passwd": "addid file:///etc/passwd\n",
    "add a directory above": 'add "Broken/../.."\n',
    "lsinfo /etc": "lsinfo /etc\n",
    "lsinfo ../": "lsinfo ../\n",
    "lsinfo file:///etc": "lsinfo file:///etc\n",
    "listall /etc": "listall /etc\n",
    "listallinfo ..": "listallinfo ..\n",
    "update ../": "update ../\n",
    "find base ..": 'find base ".." title x\n',
    "readcomments /etc/passwd": "readcomments /etc/passwd\n",
    "readcomments file:///etc/passwd": "readcomments file:///etc/passwd\n",
    "readpicture ../x.mp3": 'readpicture "../x.mp3" 0\n',
    "albumart /etc/passwd": "albumart /etc/passwd 0\n",
}, replies="auto")

test_playlist_directory = differential_table({
    "listplaylist ../x": "listplaylist ../x\n",
    "listplaylist a/b": "listplaylist a/b\n",
    "listplaylistinfo ../../etc/passwd": "listplaylistinfo ../../etc/passwd\n",
    "playlistadd ../x": 'playlistadd ../x "Case Folding/Kelvin.mp3"\n',
    "playlistadd a/b": 'playlistadd a/b "Case Folding/Kelvin.mp3"\n',
    "playlistadd name with a dot dot inside": 'playlistadd "a/../../b" "Case Folding/Kelvin.mp3"\n',
    "playlistclear ..": "playlistclear ..\n",
    "rm ../x": "rm ../x\n",
    "rm /etc/passwd": "rm /etc/passwd\n",
    "rename ../a b": "rename ../a b\n",
    "rename a ../b": "rename a ../b\n",
    "save ../x": "save ../x\n",
    "save a/b": "save a/b\n",
    "load ../x": "load ../x\n",
    "load /etc/passwd": "load /etc/passwd\n",
    "searchaddpl ../x": 'searchaddpl ../x title "200 K"\n',
}, replies="auto")


@pytest.fixture(scope="module")
def symlink_music(tmp_path_factory, music_dir):
    root = tmp_path_factory.mktemp("confine-music")
    shutil.copy(music_dir / "Case Folding" / "Kelvin.mp3", root / "inside.mp3")
    outside = tmp_path_factory.mktemp("confine-outside")
    shutil.copy(music_dir / "Case Folding" / "Kelvin.mp3", outside / "outside.mp3")
    os.symlink("/etc", root / "etc-link")
    os.symlink(outside / "outside.mp3", root / "outside-link.mp3")
    os.symlink(outside, root / "outside-dir")
    os.symlink("inside.mp3", root / "inside-link.mp3")
    return root


SYMLINK_CASES = {
    "lsinfo root": "lsinfo\n",
    "lsinfo etc-link": "lsinfo etc-link\n",
    "listall": "listall\n",
    "listfiles root": "listfiles\n",
    "listfiles etc-link": "listfiles etc-link\n",
    "add etc-link/passwd": "add etc-link/passwd\n",
    "add outside-link.mp3": "add outside-link.mp3\n",
    "add outside-dir": "add outside-dir\n",
    "readcomments etc-link/passwd": "readcomments etc-link/passwd\n",
    "readcomments outside-link.mp3": "readcomments outside-link.mp3\n",
    "albumart etc-link/passwd": "albumart etc-link/passwd 0\n",
    "albumart outside-dir/outside.mp3": "albumart outside-dir/outside.mp3 0\n",
    "count all": "count\n",
}


@pytest.mark.parametrize("follow", ["no", "yes"])
@pytest.mark.parametrize("name", list(SYMLINK_CASES))
def test_symlinks_out_of_the_music_directory(server_pair, symlink_music, follow, name):
    pair = server_pair(symlink_music, follow_outside_symlinks=follow)
    spec = SYMLINK_CASES[name]
    if spec.startswith("add"):
        spec += "clear\n"                  # leave the shared queue empty
    mpdtest.compare_on_pair(pair, spec, f"{follow}/{name}")
