"""UDisks2 file systems mounted into the database, as Debian's mpd mounts `udisks://ID[/PATH]` URIs with its udisks
storage plugin, never on the machine's own system bus: each server gets a private `dbus-daemon` (a configuration
of the test's own, allow-all, listening on a Unix socket in a temporary directory, as test_zeroconf.py runs one)
named by DBUS_SYSTEM_BUS_ADDRESS, and on it tools/fakeudisks2.py (python3-dbus, python3-gi) stands in for UDisks2:
one block device whose Filesystem.Mount returns a temporary directory of a few FLACs (or whose MountPoints already
name it, or whose Mount fails). mpd and Fermata (a `database` block with a `cache_directory`, as test_storage.py)
are compared: `mount`, `listmounts`, the songs under the mount point, `play`, `unmount`, the calls each makes on
the bus (the fake's log: the same methods, in the same order), and the failures: no bus at all (`mount`'s
error), a bus without UDisks2, an unknown id and a Mount that fails (an empty mount point, the error logged). The
udisks neighbor plugin (`neighbors { plugin "udisks" }`): `listneighbors` before and after the fake adds and
removes objects (its InterfacesAdded and InterfacesRemoved signals), `idle neighbor`, and its failures at start-up
and in the configuration; and, with them, the smbclient neighbor plugin (no master browser here: nothing found,
the failed browse logged as mpd logs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
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

    def start_udisks(self, directory: Path, mounted: bool = False, fail_mount: str = "",
                     extra: bool = False) -> "World":
        ready = self.dir / "ready"
        command = [sys.executable, str(REPO_ROOT / "tools" / "fakeudisks2.py"), "--id", ID, "--directory",
                   str(directory), "--log", str(self.log), "--ready", str(ready)]
        if mounted:
            command.append("--mounted")
        if fail_mount:
            command += ["--fail-mount", fail_mount]
        if extra:
            command.append("--extra")
        self.procs.append(subprocess.Popen(command, env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.address},
                                           stdout=subprocess.DEVNULL, stderr=open(self.dir / "udisks.log", "wb"),
                                           preexec_fn=mpdtest._die_with_parent))
        assert mpdtest.wait_until(ready.exists, mpdtest.scaled(10)), (self.dir / "udisks.log").read_text()
        return self

    def control(self, method: str, *arguments: str) -> None:
        """Calls the fake's own org.fermata.FakeUDisks2 `method` (Add, Remove) with dbus-send's `arguments`."""
        subprocess.run(["dbus-send", f"--bus={self.address}", "--print-reply", "--dest=org.freedesktop.UDisks2",
                        "/org/freedesktop/UDisks2", f"org.fermata.FakeUDisks2.{method}", *arguments],
                       check=True, stdout=subprocess.DEVNULL, timeout=mpdtest.scaled(10))

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


def _pair(worlds: list[World], cache: bool = True, state_file: bool = False, neighbors: str = ""):
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
        server.extra_config = mpdtest.simple_database_block(work, cache) + neighbors
        server.env = {"DBUS_SYSTEM_BUS_ADDRESS": world.address}
        pair.append(server)
    conftest._start(pair)
    return root, pair


#: The `neighbors` block of the udisks neighbor plugin.
NEIGHBORS = '\nneighbors {\n  plugin "udisks"\n}\n'


def _worlds(filesystem: Path | None = None, **options) -> list[World]:
    worlds = [World(kind) for kind in ("ref", "sut")]
    for world in worlds:
        world.start_bus()
        if filesystem is not None:
            world.start_udisks(filesystem, **options)
    return worlds


def _unmounted(worlds: list[World]) -> None:
    """Waits until both servers have asked UDisks2 to unmount (a storage of `listfiles`' own: Fermata unmounts it on
    a thread of its own when it goes, after the reply)."""
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
        _same(pair, ["stop", "unmount u"])
        # Both called Unmount before `unmount`'s reply.
        calls = [world.calls() for world in worlds]
        assert calls[1] == calls[0]
        _same(pair, ["lsinfo", "listmounts", "playlistinfo"])
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
        _same(pair, ["unmount s"])
        # Before the reply.
        calls = [world.calls() for world in worlds]
        assert calls[1] == calls[0] and calls[0][-1] == "Unmount /org/freedesktop/UDisks2/block_devices/fake1 0", calls
        _same(pair, ["listmounts"])
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


def _mount_and_stop(pair) -> None:
    """Mounts `udisks://ID/sub` on `u` in both servers (kept in their state files), lets the update end, and stops
    them: a restart restores the mount, not mounted until a song of it is read."""
    _same(pair, [f"mount u udisks://{ID}/sub"])
    for server in pair:
        _settle(server)
    for server in pair:
        conftest._stop(server)


def test_a_udisks_mount_is_restored_after_a_restart_as_in_mpd(filesystem):
    """The state file keeps the mount: after a restart both list it and its songs from the cached database, and play
    a song of it, which mounts the file system first. Both unmount it when they exit: the same calls on the bus."""
    worlds = _worlds(filesystem)
    root, pair = _pair(worlds, state_file=True)
    try:
        _mount_and_stop(pair)
        conftest._start(pair)
        # `listallinfo u`: the restored mount's root has no Last-Modified (mpd's database file keeps no time for it).
        after = _same(pair, ["listmounts", "lsinfo", "lsinfo u", 'find title "Third"', "listallinfo u"])
        assert b"file: u/third.flac\n" in after[2][1]
        # Not read since the start, the file system is not mounted; a song of it plays all the same (mpd mounts it
        # when the song is queued, Fermata when the player opens it).
        answers = [mpdtest.settled_play(server, "add u/third.flac\nplay 0\n") for server in pair]
        assert answers[1] == answers[0]
        assert b"\nstate: play\n" in answers[0][1], answers[0]
        _same(pair, ["stop"])
        for server in pair:
            conftest._stop(server)
        calls = [world.calls() for world in worlds]
        assert calls[1] == calls[0]
        assert calls[0] == ["GetManagedObjects /org/freedesktop/UDisks2",
                            "Mount /org/freedesktop/UDisks2/block_devices/fake1 0",
                            "Unmount /org/freedesktop/UDisks2/block_devices/fake1 0"] * 2, calls
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def _neighbors(server, count: int) -> bytes:
    """`listneighbors` once it lists `count` neighbors (the plugins read UDisks2's reply and signals on their own)."""
    reply = b""

    def listed() -> bool:
        nonlocal reply
        reply = server.query("listneighbors")
        return reply.count(b"neighbor: ") == count

    assert mpdtest.wait_until(listed, mpdtest.scaled(10)), (server.label, reply, server.log_tail())
    return reply


def test_listneighbors_lists_udisks_filesystems_as_in_mpd(filesystem):
    """The udisks neighbor plugin: the file systems with an id among UDisks2's managed objects (not a drive
    without one, not a file system without an id), by URI, descending, named by object path; a disk that comes
    (InterfacesAdded) and goes (InterfacesRemoved) is listed and unlisted, and clients in `idle neighbor` hear it;
    `commands` lists `listneighbors`; a `udisks://` neighbor can be mounted."""
    worlds = _worlds(filesystem, extra=True)
    root, pair = _pair(worlds, neighbors=NEIGHBORS)
    try:
        first = [_neighbors(server, 3) for server in pair]
        assert first[1] == first[0]
        assert first[0] == (b"neighbor: udisks://by-uuid-FA4E-0001\nname: /org/freedesktop/UDisks2/block_devices/fake1\n"
                            b"neighbor: udisks://by-uuid-AAAA-0002\nname: /org/freedesktop/UDisks2/block_devices/fake2\n"
                            b"neighbor: udisks://Maker-Stick-9\nname: /org/freedesktop/UDisks2/block_devices/fake3\n"
                            b"OK\n"), first[0]
        listed = _same(pair, ["commands"])
        assert b"command: listneighbors\n" in listed[0][1]
        steps = [
            # A file system comes: heard, listed in its place.
            (("Add", "string:/org/freedesktop/UDisks2/block_devices/sdz1", "string:by-label-MUSIC", "boolean:true"),
             4, True),
            # A block device without a file system: not a neighbor, not heard.
            (("Add", "string:/org/freedesktop/UDisks2/block_devices/sdz", "string:by-id-disk", "boolean:false"),
             4, False),
            # A second object with an id already listed: the later one is listed under that URI.
            (("Add", "string:/org/freedesktop/UDisks2/block_devices/sdy1", "string:by-uuid-AAAA-0002",
              "boolean:true"), 4, True),
            # Its removal takes the URI away.
            (("Remove", "string:/org/freedesktop/UDisks2/block_devices/sdy1"), 3, True),
            (("Remove", "string:/org/freedesktop/UDisks2/block_devices/fake1"), 2, True),
        ]
        idlers = []
        for arguments, count, heard in steps:
            if not idlers:
                idlers = [server.connect() for server in pair]
                for idler in idlers:
                    idler.send("idle neighbor\n")
            for world in worlds:
                world.control(*arguments)
            if not heard:
                # Nothing to hear: after a while (the signal was sent before dbus-send's reply), `noidle` ends the
                # wait without an event.
                time.sleep(mpdtest.scaled(0.5))
                for idler in idlers:
                    idler.send("noidle\n")
                assert [idler.read_reply() for idler in idlers] == [b"OK\n", b"OK\n"], arguments
                _same(pair, ["listneighbors"])
                for idler in idlers:
                    idler.send("idle neighbor\n")
                continue
            events = [idler.read_reply() for idler in idlers]
            assert events[0] == events[1] == b"changed: neighbor\nOK\n", (arguments, events)
            replies = [_neighbors(server, count) for server in pair]
            assert replies[1] == replies[0], (arguments, replies)
            for idler in idlers:
                idler.close()
            idlers = []
        assert b"udisks://by-label-MUSIC" in replies[0] and b"fake1" not in replies[0]
        assert b"by-uuid-AAAA-0002" not in replies[0], replies[0]
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def test_neighbors_stay_listed_when_the_bus_goes_as_in_mpd(filesystem):
    """The system bus goes away (dbus-daemon and UDisks2 stop): both servers go on (their private connections do
    not exit the process), listing the neighbors they knew."""
    worlds = _worlds(filesystem)
    root, pair = _pair(worlds, neighbors=NEIGHBORS)
    try:
        before = [_neighbors(server, 1) for server in pair]
        assert before[1] == before[0]
        for world in worlds:
            world.stop()
        assert mpdtest.wait_until(lambda: "lost the system bus" in pair[1].log_path.read_text(errors="replace"),
                                  mpdtest.scaled(5)), pair[1].log_tail()
        after = _same(pair, ["listneighbors", "ping"])
        assert after[0][1] == before[0]
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def test_a_bus_without_udisks_lists_no_neighbors_as_in_mpd():
    """UDisks2 absent: the plugin opens (its listing fails, logged in mpd's words) and `listneighbors` is empty;
    without a `neighbors` block it is mpd's error and `commands` does not list it."""
    worlds = [World(kind).start_bus() for kind in ("ref", "sut")]
    root, pair = _pair(worlds, neighbors=NEIGHBORS)
    try:
        message = ("Failed to parse GetManagedObjects reply: The name org.freedesktop.UDisks2 was not provided by "
                   "any .service files")
        for server in pair:
            assert mpdtest.wait_until(lambda: message in server.log_path.read_text(errors="replace"),
                                      mpdtest.scaled(5)), (server.label, server.log_tail())
        replies = _same(pair, ["listneighbors", "commands"])
        assert replies[0][1] == b"OK\n"
    finally:
        _stop_pair(root, pair)
    root, pair = _pair(worlds)
    try:
        replies = _same(pair, ["listneighbors", "commands"])
        assert replies[0][1] == b"ACK [5@0] {listneighbors} No neighbor plugin configured\n"
        assert b"listneighbors" not in replies[1][1]
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()


def _run_both(tmp_path, body: list[str], env: dict[str, str]):
    """mpd and Fermata on a configuration of `body` that makes them fail at start-up: their last error lines."""
    from test_config_options import lines
    from test_daemon import binary, write_config
    from mpdtest import free_port
    config = write_config(tmp_path, lines(free_port(), *body))
    environment = {**os.environ, **env}
    ours = subprocess.run([str(binary()), str(config)], capture_output=True, text=True, timeout=20, env=environment)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                            capture_output=True, text=True, timeout=20, env=environment)
    assert ours.returncode == theirs.returncode == 1, (ours.stderr, theirs.stderr)
    return config, ours.stderr.strip().splitlines()[-1], theirs.stderr.strip().splitlines()[-1]


