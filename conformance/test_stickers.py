"""Stickers (protocol §3.13 / mpd-protocol.md §7.2): differential cases, round trips, crashes.

Both session servers have a `sticker_file`.  Every case that sets stickers
deletes them again, so the shared databases stay empty between cases.  Round
trips hand one sticker file from mpd to Fermata and back; the crash test kills
Fermata with SIGKILL while a client sets stickers and checks that exactly the
acknowledged changes survive.
"""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path

import pytest

import crashcheck
import mpdtest
from mpdtest import arg, case, differential_table

ALBUM_DIR = "Ångström & Co/2001 - Déjà Vu [Deluxe] (Remastered)"
CAFE = ALBUM_DIR + "/01 - Café.mp3"
SAY_HELLO = ALBUM_DIR + '/02 - Say "Hello" \\ Goodbye.mp3'
V1 = "Old Tags/v1 only.mp3"
KELVIN = "Case Folding/Kelvin.mp3"
SONGS = [CAFE, SAY_HELLO, V1, KELVIN]
ODD_NAME = arg('név "q"')
ODD_VALUE = arg("a=b ✓ \\")


def clean(*uris: str) -> str:
    """Lines deleting every sticker of `uris` (an ACK for a song without any is fine)."""
    return "".join(f"sticker delete song {arg(u)}\n" for u in uris)


def sets(values: dict[str, dict[str, str]]) -> str:
    return "".join(f"sticker set song {arg(uri)} {arg(name)} {arg(value)}\n"
                   for uri, pairs in values.items() for name, value in pairs.items())


def set_get_list(uri: str, name: str, value: str):
    """Set one sticker (arguments already quoted), read it back both ways, delete the song's stickers."""
    return case(f"sticker set song {arg(uri)} {name} {value}\n"
                f"sticker get song {arg(uri)} {name}\n"
                f"sticker list song {arg(uri)}\n" + clean(uri), replies="auto")


RATINGS = {CAFE: {"rating": "10"}, SAY_HELLO: {"rating": "5"}, V1: {"rating": "9"},
           KELVIN: {"rating": "5", "other": "x"}}

test_sticker = differential_table({
    # get / set / list / delete.
    "set, get, list, delete one, delete all": case(
        f"sticker set song {arg(CAFE)} rating 5\n"
        f"sticker get song {arg(CAFE)} rating\n"
        f"sticker set song {arg(CAFE)} rating 7\n"
        f"sticker set song {arg(CAFE)} Zeta z\n"
        f"sticker set song {arg(CAFE)} alpha \"a b c\"\n"
        f"sticker list song {arg(CAFE)}\n"
        f"sticker delete song {arg(CAFE)} rating\n"
        f"sticker get song {arg(CAFE)} rating\n"
        f"sticker list song {arg(CAFE)}\n"
        f"sticker delete song {arg(CAFE)}\n"
        f"sticker list song {arg(CAFE)}\n", replies="auto"),
    # An empty value is stored (list shows it) but get calls it missing.
    "UTF-8, quotes and = in names and values": set_get_list(SAY_HELLO, ODD_NAME, ODD_VALUE),
    "empty value is stored but reads as missing": set_get_list(V1, "blank", '""'),
    "empty name is ignored by set and unknown to get": set_get_list(V1, '""', "x"),
    "get a missing sticker": f"sticker get song {arg(CAFE)} nothing\n",
    "list a song without stickers": f"sticker list song {arg(CAFE)}\n",
    "delete a missing sticker": f"sticker delete song {arg(CAFE)} nothing\n",
    "delete all on a song without stickers": f"sticker delete song {arg(CAFE)}\n",
    # Objects that are not songs of the database.
    "get on a song not in the database": 'sticker get song "no/such.mp3" rating\n',
    "set on a song not in the database": 'sticker set song "no/such.mp3" rating 1\n',
    "list on a directory": 'sticker list song "Old Tags"\n',
    "delete below a song": f"sticker delete song {arg(V1 + '/x')}\n",
    "list on the root": 'sticker list song ""\n',
    # Argument errors.
    "unknown type": f"sticker get album {arg(CAFE)} rating\n",
    "unknown type checked before the sub-command": "sticker frobnicate album x\n",
    "unknown sub-command": f"sticker frobnicate song {arg(CAFE)}\n",
    "get with too few arguments": f"sticker get song {arg(CAFE)}\n",
    "get with too many arguments": f"sticker get song {arg(CAFE)} a b\n",
    "set with four arguments": f"sticker set song {arg(CAFE)} rating\n",
    "list with a name": f"sticker list song {arg(CAFE)} rating\n",
    "delete with too many arguments": f"sticker delete song {arg(CAFE)} a b\n",
    "two arguments": "sticker get song\n",
    "no arguments": "sticker\n",
    "upper-case sub-command": f"sticker GET song {arg(CAFE)} rating\n",
    "upper-case type": f"sticker get Song {arg(CAFE)} rating\n",
    # find.
    "find in the root, each operator": case(
        sets(RATINGS)
        + 'sticker find song "" rating\n'
        + 'sticker find song "" rating = 5\n'
        + 'sticker find song "" rating < 6\n'
        + 'sticker find song "" rating > 6\n'
        + 'sticker find song "" other\n'
        + 'sticker find song "" missing\n'
        + clean(*RATINGS), replies="auto"),
    "find below a directory": case(
        sets(RATINGS)
        + f"sticker find song {arg(ALBUM_DIR)} rating\n"
        + f"sticker find song {arg('Ångström & Co')} rating > 0\n"
        + 'sticker find song "Old Tags" rating\n'
        + 'sticker find song "Old" rating\n'
        + 'sticker find song "old tags" rating\n'
        + 'sticker find song "Old_Tags" rating\n'
        + 'sticker find song "Old%" rating\n'
        + 'sticker find song "No Such Dir" rating\n'
        + f"sticker find song {arg(V1)} rating\n"
        + clean(*RATINGS), replies="auto"),
    "find with a bad operator": 'sticker find song "" rating ~ 5\n',
    "find with five arguments": 'sticker find song "" rating =\n',
    "find with seven arguments": 'sticker find song "" rating = 5 6\n',
    "find a sticker of a song not in the database": case(
        'sticker set song "no/such.mp3" rating 1\n'
        'sticker find song "" rating\n', replies="auto"),
    # In command lists.
    "command list stops at a missing sticker": case(
        "command_list_ok_begin\n"
        f"sticker set song {arg(CAFE)} a 1\n"
        f"sticker get song {arg(CAFE)} b\n"
        f"sticker set song {arg(CAFE)} c 1\n"
        "command_list_end\n"
        f"sticker list song {arg(CAFE)}\n" + clean(CAFE), replies="auto"),
    # Idle.
    "idle sticker on set, same value, delete": case([
        ("a", "idle sticker\n"), ("b", f"sticker set song {arg(CAFE)} rating 1\n"),
        ("a", "idle sticker\n"), ("b", f"sticker set song {arg(CAFE)} rating 1\n"),
        ("a", "idle sticker\n"), ("b", f"sticker delete song {arg(CAFE)} rating\n"),
        ("a", "idle sticker\n"), ("b", f"sticker delete song {arg(CAFE)} rating\n"),
        ("b", f"sticker set song {arg(CAFE)} \"\" 1\n"),
        ("b", f"sticker get song {arg(CAFE)} rating\n"),
        ("a", "noidle\n"),
    ]),
    "idle sticker not raised by a failed set": case([
        ("a", "idle\n"), ("b", 'sticker set song "no/such.mp3" rating 1\n'), ("a", "noidle\n"),
    ]),
})


