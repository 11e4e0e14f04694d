"""Stored playlists (protocol §3.7 / mpd-protocol.md): differential cases, round trips, crashes.

Both session servers have an empty `playlist_directory` of their own.  Every
case removes the playlists it creates, so the directories are empty between
cases.  Round trips hand one playlist directory from mpd to Fermata and back;
the crash test kills Fermata with SIGKILL during playlist edits and checks that
exactly the acknowledged edits survive.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

import crashcheck
import mpdtest
from mpdtest import arg, case, differential_table, fx

ALBUM_DIR = "Ångström & Co/2001 - Déjà Vu [Deluxe] (Remastered)"
CAFE = ALBUM_DIR + "/01 - Café.mp3"
V1 = "Old Tags/v1 only.mp3"
KELVIN = "Case Folding/Kelvin.mp3"
NAME = "Mix [2024] (best of) ✓ ünï"
URL = "http://radio.example.org:8000/stream.mp3#Jazz%20FM"
#: Modification times differ between the servers' files.
VOLATILE = ("Last-Modified",)


@pytest.fixture(scope="module")
def servers(server_pair, music_dir):
    """A pair of its own for this file: the session pair's library state has diverged by the time these
    run (after test_database's `rescan` and `update`, both have the empty directories the start-up scan
    pruned back, in mpd's unsaved order), and these cases add the empty directory and list the root."""
    return server_pair(music_dir)


def rm(*names: str) -> str:
    return "".join(f"rm {arg(n)}\n" for n in names)


def pl(spec: str, *names: str, **options):
    """A case ending by removing `names` (and listing what is left, to prove it)."""
    return case(spec + rm(*names) + "listplaylists\n", replies="auto", volatile=VOLATILE, **options)


def three(name: str = "p") -> str:
    """Lines creating playlist `name` holding CAFE, V1, KELVIN."""
    return "".join(f"playlistadd {arg(name)} {arg(u)}\n" for u in (CAFE, V1, KELVIN))


test_stored_playlists = differential_table({
    "listplaylists with none": case("listplaylists\n", volatile=VOLATILE),
    "playlistadd creates, listplaylist(info), lsinfo root": pl(
        f"playlistadd {arg(NAME)} {arg(CAFE)}\n"
        f"playlistadd {arg(NAME)} {arg(URL)}\n"
        f"playlistadd {arg(NAME)} {arg('Old Tags')}\n"
        "listplaylists\n"
        f"listplaylist {arg(NAME)}\n"
        f"listplaylistinfo {arg(NAME)}\n"
        "lsinfo\n" "lsinfo /\n" 'lsinfo ""\n' 'lsinfo "Old Tags"\n', NAME),
    "playlistadd errors": pl(
        'playlistadd p "no/such.mp3"\n'
        'playlistadd "a/b" "Old Tags"\n'
        'playlistadd "" "Old Tags"\n'
        'playlistadd "" "Empty Folder"\n'
        'playlistadd "a/b" "foo://x"\n'
        'playlistadd p "foo://x"\n'
        'playlistadd p "/abs/path.mp3"\n'
        'playlistadd p "Empty Folder"\n'
        'playlistadd p "Old Tags" x\n'
        'playlistadd p "Old Tags" -1\n'
        'playlistadd p "Old Tags" 1\n'
        "playlistadd p\n", "p"),
    "playlistadd at a position": pl(
        three() +
        f"playlistadd p {arg(URL)} 0\n"
        f"playlistadd p {arg(CAFE)} 4\n"
        'playlistadd p "Old Tags" 2\n'
        f"playlistadd p {arg(CAFE)} 99\n"
        "listplaylist p\n"
        'playlistadd q "Empty Folder" 0\n'
        'playlistadd "" "Old Tags" 0\n'
        f"playlistadd new {arg(KELVIN)} 0\n"
        "listplaylist new\n", "p", "new"),
    "listplaylist errors": case(
        'listplaylist "no such"\n' 'listplaylistinfo "no such"\n' 'listplaylist ""\n'
        'listplaylist "a/b"\n' 'listplaylist "/etc/passwd"\n' 'listplaylist "file://rel"\n'
        "listplaylist\n", replies="auto"),
    "a playlist file of the music directory": case(
        'listplaylist "Broken/playlist inside.m3u"\n'
        'listplaylistinfo "Broken/playlist inside.m3u"\n'
        'listplaylist "Broken"\n', replies="auto"),
    "playlistclear": pl(three() + "playlistclear p\nlistplaylist p\nplaylistclear q\nplaylistclear \"a/b\"\n", "p"),
    "playlistdelete": pl(
        three() + "playlistadd p \"Old Tags\"\n"
        "playlistdelete p 1\nlistplaylist p\n"
        "playlistdelete p 0:2\nlistplaylist p\n"
        "playlistdelete p 1:\nlistplaylist p\n"
        "playlistdelete p 5\nplaylistdelete p 1\nplaylistdelete p 2\nplaylistdelete p x\n"
        "playlistdelete p 2:1\nplaylistdelete q 0\nplaylistdelete p -1\nlistplaylist p\n", "p"),
    "playlistmove": pl(
        three() + "playlistmove p 0 2\nlistplaylist p\nplaylistmove p 2 0\nlistplaylist p\n"
        "playlistmove p 1 1\nplaylistmove q 1 1\nplaylistmove q 0 1\nplaylistmove p 0 3\n"
        "playlistmove p 3 0\nplaylistmove p x 0\nplaylistmove p -1 0\n", "p"),
    "rename and rm": pl(
        three() + three("other") +
        f"rename p {arg(NAME)}\nlistplaylist p\nlistplaylist {arg(NAME)}\n"
        f"rename {arg(NAME)} other\nrename missing x\nrename p q\nrename other \"a/b\"\n"
        "rename \"a/b\" x\nrename other \"\"\nrm missing\nrm \"\"\nrm \"x/y\"\n", NAME, "other"),
    "searchaddpl": pl(
        f"searchaddpl p {fx('Artist', '==', 'the beatles')}\n"
        "listplaylist p\n"
        f"searchaddpl p {fx('Title', 'contains', 'CAFÉ')}\n"
        f"searchaddpl p {fx('Title', 'contains', 'nothing matches this')}\n"
        f"searchaddpl empty {fx('Title', 'contains', 'nothing matches this')}\n"
        f"searchaddpl \"a/b\" {fx('Title', 'contains', 'nothing matches this')}\n"
        f"searchaddpl \"a/b\" {fx('Title', 'contains', 'CAFÉ')}\n"
        f"searchaddpl p {fx('Title', 'contains', 'v1')} position 0\n"
        f"searchaddpl p {fx('Title', 'contains', 'v1')} position 99\n"
        f"searchaddpl p {fx('Album', 'contains', 'a')} sort Title window 0:3\n"
        "searchaddpl p \"(bad\"\n"
        "searchaddpl p\n"
        "listplaylist p\n", "p"),
    "idle stored_playlist": case([
        ("a", "idle stored_playlist\n"), ("b", f"playlistadd p {arg(CAFE)}\n"),
        ("a", "idle stored_playlist\n"), ("b", "rename p q\n"),
        ("a", "idle stored_playlist\n"), ("b", "playlistclear q\n"),
        ("a", "idle stored_playlist\n"), ("b", "rm q\n"),
        ("a", "idle stored_playlist\n"), ("b", "rm q\n"), ("b", "playlistadd q \"Empty Folder\"\n"),
        ("a", "noidle\n"),
    ]),
})


def sq(body: str, *names: str, **options):
    """A queue case (ids and versions relative to its start) that removes playlists `names` and
    clears the queue at the end."""
    return case([("a", "clear\n" + body + rm(*names) + "listplaylists\nclear\n", "wait")],
                queue=True, volatile=VOLATILE, **options)


ND = '"Numbers & Dates"'

test_save_load = differential_table({
    "save, lsinfo /, load": sq(
        f"add {arg(ALBUM_DIR)}\nadd {arg(V1)}\nprio 5 0\nsave {arg(NAME)}\nsave {arg(NAME)}\n"
        f"listplaylist {arg(NAME)}\nlistplaylists\nlsinfo /\nclear\nload {arg(NAME)}\nplaylistinfo\nstatus\n"
        f"load {arg(NAME)} 1:2\nload {arg(NAME)} 0:1 0\nload {arg(NAME)} 1: 2\nload {arg(NAME)} 0\n"
        f"load {arg(NAME)} -1 1\nplaylist\nstatus\nplchangesposid {{v+2}}\n", NAME),
    "save an empty queue, load it": sq(
        "save empty\nlistplaylist empty\nload empty\nstatus\nsave empty\n", "empty"),
    "save errors": sq(f"add {arg(V1)}\nsave \"a/b\"\nsave \"\"\nsave\nsave a b\nlistplaylists\n"),
    "load errors": sq(
        f"add {ND}\nsave p\nclear\n"
        "load nosuch\nload \"\"\nload \"a/b\"\nload nosuch x\nload nosuch 0:1 x\n"
        "load \"/etc/passwd\"\nload \"file://rel\"\nload \"file:///etc/passwd\"\nload \"foo://bar\"\n"
        "load\nload p 0:1 0 x\nload p 3:1\nload p 0:1 1\nload p 0:1 +0\nload p 0:1 -1\nload p 20:\n"
        "load p 9:30\nload p x\nload p -2\nplaylist\nstatus\n", "p"),
    "load relative to the current song": sq(
        f"add {ND}\nsave p\nplay 4\nstop\nload p 0:2 +0\nload p 2:3 -1\nload p 0:1 +20\nplaylist\nstatus\n", "p"),
    "load a playlist file of the music directory": sq(
        'load "Broken/playlist inside.m3u"\nplaylistinfo\nstatus\nload "Broken"\n'),
    "idle on save and load": case([
        ("a", "clear\n", "wait"), ("b", f"add {arg(CAFE)}\n", "wait"),
        ("a", "idle stored_playlist\n"), ("b", "save p\n"),
        ("a", "idle playlist\n"), ("b", "load p\n"),
        ("a", "idle stored_playlist\n"), ("b", "save p\n"), ("b", "rm p\n"),
        ("a", "clear\n", "wait")], queue=True),
})


def _write_both(servers, name: str, data: bytes) -> list[Path]:
    paths = []
    for server in (servers.ref, servers.sut):
        path = server.workdir / "playlists" / (name + ".m3u")
        path.write_bytes(data)
        paths.append(path)
    return paths


HANDWRITTEN = ("#EXTM3U\n# a comment\n\n"
               f"{CAFE}\r\n"
               "   Old Tags/v1 only.mp3   \n"
               "not/in/the/database.mp3\n"
               "./Case Folding/../Case Folding/Kelvin.mp3\n"
               "{music}/Old Tags/v1 only.mp3\n"
               "/outside/the/music.mp3\n"
               f"{URL}\n"
               "http://user:secret@example.org/s.mp3\n"
               "#EXTINF:123,Title\n"
               "last line without newline.mp3")


def test_handwritten_playlist(servers, differential_runner):
    """A playlist written by hand: comments, CRLF, spaces, missing files, absolute paths, URLs."""
    servers.require_sut()
    text = HANDWRITTEN.replace("{music}", str(servers.ref.music_dir))
    paths = _write_both(servers, "hand written", text.encode())
    try:
        differential_runner(case(
            'listplaylist "hand written"\n'
            'listplaylistinfo "hand written"\n'
            # Editing rewrites the file from the entries mpd kept.
            'playlistmove "hand written" 0 1\n'
            'listplaylist "hand written"\n'
            'playlistadd "hand written" "Old Tags"\n'
            'listplaylist "hand written"\n'
            # Loading keeps what a song loader can find: database songs and URLs.
            'clear\nload "hand written"\nplaylistinfo\nsave "saved again"\n'
            'listplaylist "saved again"\nrm "saved again"\nclear\n', replies="auto", queue=True), "handwritten")
        assert paths[0].read_bytes() == paths[1].read_bytes()
    finally:
        for path in paths:
            path.unlink(missing_ok=True)


def test_failed_write_keeps_the_previous_file(servers, differential_runner):
    """A playlist that cannot be replaced (its temporary name taken by a directory, or a read-only
    directory for mpd) answers with an ACK and leaves the previous file intact."""
    sut = servers.require_sut()
    path = sut.workdir / "playlists" / "keep.m3u"
    path.write_text("a.mp3\n")
    blocker = sut.workdir / "playlists" / ".keep.m3u.tmp"
    blocker.mkdir()
    try:
        with sut.connect() as c:
            reply = c.command(f"playlistadd keep {arg(CAFE)} 0")
            assert reply.startswith(b"ACK [52@0] {playlistadd} Failed to create "), reply
            reply = c.command(f"playlistadd keep {arg(CAFE)}")
            assert reply.startswith(b"ACK [52@0] {playlistadd} Failed to append to "), reply
            assert c.command("listplaylist keep") == b"file: a.mp3\nOK\n"
        assert path.read_text() == "a.mp3\n"
    finally:
        blocker.rmdir()
        path.unlink()


# ---------------------------------------------------------------------------
# Round trips and crashes, on servers of their own

def _start(kind: str, music: Path, workdir: Path, **settings) -> mpdtest.Server:
    binary = mpdtest.sut_binary() if kind == "sut" else mpdtest.ref_binary()
    if kind == "sut" and not binary.exists():
        pytest.skip(f"system under test not found: {binary}")
    server = mpdtest.Server(kind, binary, music, workdir, settings)
    return server.start()


def _listing(server: mpdtest.Server, names: list[str]) -> dict[str, bytes]:
    out = {}
    with server.connect() as c:
        for name in names:
            out[name] = c.command(f"listplaylist {arg(name)}")
            out[name + " (info)"] = c.command(f"listplaylistinfo {arg(name)}")
    return out


def _names(server: mpdtest.Server) -> list[str]:
    reply = server.query("listplaylists").decode()
    return sorted(line[len("playlist: "):] for line in reply.splitlines() if line.startswith("playlist: "))


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute paths"])
@pytest.mark.parametrize("writer,reader", [("ref", "sut"), ("sut", "ref")])
def test_playlist_directory_round_trip(music_dir, tmp_path, writer, reader, absolute):
    """Playlists written by one server are listed identically by the other, and the files match."""
    playlists = tmp_path / "playlists"
    playlists.mkdir()
    settings = {"playlist_directory": str(playlists),
                "save_absolute_paths_in_playlists": "yes" if absolute else "no"}
    first = _start(writer, music_dir, tmp_path / writer, **settings)
    try:
        with first.connect() as c:
            for line in [f"playlistadd {arg(NAME)} {arg(CAFE)}", f"playlistadd {arg(NAME)} {arg(URL)}",
                         f"playlistadd {arg(NAME)} \"Old Tags\"", f"playlistadd {arg(NAME)} {arg(V1)} 1",
                         f"searchaddpl second {fx('Title', 'contains', 'café')}",
                         "playlistadd third \"Case Folding\"", "playlistdelete third 1:3",
                         "playlistmove third 0 2"]:
                assert c.command(line).endswith(b"OK\n"), line
        names = _names(first)
        before = _listing(first, names)
    finally:
        first.stop()
    files = {p.name: p.read_bytes() for p in playlists.iterdir()}
    second = _start(reader, music_dir, tmp_path / reader, **settings)
    try:
        assert _names(second) == names
        assert _listing(second, names) == before
    finally:
        second.stop()
    # Both write the same bytes: let the reader rewrite each file and compare.
    third = _start(reader, music_dir, tmp_path / (reader + "2"), **settings)
    try:
        with third.connect() as c:
            for name in names:
                assert c.command(f"playlistmove {arg(name)} 0 1").endswith(b"OK\n")
                assert c.command(f"playlistmove {arg(name)} 1 0").endswith(b"OK\n")
    finally:
        third.stop()
    assert {p.name: p.read_bytes() for p in playlists.iterdir()} == files


CRASH_ROUNDS = int(os.environ.get("CONFORMANCE_CRASH_ROUNDS", "50"))
CRASH_SONGS = [CAFE, V1, KELVIN, URL]


def _next_edit(rng: random.Random, model: dict) -> tuple[str, object]:
    """A random playlist edit and the playlist's entries after it (None: removed)."""
    name = rng.choice(["a", "b [x]", "ü c"])
    entries = model.get(name)
    op = rng.random()
    if op < 0.5 or entries is None:
        uri = rng.choice(CRASH_SONGS)
        return f"playlistadd {arg(name)} {arg(uri)}", (name, (entries or []) + [uri])
    if op < 0.7 and entries:
        index = rng.randrange(len(entries))
        return f"playlistdelete {arg(name)} {index}", (name, entries[:index] + entries[index + 1:])
    if op < 0.85 and len(entries) > 1:
        a, b = rng.randrange(len(entries)), rng.randrange(len(entries))
        after = list(entries)
        after.insert(b, after.pop(a))
        return f"playlistmove {arg(name)} {a} {b}", (name, after)
    return f"rm {arg(name)}", (name, None)


def _apply_edit(model: dict, change) -> dict:
    name, after = change
    updated = dict(model)
    if after is None:
        updated.pop(name, None)
    else:
        updated[name] = after
    return updated


def _playlists_on_disk(server: mpdtest.Server) -> dict:
    state = {}
    for name in _names(server):
        reply = server.query(f"listplaylist {arg(name)}").decode()
        state[name] = [line[len("file: "):] for line in reply.splitlines() if line.startswith("file: ")]
    return state


def test_crash_keeps_every_acknowledged_playlist_edit(music_dir, tmp_path):
    """Random playlist edits, SIGKILL at a random moment, restart: the playlists are exactly the
    acknowledged ones (the edit in flight may or may not have landed, but never half of it), and no
    file but a hidden temporary one is left behind."""
    rng = random.Random(int(os.environ.get("CONFORMANCE_SEED", "7")))
    playlists = tmp_path / "playlists"
    playlists.mkdir()
    binary = mpdtest.sut_binary()
    if not binary.exists():
        pytest.skip(f"system under test not found: {binary}")
    server = mpdtest.Server("sut", binary, music_dir, tmp_path / "sut",
                            {"playlist_directory": str(playlists), "db_file": str(tmp_path / "database")})

    def no_stray_files():
        stray = [p.name for p in playlists.iterdir() if not p.name.endswith(".m3u")]
        assert all(n.startswith(".") and n.endswith(".tmp") for n in stray), stray

    crashcheck.kill_rounds(server, CRASH_ROUNDS, rng, _next_edit, _apply_edit, _playlists_on_disk,
                           after_round=no_stray_files)


def test_a_local_client_loads_playlists_naming_files_outside_the_music_directory(server_factory, tmp_path):
    """Over the Unix socket (a local client), `load`, `listplaylist` and `listplaylistinfo` of a stored playlist and
    of one in the music directory naming files outside it, by path and `file://` URI: an MP3, an M4A (read by FFmpeg,
    in a scan worker), a missing file, a file that is no song, a directory; with ranges and positions, in command
    lists. The playlists and the files are read off the loop (one reading session per command); the replies and the
    queue are mpd's."""
    import audiofiles
    from test_queue import local_client_replies
    outside, music = audiofiles.outside_and_inside(tmp_path)
    (music / "list.m3u").write_text(f"#EXTM3U\n#EXTINF:5,Given Artist - Given Title\n{outside}/one.mp3\n"
                                    f"{outside}/two.m4a\ninside.mp3\n")
    stored = (f"{outside}/one.mp3\nfile://{outside}/two.m4a\n{outside}/missing.mp3\n{outside}/notes.txt\n"
              f"inside.mp3\n{outside}\n{music}/inside.mp3\n")
    requests = [
        "load p",
        "load p 1:4 0",
        "load list.m3u",
        "listplaylistinfo p",
        "listplaylist p",
        "listplaylistinfo list.m3u",
        "command_list_ok_begin\nload p 0:1\nload list.m3u 1:2 +0\nload p 4:\ncommand_list_end",
        "command_list_begin\nload list.m3u\nload p 5:x\nload p\ncommand_list_end",
        "command_list_ok_begin\nload list.m3u 0:2 1\nload p 1:2\nplaylist\ncommand_list_end",
        "playlistinfo",
    ]
    got = local_client_replies(server_factory, tmp_path, music, requests,
                               lambda server: (server.workdir / "playlists" / "p.m3u").write_text(stored))
    assert got["ref"][-1].count(b"Title: Outside M4A") >= 3, got["ref"][-1]