def test_a_neighbor_plugin_that_cannot_open_stops_the_start_as_in_mpd(tmp_path):
    """No system bus: the udisks neighbor plugin cannot open and neither server starts, with mpd's words (its typo
    included)."""
    socket = tmp_path / "no_bus_socket"
    _, ours, theirs = _run_both(tmp_path, ["neighbors {", '  plugin "udisks"', "}"],
                                {"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={socket}"})
    assert theirs == (f"exception: Failed to open neighblor plugin 'udisks'; DBus connection error: Failed to "
                      f"connect to socket {socket}: No such file or directory"), theirs
    assert ours == "fermata: " + theirs.removeprefix("exception: ")


@pytest.mark.parametrize("body", [['  plugin "bogus"'], [], ['  name "x"']], ids=["unknown", "missing", "no-plugin"])
def test_neighbors_block_errors_as_in_mpd(tmp_path, body):
    """An unknown plugin, a block without `plugin`: mpd's configuration errors, at the block's line."""
    config, ours, theirs = _run_both(tmp_path, ["neighbors {", *body, "}"], {})
    prefix = "exception: Line 4: ; "
    assert theirs.startswith(prefix), theirs
    assert ours == f"fermata: {config}:4: {theirs.removeprefix(prefix)}"


def test_neighbor_plugin_fermata_lacks_is_warned_about(tmp_path):
    """mpd runs upnp's; Fermata says at start-up that it ignores it (and `listneighbors` then answers as without
    a neighbor plugin)."""
    from test_config_options import lines, start_and_stop
    from test_daemon import write_config
    from mpdtest import free_port
    config = write_config(tmp_path, lines(free_port(), "neighbors {", '  plugin "upnp"', "}"))
    err = start_and_stop(config)
    assert f'{config}:4: neighbor plugin "upnp" is not supported by Fermata yet and is ignored' in err, err


