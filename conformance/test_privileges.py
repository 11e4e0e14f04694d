"""`user` and `group` as mpd applies them: started as root, the server binds its sockets and opens
log_file, then runs as the configured user with that user's supplementary groups, on every thread,
and the files it writes are that user's.  Each case runs the real `mpd` the same way and compares.
A system user made for the test (in the `audio` group) is removed afterwards; 127.0.0.1 only."""

import os
import pwd
import grp
import shutil
import socket
import subprocess
import tempfile
import wave
from pathlib import Path

import pytest

import mpdtest
from test_daemon import binary, connect, ping, stop_process, GREETING
from mpdtest import free_port

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root (CI runs as root)")


@pytest.fixture(scope="module")
def test_user():
    """A system user with no home and no shell, in the `audio` group; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("creating a user needs root (CI runs as root)")
    if not shutil.which("useradd"):
        pytest.fail("useradd missing (Debian's passwd package)")
    name = f"fermata-t{os.getpid() % 100000}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                    "--shell", "/usr/sbin/nologin", "--user-group", "--groups", "audio", name],
                   check=True, capture_output=True, text=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        subprocess.run(["groupdel", name], capture_output=True)
    assert subprocess.run(["getent", "passwd", name], capture_output=True).returncode != 0


def workdir(owner) -> Path:
    """A directory under /tmp the user can write (pytest's own is root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="fermata-priv-"))
    path.chmod(0o755)
    (path / "music").mkdir()
    with wave.open(str(path / "music" / "tone.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(bytes(4 * 4410))
    (path / "playlists").mkdir()
    for entry in (path, path / "playlists"):
        os.chown(entry, owner.pw_uid, owner.pw_gid)
    return path


def config(path: Path, port: int, user: str, files=True) -> Path:
    """A Debian-like configuration in `path`; `files=False` leaves out all but the pid file."""
    stored = [f'playlist_directory "{path}/playlists"', f'db_file "{path}/db"', f'state_file "{path}/state"',
              f'sticker_file "{path}/sticker.sql"', f'log_file "{path}/log"'] if files else []
    lines = [
        f'music_directory "{path}/music"', *stored, f'pid_file "{path}/pid"', 'bind_to_address "127.0.0.1"',
        f'port "{port}"', f'user "{user}"', 'zeroconf_enabled "no"',
        'audio_output {', '  type "null"', '  name "null"', '}']
    conf = path / "server.conf"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def command(port: int, text: str) -> bytes:
    with connect(socket.AF_INET, ("127.0.0.1", port)) as s:
        f = s.makefile("rwb")
        f.readline()
        f.write(text.encode() + b"\n")
        f.flush()
        reply = b""
        while not (reply.endswith(b"OK\n") or b"ACK " in reply):
            line = f.readline()
            if not line:
                break
            reply += line
        return reply


def start(program: Path, conf: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([str(program), "--no-daemon", str(conf)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port), timeout=20)) == GREETING + b"OK\n"
    except Exception:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"{program.name} did not start: {err}")
    return proc


def stop(proc: subprocess.Popen) -> int:
    return stop_process(proc)[0]


def owners(path: Path) -> dict[str, tuple[int, int]]:
    names = ["db", "state", "sticker.sql", "log", "playlists/stored.m3u"]
    return {n: (os.stat(path / n).st_uid, os.stat(path / n).st_gid) for n in names if (path / n).exists()}


def run_as_configured_user(program: Path, user) -> tuple[set, dict, set]:
    path = workdir(user)
    try:
        port = free_port()
        proc = start(program, config(path, port, user.pw_name), port)
        try:
            assert mpdtest.wait_until(lambda: (path / "pid").exists(), 10), "no pid file"
            assert int((path / "pid").read_text()) == proc.pid
            pid_owner = (os.stat(path / "pid").st_uid, os.stat(path / "pid").st_gid)
            # Work that starts threads of its own: an update, a stored playlist, a sticker.
            assert command(port, "update").startswith(b"updating_db:")
            assert mpdtest.wait_until(lambda: b"updating_db" not in command(port, "status"), 20)
            assert command(port, "save stored") == b"OK\n"
            before = mpdtest.thread_credentials(proc.pid)
        finally:
            assert stop(proc) == 0
        files = owners(path)
        files["pid"] = pid_owner
        return before, files
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_user_is_applied_to_every_thread_and_file(test_user):
    audio = grp.getgrnam("audio").gr_gid
    uid, gid = test_user.pw_uid, test_user.pw_gid
    wanted = {(f"{uid} {uid} {uid} {uid}", f"{gid} {gid} {gid} {gid}",
               " ".join(str(g) for g in sorted({gid, audio})))}
    creds, files = run_as_configured_user(binary(), test_user)
    assert creds == wanted, "every thread runs as the user, with its groups (audio among them)"
    # As mpd: the log file is opened while still root, everything else as the user.
    assert files["log"] == (0, 0)
    assert set(files) == {"db", "state", "sticker.sql", "pid", "log", "playlists/stored.m3u"}
    assert {owner for name, owner in files.items() if name != "log"} == {(uid, gid)}, files

    ref_creds, ref_files = run_as_configured_user(mpdtest.ref_binary(), test_user)
    assert ref_creds == creds
    assert ref_files == files


def failure(program: Path, conf: Path, preexec=None) -> tuple[int, str]:
    result = subprocess.run([str(program), "--no-daemon", "--stderr", str(conf)], capture_output=True,
                            text=True, timeout=20, preexec_fn=preexec)
    lines = result.stderr.strip().splitlines()
    assert lines, f"{program.name} said nothing"
    message = lines[-1]
    for prefix in ("fermata: ", "exception: "):
        message = message.removeprefix(prefix)
    return result.returncode, message


def both_fail(conf: Path, preexec=None) -> str:
    """The message both servers exit with (status 1), after their own prefixes."""
    ours = failure(binary(), conf, preexec)
    theirs = failure(mpdtest.ref_binary(), conf, preexec)
    assert ours == theirs
    assert ours[0] == 1
    return ours[1]


def test_nonexistent_user_is_refused_as_mpd_refuses_it(tmp_path):
    conf = config(tmp_path, free_port(), "no-such-user-fermata")
    assert both_fail(conf) == 'no such user "no-such-user-fermata"'
    assert not (tmp_path / "pid").exists() and not (tmp_path / "db").exists()


def test_pid_file_is_written_as_the_user(test_user):
    """mpd writes the pid file after giving up root: a directory only root may write fails."""
    path = workdir(test_user)
    try:
        os.chown(path, 0, 0)
        conf = config(path, free_port(), test_user.pw_name, files=False)
        assert both_fail(conf) == f'Failed to create pid file "{path}/pid": Permission denied'
    finally:
        shutil.rmtree(path, ignore_errors=True)


@needs_root
def test_without_root_another_user_cannot_be_taken():
    nobody = pwd.getpwnam("nobody")
    path = workdir(nobody)
    try:
        def as_nobody():
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
        conf = config(path, free_port(), "root")
        assert both_fail(conf, as_nobody) == "Failed to set group 0: Operation not permitted"
        # Naming yourself changes nothing and needs no privilege.
        port = free_port()
        conf = config(path, port, "nobody")
        proc = subprocess.Popen([str(binary()), str(conf)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, preexec_fn=as_nobody)
        try:
            assert ping(connect(socket.AF_INET, ("127.0.0.1", port), timeout=20)) == GREETING + b"OK\n"
            assert {c[0] for c in mpdtest.thread_credentials(proc.pid)} == {f"{nobody.pw_uid} " * 3 + str(nobody.pw_uid)}
        finally:
            assert stop(proc) == 0
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_debians_mpd_conf_starts_as_mpd_without_warnings():
    """Debian's shipped /etc/mpd.conf, its /var/lib/mpd paths moved to a temporary directory (and a free
    port, zeroconf off): every option is acted on (no "not supported", "ignored" or "deprecated"
    warning), and as root the server runs as Debian's `mpd` user, as mpd would."""
    shipped = Path("/etc/mpd.conf")
    if not shipped.exists():
        pytest.fail("/etc/mpd.conf missing: scripts/install-deps.sh installs Debian's mpd")
    try:
        user = pwd.getpwnam("mpd")
    except KeyError:
        pytest.fail("no mpd user: Debian's mpd package creates it")
    path = workdir(user)
    try:
        text = shipped.read_text().replace("/var/lib/mpd", str(path))
        (path / "music").chmod(0o755)
        if os.geteuid() != 0:
            text = text.replace('user\t\t\t\t"mpd"', "")
        port = free_port()
        conf = path / "mpd.conf"
        conf.write_text(text + f'\nport "{port}"\nzeroconf_enabled "no"\n')
        proc = subprocess.Popen([str(binary()), str(conf)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            with connect(socket.AF_INET, ("127.0.0.1", port), timeout=20) as s:
                assert ping(s) == GREETING + b"OK\n"
            if os.geteuid() == 0:
                assert {c[0] for c in mpdtest.thread_credentials(proc.pid)} == {" ".join([str(user.pw_uid)] * 4)}
        finally:
            code, err = stop_process(proc)
        assert code == 0, err
        for word in ("not supported", "ignored", "deprecated", "unknown"):
            assert word not in err, err
    finally:
        shutil.rmtree(path, ignore_errors=True)
