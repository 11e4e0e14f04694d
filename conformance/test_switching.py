"""Switching from an installed mpd to Fermata and back, as a user does it (issue 16's acceptance), in
temporary directories, as root, with `user` set on a Debian-like configuration:

1. the real mpd scans the library and is given a stored playlist, a sticker, a queue with a paused song at a
   position, and a volume; it is stopped (it writes its state file and database as that user);
2. mpd is started again on those files and answers a set of commands: the reference;
3. Fermata starts on the same files: its process and every thread run as that user with that user's groups,
   and it answers the same commands byte for byte (library, queue, paused position, volume, stickers,
   playlists); then it changes a sticker, a playlist and the volume, and is stopped: the files it wrote are
   the user's;
4. Fermata again, with the music directory moved away (it can neither open a music file nor rescan): the
   library, playlists and stickers as before (restoring the paused song fails, as it would for mpd);
5. mpd again: it serves the library at once (no rescan: its database file is untouched), with what Fermata
   changed.

About 15 s on a quiet machine; needs root (CI runs as root); 127.0.0.1 only.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import mpdtest
from test_daemon import binary
from mpdtest import free_port
from test_mpd_database import SONGS, _encode
from test_privileges import command, start, stop, test_user  # noqa: F401  (test_user: a fixture)

#: What is compared between mpd (started on its own files) and Fermata (started on the same files).
COMMANDS = ["listallinfo", 'lsinfo ""', "listplaylists", 'listplaylist "stored"', 'listplaylistinfo "stored"',
            "playlistinfo", 'sticker find song "" rating', "outputs", "count group artist", "tagtypes"]
#: `status` lines that must be the same (the rest are times, rates or counters of the run).
STATUS = (b"volume:", b"repeat:", b"random:", b"single:", b"consume:", b"playlistlength:", b"state:", b"song:",
          b"songid:", b"elapsed:", b"nextsong:", b"nextsongid:")


def answers(port: int) -> dict[str, bytes]:
    out = {c: command(port, c) for c in COMMANDS}
    out["status"] = b"".join(line + b"\n" for line in command(port, "status").splitlines()
                             if line.startswith(STATUS))
    return out


def configuration(root: Path, port: int, user: str) -> Path:
    lines = [
        f'music_directory "{root}/music"', f'playlist_directory "{root}/var/playlists"', f'db_file "{root}/var/db"',
        f'state_file "{root}/var/state"', f'sticker_file "{root}/var/sticker.sql"', f'log_file "{root}/var/log"',
        f'pid_file "{root}/var/pid"', 'bind_to_address "127.0.0.1"', f'port "{port}"', f'user "{user}"',
        'zeroconf_enabled "no"', 'audio_output {', '  type "null"', '  name "My Null Output"',
        '  mixer_type "software"', '}']
    conf = root / "mpd.conf"
    conf.write_text("\n".join(lines) + "\n")
    return conf


@pytest.fixture
def root(test_user):  # noqa: F811
    path = Path(tempfile.mkdtemp(prefix="fermata-switch-"))
    path.chmod(0o755)
    for index, (song, encoder, tags) in enumerate(SONGS[:4]):
        _encode(path / "music" / song, encoder, tags, 1.0 + 0.25 * index, path)
        os.utime(path / "music" / song, (1_600_000_000 + index, 1_600_000_000 + index))
    for directory in (path / "var", path / "var" / "playlists"):
        directory.mkdir(parents=True, exist_ok=True)
        os.chown(directory, test_user.pw_uid, test_user.pw_gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_switch_from_mpd_to_fermata_and_back(root, test_user):  # noqa: F811
    port = free_port()
    conf = configuration(root, port, test_user.pw_name)
    mpd, fermata = mpdtest.ref_binary(), binary()
    first = SONGS[0][0]

    # 1. mpd scans and is used.
    proc = start(mpd, conf, port)
    try:
        assert mpdtest.wait_until(lambda: b"songs: 4\n" in command(port, "stats"), 30), "mpd's scan"
        for line in ['add ""', 'save "stored"', f'sticker set song "{first}" rating "5"', "play 2", "setvol 42",
                     "pause 1", "seekcur 0.5", "repeat 1", "single 1"]:
            reply = command(port, line)
            assert not reply.startswith(b"ACK"), f"mpd: {line!r} -> {reply!r}"
    finally:
        assert stop(proc) == 0
    database = root / "var" / "db"
    written = database.stat().st_mtime_ns

    # 2. mpd on its own files: the reference.
    proc = start(mpd, conf, port)
    try:
        reference = answers(port)
    finally:
        assert stop(proc) == 0
    assert b"volume: 42\n" in reference["status"] and b"state: pause\n" in reference["status"], reference["status"]
    assert b"value: 5\n" in reference['sticker find song "" rating'] or b"sticker: rating=5\n" in \
        reference['sticker find song "" rating']

    # 3. Fermata on the same files.
    proc = start(fermata, conf, port)
    try:
        assert b"updating_db" not in command(port, "status"), "Fermata rescans"
        threads = mpdtest.thread_credentials(proc.pid)
        groups = {str(g) for g in os.getgrouplist(test_user.pw_name, test_user.pw_gid)}
        for uid, gid, supplementary in threads:
            assert set(uid.split()) == {str(test_user.pw_uid)}, f"a thread runs as {uid}"
            assert set(gid.split()) == {str(test_user.pw_gid)}, f"a thread runs in group {gid}"
            assert set(supplementary.split()) == groups, f"a thread has groups {supplementary}"
        got = answers(port)
        for key, want in reference.items():
            assert got[key] == want, f"`{key}` differs from mpd's on its own files"
        for line in [f'sticker set song "{first}" rating "7"', 'save "from fermata"', "setvol 30"]:
            reply = command(port, line)
            assert not reply.startswith(b"ACK"), f"Fermata: {line!r} -> {reply!r}"
    finally:
        assert stop(proc) == 0
    for name in ("state", "sticker.sql", "playlists/from fermata.m3u"):
        status = os.stat(root / "var" / name)
        assert (status.st_uid, status.st_gid) == (test_user.pw_uid, test_user.pw_gid), f"{name} is not the user's"
    assert database.stat().st_mtime_ns == written, "Fermata rewrote mpd's database with nothing changed"

    # 4. Fermata without the music: the library from the database file alone.
    music, away = root / "music", root / "music.away"
    music.rename(away)
    try:
        proc = start(fermata, conf, port)
        try:
            assert b"updating_db" not in command(port, "status"), "Fermata rescans"
            for key in ("listallinfo", "count group artist", 'listplaylistinfo "stored"'):
                assert command(port, key) == reference[key], f"`{key}` differs without the music"
        finally:
            assert stop(proc) == 0
    finally:
        away.rename(music)
    assert database.stat().st_mtime_ns == written, "Fermata rewrote mpd's database with nothing changed"

    # 5. mpd again, with what Fermata changed, and no rescan.
    log = root / "var" / "log"
    logged = log.stat().st_size
    proc = start(mpd, conf, port)
    try:
        assert b"updating_db" not in command(port, "status")
        back = answers(port)
        assert b"volume: 30\n" in back["status"]
        assert b"playlist: from fermata\n" in back["listplaylists"]
        assert b"7" in command(port, f'sticker get song "{first}" rating')
        assert back["listallinfo"] == reference["listallinfo"]
        assert back["playlistinfo"] == reference["playlistinfo"]
    finally:
        assert stop(proc) == 0
    assert database.stat().st_mtime_ns == written, "mpd rescanned"
    with open(log, "rb") as text:
        text.seek(logged)
        lines = text.read().decode(errors="replace")
    for word in ("corrupt", "Malformed", "unknown line", "Failed", "exception"):
        assert word not in lines, f"mpd's log: {lines}"