def test_smbclient_neighbors_as_in_mpd():
    """The smbclient neighbor plugin: libsmbclient browses `smb://` (no master browser answers here, so nothing is
    found); both servers list no neighbor, list `listneighbors` among their commands, and log the failed listing
    in mpd's words."""
    world = World("smb")
    root, pair = _pair([world, world], neighbors='\nneighbors {\n  plugin "smbclient"\n}\n')
    try:
        logs = []
        for server in pair:
            assert mpdtest.wait_until(lambda: "smbc_opendir('smb://') failed: " in server.log_path.read_text(
                errors="replace"), mpdtest.scaled(30)), (server.label, server.log_tail())
            text = server.log_path.read_text(errors="replace")
            logs.append(re.search(r"smbc_opendir\('smb://'\) failed: [^\n\"]*", text).group(0))
        assert logs[1] == logs[0], logs
        replies = _same(pair, ["listneighbors", "commands"])
        assert replies[0][1] == b"OK\n"
        assert b"command: listneighbors\n" in replies[1][1]
    finally:
        _stop_pair(root, pair)
        world.stop()


def _timed(server, command: str) -> tuple[bytes, float]:
    """`command`'s reply on a fresh connection, and how long it took (connecting included)."""
    started = time.monotonic()
    reply = server.query(command, timeout=mpdtest.scaled(30))
    return reply, time.monotonic() - started


