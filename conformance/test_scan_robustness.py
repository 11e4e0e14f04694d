"""Robustness of the database scan: broken and unreadable files, files that vanish
during the scan, symlink loops and special files.  The system under test must not
crash or hang, and must not lose the rest of the library: its song count (and
listing) must equal mpd's on the same files.

File modes: the suite usually runs as root, where mode 000 does not stop a read.
The unreadable-files case therefore starts both servers as ``nobody`` (see
``Server.run_as``) when running as root; as another user it runs them as is.
"""

from __future__ import annotations

import difflib
import os
import pwd
import resource
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest

import mpdtest
from mpdtest import Server, make_case


def _songs(server: Server) -> int:
    return int(mpdtest.parse_pairs(server.query("stats")).get("songs", -1))


def _compare(pair, spec: str, name: str) -> None:
    c = make_case(spec, replies="auto")
    missing = mpdtest.missing_commands(c, pair.mpd_commands, pair.sut_commands)
    if missing and not os.environ.get("CONFORMANCE_NO_SKIP"):
        pytest.skip(f"restricted to implemented commands: the system under test does "
                    f"not list {', '.join(missing)} in `commands`")
    try:
        mpdtest.compare(c, pair.ref, pair.sut, name)
    except mpdtest.DifferentialMismatch as exc:
        pytest.fail(str(exc), pytrace=False)


def _same(got: list[bytes], want: list[bytes], what: str) -> None:
    if got != want:
        diff = "\n".join(difflib.unified_diff(
            [x.decode("utf-8", "replace") for x in want],
            [x.decode("utf-8", "replace") for x in got], "mpd (fresh scan)",
            "system under test", lineterm="", n=2))
        pytest.fail(f"{what} differs:\n{diff[:6000]}", pytrace=False)


def _copy_songs(src: Path, dst: Path, dirs: list[str]) -> None:
    for d in dirs:
        shutil.copytree(src / d, dst / d, symlinks=True)


# --- the session library already holds broken files and symlink loops ----------

def test_broken_files_keep_the_rest_of_the_library(servers, require_commands):
    """Broken/, Links/ (loops, dangling), Charset/ etc. are in the session library."""
    require_commands("stats")
    sut = servers.require_sut()
    assert _songs(sut) == _songs(servers.ref)
    assert sut.alive()


# --- unreadable files and directories, special files, more loops ----------------

def _nobody() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


@pytest.fixture(scope="module")
def hostile_library(music_dir):
    """A small library with unreadable files and directories, a FIFO, a link to
    /dev/zero, and mutual symlink loops (plus readable songs around them)."""
    run_as = _nobody()
    root = Path(tempfile.mkdtemp(prefix="fermata-hostile-"))
    lib = root / "music"
    lib.mkdir()
    _copy_songs(music_dir, lib, ["Old Tags", "Numbers & Dates", "Embedded Art"])
    (lib / "Unreadable").mkdir()
    shutil.copy2(music_dir / "root song.mp3", lib / "Unreadable" / "readable.mp3")
    shutil.copy2(music_dir / "root song.mp3", lib / "Unreadable" / "mode 000.mp3")
    shutil.copy2(music_dir / "root song.mp3", lib / "Unreadable" / "write only.mp3")
    (lib / "Unreadable" / "closed dir").mkdir()
    shutil.copy2(music_dir / "root song.mp3", lib / "Unreadable" / "closed dir" / "inside.mp3")
    (lib / "Unreadable" / "no x dir").mkdir()
    shutil.copy2(music_dir / "root song.mp3", lib / "Unreadable" / "no x dir" / "inside.mp3")
    os.mkfifo(lib / "Unreadable" / "fifo.mp3")
    os.symlink("/dev/zero", lib / "Unreadable" / "zero.mp3")
    # Loops: a -> b -> a, a link to an ancestor two levels up, a chain of links.
    (lib / "Loops" / "a" / "deep").mkdir(parents=True)
    (lib / "Loops" / "b").mkdir()
    shutil.copy2(music_dir / "root song.mp3", lib / "Loops" / "a" / "song.mp3")
    os.symlink("../b", lib / "Loops" / "a" / "to b")
    os.symlink("../a", lib / "Loops" / "b" / "to a")
    os.symlink("../..", lib / "Loops" / "a" / "deep" / "up two")
    os.symlink("chain2", lib / "Loops" / "chain1")
    os.symlink("chain1", lib / "Loops" / "chain2")
    # Modes last.
    os.chmod(lib / "Unreadable" / "mode 000.mp3", 0)
    os.chmod(lib / "Unreadable" / "write only.mp3", 0o200)
    os.chmod(lib / "Unreadable" / "closed dir", 0)
    os.chmod(lib / "Unreadable" / "no x dir", 0o644)
    if run_as:
        os.chmod(root, 0o755)
    yield lib, run_as
    for dirpath, dirnames, _ in os.walk(root):
        for d in dirnames:
            path = os.path.join(dirpath, d)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
    shutil.rmtree(root, ignore_errors=True)


