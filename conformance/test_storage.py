"""SMB shares, as Debian's mpd reaches them through libsmbclient: the test starts its own `smbd` on 127.0.0.1 only
(`interfaces = 127.0.0.1`, `bind interfaces only = yes`, a free high port, no nmbd, NetBIOS disabled) serving a
read-only guest share of a few MP3s made with sox and lame. Songs of the share are added by URL and played
(mpd's smbclient input plugin) the same in Fermata as in mpd, errors included.

`mount` of a share needs a `cache_directory`, which Fermata's database does not read yet: its refusal, as mpd's
without one, is in test_reflection.py."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

import conftest
import mpdtest

HOST = mpdtest.HOST

SMB_CONFIG = """[global]
  interfaces = 127.0.0.1
  bind interfaces only = yes
  smb ports = {port}
  disable netbios = yes
  server role = standalone server
  map to guest = Bad User
  private dir = {state}
  lock directory = {state}
  state directory = {state}
  cache directory = {state}
  pid directory = {state}
  ncalrpc dir = {state}/ncalrpc
  log file = {state}/log
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
[share]
  path = {share}
  guest ok = yes
  read only = yes
"""


def _mp3(path, seconds: int, title: str) -> None:
    wav = subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", "-t", "wav", "-", "synth", str(seconds),
                          "sine", "440"], check=True, capture_output=True).stdout
    subprocess.run(["lame", "--quiet", "--tt", title, "--ta", "Share Artist", "--tl", "Share Album", "-", str(path)],
                   input=wav, check=True)


@pytest.fixture(scope="module")
def smbd_process():
    """``smb://127.0.0.1:PORT/share``, served by an smbd of the test's own, and that smbd (the leader of its own
    process group, which the processes serving connections join)."""
    binary = shutil.which("smbd") or "/usr/sbin/smbd"
    if not os.path.exists(binary):
        pytest.fail("smbd is not installed (scripts/install-deps.sh test installs samba)")
    root = conftest._workdir("smbd")
    os.chmod(root, 0o755)
    share, state = root / "share", root / "state"
    (share / "sub").mkdir(parents=True)
    state.mkdir()
    _mp3(share / "long.mp3", 30, "Long")
    _mp3(share / "sub" / "short.mp3", 1, "Short")
    port = mpdtest.free_port()
    config = root / "smb.conf"
    config.write_text(SMB_CONFIG.format(port=port, state=state, share=share))
    # In the foreground smbd exits when its standard input ends (then signals its process group: a session of its
    # own), so it stops with pytest however pytest ends.
    proc = subprocess.Popen([binary, "--foreground", "--no-process-group", f"--configfile={config}"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)

    def up():
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return True
        except OSError:
            return False

    if not mpdtest.wait_until(up, timeout=20):
        proc.kill()
        log = state / "log"
        pytest.fail(f"smbd did not start: {log.read_text(errors='replace')[-2000:] if log.exists() else ''}")
    yield f"smb://{HOST}:{port}/share", proc
    os.killpg(proc.pid, signal.SIGCONT)
    proc.terminate()
    proc.wait(timeout=10)
    proc.stdin.close()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def smbd(smbd_process):
    """``smb://127.0.0.1:PORT/share``."""
    return smbd_process[0]


def _compare(server_factory, spec, case_id: str, **options):
    ref = server_factory("ref")
    sut = server_factory("sut")
    mpdtest.compare(mpdtest.make_case(spec, **options), ref, sut, case_id)


def test_a_song_of_the_share_plays_as_in_mpd(server_factory, smbd):
    """`add` of an smb:// URL, then `play`: both servers read the song's tags from the share (`currentsong`)
    and play it."""
    spec = [("a", f"add {smbd}/long.mp3\nadd {smbd}/sub/short.mp3\nplaylistinfo\nplay 0\n"),
            ("a", "currentsong\nstatus\n")]
    _compare(server_factory, spec, "play from the share", replies="auto", volatile=("bitrate",))


def test_a_missing_file_or_share_fails_as_in_mpd(server_factory, smbd):
    """A file the share does not have, and a share the server does not have: mpd's decoder error in
    `status`, naming libsmbclient's call and its errno."""
    base = smbd.rsplit("/", 1)[0]
    spec = [("a", f"add {smbd}/missing.mp3\nplay 0\n"), ("a", "status\n"),
            ("a", f"clear\nadd {base}/noshare/x.mp3\nplay 0\n"), ("a", "status\n")]
    _compare(server_factory, spec, "missing file and share", replies="auto")


def _timed(server, command: str) -> float:
    start = time.monotonic()
    server.query(command)
    return time.monotonic() - start


@pytest.mark.serial
def test_a_share_gone_silent_stalls_nobody(server_factory, smbd_process):
    """Fermata only (mpd waits for libsmbclient's timeout here): a song of the share plays, then smbd stops
    answering (SIGSTOP of its processes, connections left open). `seekcur` (which opens the song again),
    `next` and `stop` return at once while the player's input waits on the silent share, and another client's
    `status` answers meanwhile; then smbd goes on. About 2 s."""
    url, proc = smbd_process
    sut = server_factory("sut")
    for command in ("clear", f"add {url}/long.mp3", f"add {url}/long.mp3", "play 0"):
        sut.query(command)
    assert mpdtest.wait_until(
        lambda: float(mpdtest.parse_pairs(sut.query("status")).get("elapsed", "0")) > 0.3, mpdtest.scaled(10))
    bound = mpdtest.scaled(2)
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        with sut.connect() as other:
            assert _timed(sut, "seekcur 5") < bound
            time.sleep(0.3)
            start = time.monotonic()
            assert b"state: play" in other.command("status")
            assert time.monotonic() - start < bound
            assert _timed(sut, "next") < bound
            time.sleep(0.3)
            assert _timed(sut, "stop") < bound
            start = time.monotonic()
            assert b"state: stop" in other.command("status")
            assert time.monotonic() - start < bound
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
    # The share answers again, and the server plays from it.
    sut.query("play 0")
    assert mpdtest.wait_until(
        lambda: float(mpdtest.parse_pairs(sut.query("status")).get("elapsed", "0")) > 0.3, mpdtest.scaled(10))
    sut.query("stop")