#: How long a command may take while a mount hangs: far below libdbus's 25 s timeout, room for a loaded machine.
PROMPT = 0.5


def test_a_mount_that_hangs_never_stops_the_server(filesystem):
    """A restored mount whose Mount call hangs (a stuck UDisks2: the fake answers none until told): mpd maps the song
    when it is queued, so its `add` (and every other client with it) waits for UDisks2; Fermata mounts it on the
    decoder thread when the song is played, which the loop never waits for: `play` answers at once, and so do another
    client's `ping`, `status`, `stop` and `play` (which leave the mount under way, given up). When UDisks2 fails the
    mount at last, the song fails to play as in mpd (mpd queued it under the storage's URI, which no plugin opens):
    the same `status`, its `error:` included."""
    worlds = _worlds(filesystem)
    root, pair = _pair(worlds, state_file=True)
    try:
        _mount_and_stop(pair)
        for world in worlds:
            world.control("HangMount")
        before = [len(world.calls()) for world in worlds]
        conftest._start(pair)
        ref, sut = pair

        def mounts(index: int) -> int:
            return sum(call.startswith("Mount ") for call in worlds[index].calls()[before[index]:])

        # mpd: `add` waits for the mount; a ping meanwhile waits as long.
        adding = threading.Thread(target=lambda: ref.query("add u/third.flac", timeout=mpdtest.scaled(60)))
        adding.start()
        assert mpdtest.wait_until(lambda: mounts(0) == 1, mpdtest.scaled(10))
        with pytest.raises(OSError):
            ref.query("ping", timeout=PROMPT)
        # Fermata: `add` and `play` answer at once; the decoder thread waits for the mount.
        assert _timed(sut, "command_list_begin\nadd u/third.flac\nplay 0\ncommand_list_end")[0] == b"OK\n"
        assert mpdtest.wait_until(lambda: mounts(1) == 1, mpdtest.scaled(10))
        for command in ("ping", "status", "stop", "play 0", "status", "ping"):
            reply, seconds = _timed(sut, command)
            assert reply.endswith(b"OK\n") and seconds < mpdtest.scaled(PROMPT), (command, reply, seconds)
        # The second `play` mounts again (the first mount was given up): both servers wait on UDisks2 now.
        assert mpdtest.wait_until(lambda: mounts(1) == 2, mpdtest.scaled(10)), worlds[1].calls()
        for world in worlds:
            world.control("ReleaseMount", "string:Stuck device")
        adding.join(timeout=mpdtest.scaled(30))
        assert not adding.is_alive()
        # mpd's `play` answers the decoder's error when it failed by then.
        failed = f"Failed to decode udisks://{ID}/sub/third.flac; Unrecognized URI".encode()
        assert ref.query("play 0") in (b"OK\n", b"ACK [5@0] {play} " + failed + b"\n")
        statuses = []
        for server in pair:
            assert mpdtest.wait_until(lambda: b"\nerror: " in server.query("status"), mpdtest.scaled(10)), \
                (server.label, server.query("status"))
            statuses.append(server.query("status"))
        assert statuses[1] == statuses[0]
        assert b"\nstate: stop\n" in statuses[0] and b"\nerror: " + failed + b"\n" in statuses[0], statuses[0]
    finally:
        _stop_pair(root, pair)
        for world in worlds:
            world.stop()