def test_unreadable_and_special_files(hostile_library, server_pair):
    lib, run_as = hostile_library
    # zero.mp3 -> /dev/zero: a server that reads it to the end must fail, not eat the machine.
    pair = server_pair(lib, run_as=run_as, limits={resource.RLIMIT_DATA: 2 << 30})
    sut = pair.require_sut()
    ref_songs = _songs(pair.ref)
    assert 0 < ref_songs < 40, f"mpd found {ref_songs} songs; the set-up is wrong"
    if run_as is None and os.geteuid() == 0:
        pytest.fail("running as root without a user to drop to")
    assert sut.alive()
    _compare(pair, "stats\n", "stats")
    _compare(pair, "listall\n", "listall")
    _compare(pair, "lsinfo Unreadable\nlsinfo Loops\nlistallinfo Loops\n", "lsinfo")
    _compare(pair, 'readcomments "Unreadable/mode 000.mp3"\n'
                   'readpicture "Unreadable/mode 000.mp3" 0\n'
                   'albumart "Unreadable/closed dir/inside.mp3" 0\n', "reads")
    # A rescan over the same files must not hang on the FIFO or /dev/zero either.
    _compare(pair, "rescan Unreadable\n", "rescan")
    for s in (pair.ref, sut):
        assert mpdtest.wait_until(lambda s=s: b"updating_db" not in s.query("status"), 30)
    _compare(pair, "stats\nlistall Unreadable\n", "after rescan")


# --- names that differ only in Unicode normalisation ------------------------------

def test_names_that_differ_only_in_normalisation(music_dir, server_pair):
    """"Café" precomposed and decomposed are two files for the file system and for
    mpd, which compares names by bytes: both directories and all four songs are
    there, each found by its own bytes.  The order of two names that collate equal
    is not compared: mpd keeps them in the order the directory listing gave."""
    root = Path(tempfile.mkdtemp(prefix="fermata-nfd-"))
    try:
        lib = root / "music"
        names = ["Caf\u00e9", "Cafe\u0301"]
        for directory in names:
            (lib / directory).mkdir(parents=True)
            for name in names:
                shutil.copy2(music_dir / "root song.mp3", lib / directory / f"{name}.mp3")
        pair = server_pair(lib)
        sut = pair.require_sut()
        _compare(pair, "stats\n", "stats")
        for command in ("listall", "listallinfo", "lsinfo"):
            _same(sorted(sut.query(command).splitlines()), sorted(pair.ref.query(command).splitlines()),
                  f"{command} (sorted lines)")
        for directory in names:
            for name in names:
                uri = f"{directory}/{name}.mp3"
                _compare(pair, f'lsinfo "{uri}"\nfind "(file == \'{uri}\')"\ncount base "{directory}"\n',
                         f"{uri!r}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


# --- files deleted (and replaced) while the scan runs -----------------------------

@pytest.mark.sut_only
def test_files_vanish_during_the_scan(music_dir, require_commands, server_factory):
    """Start with an empty database on a copy of the library, delete and truncate
    files while the start-up scan runs, then `update`: the result must equal a
    fresh mpd's scan of what is left, and the server must still be alive."""
    require_commands("stats", "status", "update", "rescan", "listall")
    root = Path(tempfile.mkdtemp(prefix="fermata-vanish-"))
    try:
        lib = root / "music"
        shutil.copytree(music_dir, lib, symlinks=True)
        victims = sorted((lib / "Generated").iterdir())
        sut = Server("sut-vanish", mpdtest.sut_binary(), lib, root / "sut")
        sut.spawn()
        try:
            # Delete whole artists, truncate and garble songs, replace a directory
            # by a file, as fast as possible while the server starts and scans.
            for i, artist in enumerate(victims[: len(victims) // 2]):
                if i % 3 == 0:
                    shutil.rmtree(artist, ignore_errors=True)
                elif i % 3 == 1:
                    for song in sorted(artist.rglob("*.mp3"))[:3]:
                        with open(song, "r+b") as f:
                            f.truncate(100)
                else:
                    for album in sorted(artist.iterdir())[:1]:
                        shutil.rmtree(album, ignore_errors=True)
                        album.write_bytes(b"now a file")
                if i % 10 == 0:
                    time.sleep(0.002)
            sut.wait_ready(timeout=120)
            assert sut.alive(), sut.log_tail()
            with sut.connect(timeout=10) as c:
                reply = c.command("update")
            assert reply.startswith(b"updating_db: "), reply
            assert mpdtest.wait_until(
                lambda: b"updating_db" not in sut.query("status"), 120), sut.log_tail()
            ref = server_factory("ref", music=lib)
            _same(sut.query("stats").splitlines()[2:5], ref.query("stats").splitlines()[2:5],
                  "stats (artists, albums, songs)")
            # After an `update` that changed nothing, mpd keeps empty directories
            # (it prunes and sorts only when it saves a modified database), so
            # compare the songs here, and everything after a `rescan`.
            _same(sorted(x for x in sut.query("listall", timeout=30).splitlines()
                         if x.startswith(b"file: ")),
                  sorted(x for x in ref.query("listall", timeout=30).splitlines()
                         if x.startswith(b"file: ")), "songs (listall, sorted)")
            with sut.connect(timeout=10) as c:
                c.command("rescan")
            assert mpdtest.wait_until(
                lambda: b"updating_db" not in sut.query("status"), 120), sut.log_tail()
            _same(sut.query("listall", timeout=30).splitlines(),
                  ref.query("listall", timeout=30).splitlines(), "listall after rescan")
        finally:
            sut.stop()
            if sut.crashed:
                pytest.fail(f"{sut.label} crashed:\n{sut.log_tail()}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