def test_sticker_needs_admin(servers, server_factory):
    """`sticker` needs the admin permission."""
    servers.require_sut()
    extra = {"default_permissions": "read,add,control"}
    pair = [server_factory("ref", **extra), server_factory("sut", **extra)]
    c = case(f"sticker get song {arg(CAFE)} rating\n", replies=1)
    mpdtest.compare(c, pair[0], pair[1], "sticker without admin")
    for server in pair:
        assert b"command: sticker\n" not in server.query("commands")


# ---------------------------------------------------------------------------
# Servers with their own sticker files (round trips, disabled stickers, crashes)

class Solo:
    """One server started by a test, with its own settings (values of None remove a setting)."""

    def __init__(self, kind: str, music: Path, workdir: Path, **settings):
        binary = mpdtest.sut_binary() if kind == "sut" else mpdtest.ref_binary()
        if kind == "sut" and not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        self.server = mpdtest.Server(kind, binary, music, workdir, settings)
        self.kind = kind

    def __enter__(self) -> mpdtest.Server:
        self.server.start()
        return self.server

    def __exit__(self, *exc):
        if self.server.alive():
            self.server.stop()
        assert not self.server.crashed or self.server.expect_exit, self.server.log_tail()


def query(server: mpdtest.Server, text: str) -> bytes:
    with server.connect() as c:
        c.send(text)
        return c.read_reply()


def test_disabled_without_sticker_file(music_dir, tmp_path):
    """No sticker_file: `sticker` is not listed and answers "sticker database is disabled"."""
    transcripts = []
    for kind in ("ref", "sut"):
        with Solo(kind, music_dir, tmp_path / kind, sticker_file=None) as server:
            transcripts.append(query(server, f"sticker get song {arg(CAFE)} rating\n")
                               + query(server, "sticker list song x\n")
                               + query(server, "sticker\n"))
            assert b"command: sticker\n" not in query(server, "commands\n")
    assert transcripts[0] == transcripts[1]
    assert transcripts[0].startswith(b"ACK [5@0] {sticker} sticker database is disabled\n")


