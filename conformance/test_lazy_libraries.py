"""Libraries Fermata loads on first use instead of linking them (issues 12/17): an idle server maps neither
libchromaprint nor the libavcodec it needs until a client sends `getfingerprint`, which then answers as mpd's
(nor libsmbclient, which only `smb://` streams and mounts load: conformance/test_storage.py uses them),
and a libchromaprint that cannot be loaded gives the command's error, a logged reason and a server that goes on.

The library holds one FLAC song (decoded by libFLAC, so that neither the scan nor the fingerprint's decoding
brings FFmpeg in) from the fingerprint fixtures (tools/fixtures/fingerprint.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import formatcases
import mpdtest

SONG = "song/16.flac"


@pytest.fixture(scope="module")
def music(tmp_path_factory) -> Path:
    source = (formatcases.format_library("fingerprint", only="fingerprint") / "fingerprint" / SONG).resolve()
    music = tmp_path_factory.mktemp("lazy-music")
    shutil.copyfile(source, music / "16.flac")
    return music


def _server(tmp_path: Path, music: Path, role: str, binary: Path) -> mpdtest.Server:
    if not binary.exists():
        pytest.skip(f"server not found: {binary}")
    server = mpdtest.Server(role, binary, music, tmp_path / role)
    server.deny_io_uring = mpdtest.is_mpd(binary)
    return server


def _mapped(pid: int) -> set[str]:
    """The file names of the libraries mapped in the process."""
    names = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and ".so" in fields[5]:
            names.add(Path(fields[5]).name)
    return names


def _has(names: set[str], prefix: str) -> bool:
    return any(name.startswith(prefix) for name in names)


def test_chromaprint_and_libavcodec_are_mapped_only_after_a_fingerprint(tmp_path, music):
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    ref = _server(tmp_path, music, "ref", mpdtest.ref_binary())
    try:
        sut.start(songs_hint=1)
        ref.start(songs_hint=1)
        assert sut.proc is not None
        assert b"file: 16.flac\n" in sut.query("listall")
        idle = _mapped(sut.proc.pid)
        assert _has(idle, "libFLAC.so"), sorted(idle)
        for library in ("libchromaprint.so", "libavcodec.so", "libavformat.so", "libavutil.so", "libsmbclient.so"):
            assert not _has(idle, library), f"{library} mapped by an idle server"

        command = 'getfingerprint "16.flac"\n'
        answer = sut.query(command, timeout=mpdtest.scaled(60))
        assert answer.startswith(b"chromaprint: AQ") and answer.endswith(b"\nOK\n"), answer
        assert answer == ref.query(command, timeout=mpdtest.scaled(60))
        used = _mapped(sut.proc.pid)
        assert _has(used, "libchromaprint.so.1") and _has(used, "libavcodec.so"), sorted(used)
        # Kept loaded: the next fingerprint is the same.
        assert sut.query(command, timeout=mpdtest.scaled(60)) == answer
        assert _has(_mapped(sut.proc.pid), "libchromaprint.so.1")
        assert not _has(_mapped(sut.proc.pid), "libsmbclient.so")
    finally:
        ref.stop()
        sut.stop()
    assert not sut.crashed and not ref.crashed


def test_a_libchromaprint_that_cannot_be_loaded_fails_the_command_not_the_server(tmp_path, music):
    """A library by libchromaprint's soname without its functions (zlib's, first on LD_LIBRARY_PATH): the
    error `chromaprint_new()` failing would give, the reason on the log once, and the server goes on."""
    libraries = tmp_path / "lib"
    libraries.mkdir()
    zlib = next(p for p in (Path("/usr/lib/x86_64-linux-gnu/libz.so.1"), Path("/lib/x86_64-linux-gnu/libz.so.1"))
                if p.exists())
    shutil.copyfile(zlib, libraries / "libchromaprint.so.1")
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    if mpdtest.is_mpd(sut.binary):
        pytest.skip("mpd links libchromaprint")
    sut.env = {"LD_LIBRARY_PATH": str(libraries)}
    try:
        sut.start(songs_hint=1)
        for _ in range(2):
            assert sut.query('getfingerprint "16.flac"\n', timeout=mpdtest.scaled(60)) == \
                b"ACK [5@0] {} chromaprint_new() failed\n"
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count("chromaprint_get_version not found") == 1, log
    finally:
        sut.stop()
    assert not sut.crashed
