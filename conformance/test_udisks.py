"""UDisks2 file systems mounted into the database, as Debian's mpd mounts `udisks://ID[/PATH]` URIs with its udisks
storage plugin, never on the machine's own system bus: each server gets a private `dbus-daemon` (a configuration
of the test's own, allow-all, listening on a Unix socket in a temporary directory, as test_zeroconf.py runs one)
named by DBUS_SYSTEM_BUS_ADDRESS, and on it tools/fakeudisks2.py (python3-dbus, python3-gi) stands in for UDisks2:
one block device whose Filesystem.Mount returns a temporary directory of a few FLACs (or whose MountPoints already
name it, or whose Mount fails). mpd and Fermata (a `database` block with a `cache_directory`, as test_storage.py)
are compared: `mount`, `listmounts`, the songs under the mount point, `play`, `unmount`, the calls each makes on
the bus (the fake's log: the same methods, in the same order), and the failures: no bus at all (`mount`'s
error), a bus without UDisks2, an unknown id and a Mount that fails (an empty mount point, the error logged)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import conftest
import mpdtest
import test_zeroconf
from test_storage import _local_library, _same, _settle, _stop_pair
from test_webdav import _flac

REPO_ROOT = mpdtest.REPO_ROOT

#: test_zeroconf.py's allow-all system bus, listening on a socket of the test's own.
BUS_CONFIG = test_zeroconf.BUS_CONFIG.replace("unix:path=/run/dbus/system_bus_socket", "unix:path={socket}")
assert "{socket}" in BUS_CONFIG

#: The file system's songs: path, seconds, title.
SONGS = [("Artist/first song.flac", 2, "First"), ("second.flac", 1, "Second"), ("sub/third.flac", 1, "Third")]
ID = "by-uuid-FA4E-0001"


@pytest.fixture(scope="module")
def filesystem():
    """A directory of FLACs: what the fake UDisks2's Mount hands out as the mount point."""
    for tool in ("sox", "metaflac", "dbus-daemon"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (scripts/install-deps.sh test installs it)")
    root = conftest._workdir("udisks-fs")
    for path, seconds, title in SONGS:
        _flac(root / path, seconds, title)
    yield root
    shutil.rmtree(root, ignore_errors=True)


class World:
    """A private system bus in a temporary directory, optionally with the fake UDisks2 on it; stopped by pid."""

    def __init__(self, name: str):
        self.dir = conftest._workdir(f"udisks-{name}")
        self.socket = self.dir / "system_bus_socket"
        self.address = f"unix:path={self.socket}"
        self.log = self.dir / "calls"
        self.procs: list[subprocess.Popen] = []

    def start_bus(self) -> "World":
        config = self.dir / "bus.conf"
        config.write_text(BUS_CONFIG.format(socket=self.socket))
        self.procs.append(subprocess.Popen(["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={config}"],
                                           stdout=subprocess.DEVNULL, stderr=open(self.dir / "bus.log", "wb"),
                                           preexec_fn=mpdtest._die_with_parent))
        assert mpdtest.wait_until(self.socket.exists, mpdtest.scaled(10)), "dbus-daemon did not start"
        return self

    def start_udisks(self, directory: Path, mounted: bool = False, fail_mount: str = "") -> "World":
        ready = self.dir / "ready"
        command = [sys.executable, str(REPO_ROOT / "tools" / "fakeudisks2.py"), "--id", ID, "--directory",
                   str(directory), "--log", str(self.log), "--ready", str(ready)]
        if mounted:
            command.append("--mounted")
        if fail_mount:
            command += ["--fail-mount", fail_mount]
        self.procs.append(subprocess.Popen(command, env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.address},
                                           stdout=subprocess.DEVNULL, stderr=open(self.dir / "udisks.log", "wb"),
                                           preexec_fn=mpdtest._die_with_parent))
        assert mpdtest.wait_until(ready.exists, mpdtest.scaled(10)), (self.dir / "udisks.log").read_text()
        return self

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(timeout=mpdtest.scaled(5))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _pair(worlds: list[World], cache: bool = True, state_file: bool = False):
    """mpd and Fermata on a one-song music directory, each on the bus of its own world (a `database` block with a
    `cache_directory` unless not `cache`), started; the caller stops them with `_stop_pair`."""
    root = conftest._workdir("udisks-mount")
    music = _local_library(root)
    pair = []
    for kind, world in zip(("ref", "sut"), worlds):
        binary = mpdtest.ref_binary() if kind == "ref" else mpdtest.sut_binary()
        if kind == "sut" and not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        work = conftest._workdir(f"udisks-{kind}")
        overrides = {"db_file": None}
        if state_file:
            overrides["state_file"] = str(work / "state")
        server = mpdtest.Server(f"{kind}-udisks", binary, music, work, overrides)
        server.extra_config = mpdtest.simple_database_block(work, cache)
        server.env = {"DBUS_SYSTEM_BUS_ADDRESS": world.address}
        pair.append(server)
    conftest._start(pair)
    return root, pair