@pytest.mark.parametrize("problem", ["missing directory", "not a database"])
def test_unopenable_sticker_file_stops_the_start(music_dir, tmp_path, problem):
    """mpd refuses to start with a sticker file it cannot open; Fermata too."""
    path = tmp_path / "no" / "dir" / "sticker.sql"
    if problem == "not a database":
        path = tmp_path / "garbage.sql"
        path.write_bytes(b"this is not sqlite\n" * 300)
    for kind in ("ref", "sut"):
        solo = Solo(kind, music_dir, tmp_path / kind, sticker_file=str(path))
        solo.server.spawn()
        try:
            assert solo.server.proc.wait(timeout=mpdtest.scaled(20)) != 0, f"{kind} started anyway"
        finally:
            if solo.server.alive():
                solo.server.proc.kill()
        log = solo.server.log_path.read_text(errors="replace")
        assert "Failed to open sqlite database" in log or "Failed to create sticker table" in log, log


def _sticker_state(server: mpdtest.Server, uris: list[str]) -> dict[str, bytes]:
    return {u: query(server, f"sticker list song {arg(u)}\n") for u in uris}


def _write_stickers(server: mpdtest.Server) -> None:
    reply = query(server, "command_list_begin\n" + sets({
        CAFE: {"rating": "8", "playcount": "12", "ünï": "çødé"},
        SAY_HELLO: {"rating": "3", "note": 'quoted "value" \\ here'},
        V1: {"rating": "10"},
    }) + "command_list_end\n")
    assert reply == b"OK\n", reply


@pytest.mark.parametrize("writer,reader", [("ref", "sut"), ("sut", "ref")])
def test_sticker_file_round_trip(music_dir, tmp_path, writer, reader):
    """A sticker file written by one server is read by the other with the same stickers."""
    sticker_file = tmp_path / "shared-sticker.sql"
    with Solo(writer, music_dir, tmp_path / writer, sticker_file=str(sticker_file)) as first:
        _write_stickers(first)
        before = _sticker_state(first, SONGS)
        found_before = query(first, 'sticker find song "" rating\n')
    with Solo(reader, music_dir, tmp_path / reader, sticker_file=str(sticker_file)) as second:
        assert _sticker_state(second, SONGS) == before
        assert query(second, 'sticker find song "" rating\n') == found_before
        # And the reader can change it, for the writer to see again.
        assert query(second, f"sticker set song {arg(KELVIN)} rating 1\n") == b"OK\n"
    with Solo(writer, music_dir, tmp_path / (writer + "2"), sticker_file=str(sticker_file)) as again:
        assert query(again, f"sticker get song {arg(KELVIN)} rating\n") == b"sticker: rating=1\nOK\n"
    # The schema is mpd's, whoever created the file.
    with sqlite3.connect(sticker_file) as db:
        schema = sorted(row[0] for row in db.execute("SELECT sql FROM sqlite_master"))
    assert schema == [
        "CREATE TABLE sticker(  type VARCHAR NOT NULL,   uri VARCHAR NOT NULL,   name VARCHAR NOT NULL,   "
        "value VARCHAR NOT NULL)",
        "CREATE UNIQUE INDEX sticker_value ON sticker(type, uri, name)",
    ]


# ---------------------------------------------------------------------------
# Crash: everything acknowledged is on disk

CRASH_ROUNDS = int(os.environ.get("CONFORMANCE_CRASH_ROUNDS", "50"))


def _next_sticker_change(rng: random.Random, model: dict) -> tuple[str, object]:
    uri = rng.choice(SONGS)
    name = rng.choice(["rating", "playcount", "mood"])
    if rng.random() < 0.2:
        return f"sticker delete song {arg(uri)} {name}\n", (uri, name, None)
    value = str(rng.randrange(1000))
    return f"sticker set song {arg(uri)} {name} {value}\n", (uri, name, value)


def _apply_sticker_change(model: dict, change) -> dict:
    uri, name, value = change
    updated = dict(model)
    if value is None:
        updated.pop((uri, name), None)
    else:
        updated[(uri, name)] = value
    return updated


def _stickers_on_disk(server: mpdtest.Server) -> dict:
    state = {}
    for uri in SONGS:
        reply = query(server, f"sticker list song {arg(uri)}\n")
        # An ACK (no such song: the database not loaded) would read as no stickers.
        assert reply.endswith(b"OK\n"), f"sticker list {uri}: {reply!r}\n{server.log_tail(60)}"
        for line in reply.decode().splitlines():
            if line.startswith("sticker: "):
                name, _, value = line[len("sticker: "):].partition("=")
                state[(uri, name)] = value
    return state


def test_crash_keeps_every_acknowledged_sticker(music_dir, tmp_path):
    """Random sticker sets and deletes, SIGKILL at a random moment, restart: the stickers are
    exactly the acknowledged ones (the one change in flight may or may not have landed)."""
    rng = random.Random(int(os.environ.get("CONFORMANCE_SEED", "5")))
    # At `info` the log says where each start took its database from (a failure shows the log's end).
    solo = Solo("sut", music_dir, tmp_path / "sut", sticker_file=str(tmp_path / "sticker.sql"),
                db_file=str(tmp_path / "database"), log_level="info")
    crashcheck.kill_rounds(solo.server, CRASH_ROUNDS, rng, _next_sticker_change, _apply_sticker_change,
                           _stickers_on_disk)
