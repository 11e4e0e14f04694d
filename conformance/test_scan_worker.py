"""The scan worker (issue 12): a database update reads the files only the ffmpeg plugin reads (M4A…) in a child
process of Fermata's own (`fermata --scan-worker`), so the server never maps FFmpeg's libraries for a scan, and a
worker that dies costs one file, not the server.

* a library of M4A files and a FLAC song, scanned as the unprivileged user `nobody` when the tests run as root:
  `listallinfo` equals mpd's, the server maps no library after the update that it had not mapped before it
  (neither FFmpeg's nor GLib, libcrypto… that they bring), and no worker is left a few seconds later (the workers
  outlive an update by 3 s, for the next);
* the worker is killed from outside while an update of a few hundred M4A files runs: the server survives, logs
  it, and the update completes with the other files (at most the file each killed worker was reading is left
  out); the worker ran as the server's user and held none of its sockets;
* the workers end when the server stops in the middle of an update.
The M4A files are the ffmpeg format fixtures (tools/fixtures/ffmpeg.py); 127.0.0.1 only.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

import formatcases
import mpdtest
from test_lazy_libraries import _mapped

COPIES = 40


def _nobody() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


def _m4a_sources() -> list[Path]:
    directory = formatcases.format_library("formats") / "ffmpeg" / "m4a"
    files = sorted(path for path in directory.iterdir() if path.suffix == ".m4a" and "damaged" not in path.name)
    assert len(files) >= 5, files
    return files


@pytest.fixture
def root():
    """A directory under /tmp that `nobody` can enter (pytest's own are root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="fermata-scanworker-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _library(root: Path, copies: int) -> tuple[Path, list[str]]:
    """M4A files (`copies` of each fixture, in directories of their own) and one FLAC song; their URIs."""
    music = root / "music"
    music.mkdir()
    uris = []
    for copy in range(copies):
        directory = music / f"set {copy:03}"
        directory.mkdir()
        for source in _m4a_sources():
            shutil.copyfile(source, directory / source.name)
            uris.append(f"{directory.name}/{source.name}")
    flac = formatcases.format_library("fingerprint", only="fingerprint") / "fingerprint" / "song" / "16.flac"
    shutil.copyfile(flac.resolve(), music / "16.flac")
    for path in [music, *music.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return music, uris


def _server(role: str, binary: Path, music: Path, root: Path) -> mpdtest.Server:
    if not binary.exists():
        pytest.skip(f"server not found: {binary}")
    server = mpdtest.Server(role, binary, music, root / role)
    server.run_as = _nobody()
    server.deny_io_uring = mpdtest.is_mpd(binary)
    return server


def _workers(pid: int) -> list[int]:
    """The server's children running `--scan-worker`."""
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    workers = []
    for child in children:
        try:
            if b"--scan-worker" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                workers.append(child)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return workers


def _running(pid: int) -> bool:
    """Whether the process exists and has not exited (a zombie whose parent is gone has)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


def _uids(pid: int) -> str | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return next(line.split(None, 1)[1] for line in status.splitlines() if line.startswith("Uid:"))


def _files(server: mpdtest.Server) -> list[str]:
    reply = server.query("listall", timeout=mpdtest.scaled(30)).decode()
    return [line[6:] for line in reply.splitlines() if line.startswith("file: ")]


def test_the_server_maps_no_ffmpeg_after_a_scan_and_lists_what_mpd_lists(root):
    staged, uris = _library(root, 1)
    music = root / "library"
    music.mkdir(mode=0o755)
    sut = _server("sut", mpdtest.sut_binary(), music, root)
    ref = _server("ref", mpdtest.ref_binary(), music, root)
    if mpdtest.is_mpd(sut.binary):
        pytest.skip("mpd links FFmpeg")
    try:
        sut.start()
        assert sut.proc is not None
        idle = _mapped(sut.proc.pid)
        for entry in staged.iterdir():
            entry.rename(music / entry.name)
        sut.query("update")
        assert mpdtest.wait_until(lambda: b"updating_db" not in sut.query("status"), 60)
        ref.start(songs_hint=len(uris) + 1)
        reply = sut.query("listallinfo", timeout=mpdtest.scaled(30))
        assert reply == ref.query("listallinfo", timeout=mpdtest.scaled(30))
        assert all(f"file: {uri}\n".encode() in reply for uri in uris)
        assert b"Format: 44100:f:2\n" in reply, reply[:2000]
        # Neither FFmpeg's libraries nor any they bring (GLib, libcrypto… which stay once loaded).
        mapped = _mapped(sut.proc.pid)
        assert not [name for name in mapped if name.startswith(("libavformat", "libavcodec", "libavutil"))], mapped
        assert mapped <= idle, sorted(mapped - idle)
        # The update is over: its workers ended.
        assert mpdtest.wait_until(lambda: not _workers(sut.proc.pid), 10)
        # A rescan reads the files again through new workers, with the same result.
        sut.query("rescan")
        ref.query("rescan")
        for server in (sut, ref):
            assert mpdtest.wait_until(lambda s=server: b"updating_db" not in s.query("status"), 60)
        assert sut.query("listallinfo", timeout=mpdtest.scaled(30)) == ref.query(
            "listallinfo", timeout=mpdtest.scaled(30))
        assert _mapped(sut.proc.pid) <= idle
    finally:
        sut.stop()
        ref.stop()
    assert not sut.crashed


def _sut_with_many_files(root):
    """Fermata on a library of many FFmpeg files (skipped for mpd, which has no scan worker); not started yet."""
    music, uris = _library(root, COPIES)
    sut = _server("sut", mpdtest.sut_binary(), music, root)
    if mpdtest.is_mpd(sut.binary):
        pytest.skip("mpd has no scan worker")
    return sut, uris


def _spawn_until_workers(sut) -> list[int]:
    """Starts `sut` and returns its scan workers' pids as soon as the first update has any."""
    sut.spawn()
    assert sut.proc is not None
    deadline = time.monotonic() + mpdtest.scaled(60)
    found: list[int] = []
    while not found and time.monotonic() < deadline:
        sut.check_alive()
        found = _workers(sut.proc.pid)
        time.sleep(0.002)
    assert found, sut.log_tail()
    return found


def test_a_worker_killed_during_an_update_costs_one_file(root):
    sut, uris = _sut_with_many_files(root)
    try:
        found = _spawn_until_workers(sut)
        # The worker runs as the server does (the dropped user, when the tests run as root).
        assert _uids(found[0]) == _uids(sut.proc.pid)
        # It holds none of the server's sockets (a client's connection, the listener) open.
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{found[0]}/fd").iterdir()]
        except (FileNotFoundError, ProcessLookupError):
            links = []
        assert not [link for link in links if link.startswith("socket:")], links
        for worker in found:
            os.kill(worker, signal.SIGKILL)
        sut.wait_ready(timeout=120)
        sut.check_alive()
        log = sut.log_path.read_text(errors="replace")
        ended = re.findall(r"scan worker ended while reading a file", log)
        assert 1 <= len(ended) <= len(found), log[-3000:]
        listed = set(_files(sut))
        missing = [uri for uri in uris if uri not in listed]
        assert len(missing) <= len(found), missing
        assert "16.flac" in listed
        # The update after it reads them all.
        sut.query("rescan")
        assert mpdtest.wait_until(lambda: b"updating_db" not in sut.query("status"), 120)
        assert set(uris) <= set(_files(sut))
        assert mpdtest.wait_until(lambda: not _workers(sut.proc.pid), 10)
    finally:
        sut.stop()
    assert not sut.crashed


def test_the_workers_end_with_the_server(root):
    sut, _ = _sut_with_many_files(root)
    try:
        found = _spawn_until_workers(sut)
    finally:
        sut.stop()
    assert not sut.crashed
    # Their input ends with the server: each exits after the file it is reading.
    assert mpdtest.wait_until(lambda: not any(_running(pid) for pid in found), 10), found