def _worlds(filesystem: Path | None = None, **options) -> list[World]:
    worlds = [World(kind) for kind in ("ref", "sut")]
    for world in worlds:
        world.start_bus()
        if filesystem is not None:
            world.start_udisks(filesystem, **options)
    return worlds


def _unmounted(worlds: list[World]) -> None:
    """Waits until both servers have asked UDisks2 to unmount (Fermata does it on a thread of its own, after
    `unmount`'s reply)."""
    for world in worlds:
        assert mpdtest.wait_until(lambda: any(c.startswith("Unmount ") for c in world.calls()), mpdtest.scaled(10)), \
            (world.dir, world.calls())


@pytest.mark.parametrize("mounted", [False, True], ids=["mounted-by-mount", "already-mounted"])
def test_a_udisks_filesystem_is_listed_searched_played_and_unmounted_as_in_mpd(filesystem, mounted):
    """`mount u udisks://ID`: `listmounts` shows the URI, the update finds the object among UDisks2's managed objects
    and calls Filesystem.Mount with no options (or uses the mount point MountPoints names already); its songs are
    listed, found and played under the mount point; `unmount` takes them away and calls Filesystem.Unmount, the
    same calls on the bus from both."""
    worlds = _worlds(filesystem, mounted=mounted)
    root, pair = _pair(worlds)
    try:
        _same(pair, [f"mount u udisks://{ID}", "listmounts"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo", "lsinfo u", "lsinfo u/Artist", "listall u", "listallinfo u", 'find title "Third"',
                     "search file song", 'find base "u/sub"', "list title", "count artist \"Dav Artist\"",
                     "listfiles u", "listfiles u/sub", "stats"], skip=(b"db_playtime:",))
        answers = [mpdtest.settled_play(server, 'add "u/Artist/first song.flac"\nadd u/second.flac\n'
                                                'playlistinfo\nplay 0\n') for server in pair]
        assert answers[1] == answers[0]
        _same(pair, ["stop", "unmount u", "lsinfo", "listmounts", "playlistinfo"])
        _unmounted(worlds)
        calls = [world.calls() for world in worlds]
        assert calls[1] == calls[0]
        expected = ["GetManagedObjects /org/freedesktop/UDisks2"]
        if not mounted:
            expected.append("Mount /org/freedesktop/UDisks2/block_devices/fake1 0")
        assert calls[0] == expected + ["Unmount /org/freedesktop/UDisks2/block_devices/fake1 0"]
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def test_a_path_inside_the_filesystem_is_mounted_as_in_mpd(filesystem):
    """`udisks://ID//sub`: the directory below the mount point (slashes after the id skipped), as mpd reads it."""
    worlds = _worlds(filesystem)
    root, pair = _pair(worlds)
    try:
        _same(pair, [f"mount s udisks://{ID}//sub", "listmounts"])
        for server in pair:
            _settle(server)
        listed = _same(pair, ["lsinfo", "listallinfo s", "listfiles s"])
        assert b"file: s/third.flac\n" in listed[1][1]
        _same(pair, ["unmount s", "listmounts"])
        _unmounted(worlds)
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def test_without_a_system_bus_mount_fails_as_in_mpd():
    """No bus at the address: `mount` answers libdbus's error in mpd's words, before the database's checks (also
    without a `cache_directory`), and `listfiles` of the URI the same; a URI whose prefix is not `udisks://`
    exactly is no storage URI."""
    world = World("nobus")
    worlds = [world, world]
    for cache in (True, False):
        root, pair = _pair(worlds, cache=cache)
        try:
            replies = _same(pair, [f"mount u udisks://{ID}", "mount u UDISKS://x", f"listfiles udisks://{ID}",
                                   "listmounts"])
            assert replies[0][1] == (f"ACK [5@0] {{mount}} DBus connection error: Failed to connect to socket "
                                     f"{worlds[0].socket}: No such file or directory\n").encode(), replies[0][1]
            assert replies[1][1] == b"ACK [2@0] {mount} Unrecognized storage URI\n"
        finally:
            _stop_pair(root, pair)
    world.stop()


#: The failing buses: how each world is set up, and the error both servers log.
FAILURES = [
    ("no-udisks", {}, "The name org.freedesktop.UDisks2 was not provided by any .service files"),
    ("unknown-id", {"id": "nope"}, "No such UDisks2 object: nope"),
    ("mount-fails", {"fail_mount": "Error mounting /dev/fake1: wrong fs type"},
     "Error mounting /dev/fake1: wrong fs type"),
]


@pytest.mark.parametrize("setup,message", [(s, m) for _, s, m in FAILURES], ids=[n for n, _, _ in FAILURES])
def test_a_udisks_storage_that_cannot_be_mounted_is_an_empty_mount_point_as_in_mpd(filesystem, setup, message):
    """`mount` answers OK (it makes no call on the bus); the update cannot read the storage: the mount point is an
    empty directory, and both servers log the error in mpd's words."""
    worlds = [World(kind).start_bus() for kind in ("ref", "sut")]
    uri_id = setup.get("id", ID)
    if "id" in setup or "fail_mount" in setup:
        for world in worlds:
            world.start_udisks(filesystem, fail_mount=setup.get("fail_mount", ""))
    root, pair = _pair(worlds)
    try:
        _same(pair, [f"mount u udisks://{uri_id}", "listmounts"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo", "lsinfo u", "listall", "stats"], skip=(b"db_playtime:",))
        for server in pair:
            assert mpdtest.wait_until(lambda: message in server.log_path.read_text(errors="replace"),
                                      mpdtest.scaled(5)), (server.label, server.log_tail())
        calls = [world.calls() for world in worlds]
        assert calls[1] == calls[0]
        _same(pair, ["unmount u", "listmounts"])
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def test_listfiles_of_a_udisks_uri_mounts_lists_and_unmounts_as_in_mpd(filesystem):
    """`listfiles udisks://ID/sub`: a storage of its own for the command, which finds and mounts the object, lists
    the directory, and unmounts it when it goes; an unknown id answers the plugin's error."""
    worlds = _worlds(filesystem)
    root, pair = _pair(worlds)
    try:
        listed = _same(pair, [f"listfiles udisks://{ID}/sub", "listfiles udisks://nope", "listmounts"])
        assert listed[0][1].startswith(b"file: third.flac\nsize: ")
        assert listed[1][1] == b"ACK [5@0] {listfiles} No such UDisks2 object: nope\n"
        _unmounted(worlds)
        # The same calls; Fermata's Unmount may come after the next command's (its thread of its own).
        calls = [sorted(world.calls()) for world in worlds]
        assert calls[1] == calls[0]
        assert calls[0].count("Mount /org/freedesktop/UDisks2/block_devices/fake1 0") == 1
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def test_a_udisks_mount_is_restored_after_a_restart_as_in_mpd(filesystem):
    """The state file keeps the mount: after a restart both list it and its songs from the cached database. (Not
    compared: the calls on the bus; mpd also unmounts when it exits, Fermata does not.)"""
    worlds = _worlds(filesystem)
    root, pair = _pair(worlds, state_file=True)
    try:
        _same(pair, [f"mount u udisks://{ID}/sub"])
        for server in pair:
            _settle(server)
        for server in pair:
            conftest._stop(server)
        conftest._start(pair)
        # `listallinfo u`: the restored mount's root has no Last-Modified (mpd's database file keeps no time for it).
        after = _same(pair, ["listmounts", "lsinfo", "lsinfo u", 'find title "Third"', "listallinfo u"])
        assert b"file: u/third.flac\n" in after[2][1]
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()
