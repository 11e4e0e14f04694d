"""mpd's command line on Fermata: --help, --version, --verbose, --stderr/--stdout, --no-daemon,
--no-config, --kill, --systemd, with mpd 0.23.12's meanings; where mpd prints a message for a
failure, the real `mpd` is run the same way and the messages compared.  127.0.0.1 and temporary
Unix sockets only; --no-config gets its socket from systemd-socket-activate and no D-Bus, so it
neither binds nor announces anything else."""

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

import mpdtest
from test_daemon import binary, connect, ping, stop_process as stop, write_config, GREETING
from mpdtest import free_port


def run(program, args, timeout=20, env=None):
    return subprocess.run([str(program), *args], capture_output=True, text=True, timeout=timeout, env=env)


def message(result) -> str:
    """The last line of stderr without the program's prefix (`fermata: ` or mpd's `exception: `)."""
    lines = result.stderr.strip().splitlines()
    assert lines, f"nothing on stderr (status {result.returncode})"
    return lines[-1].removeprefix("fermata: ").removeprefix("exception: ")


def start(args, env=None) -> subprocess.Popen:
    return subprocess.Popen([str(binary()), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def basic_config(tmp_path: Path, port: int, *lines: str) -> Path:
    return write_config(tmp_path, ['bind_to_address "127.0.0.1"', f'port "{port}"', 'zeroconf_enabled "no"',
                                   *lines, "audio_output {", '  type "null"', '  name "n"', "}"])


def test_help_names_every_option_mpd_has():
    ours = run(binary(), ["--help"])
    assert ours.returncode == 0
    assert "foreground" in ours.stdout, "--help says Fermata does not detach"
    theirs = run(mpdtest.ref_binary(), ["--help"])
    options = re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", theirs.stdout, re.M)
    assert {"--kill", "--no-config", "--no-daemon", "--systemd", "--stderr", "--verbose"} <= set(options)
    for option in options:
        assert option in ours.stdout, option
    for alias in ("-h", "-?"):
        assert run(binary(), [alias]).stdout == ours.stdout
    for alias in ("-V", "--version"):
        version = run(binary(), [alias, "ignored", "arguments"])
        assert version.returncode == 0 and version.stdout.startswith("Fermata ")


def test_too_many_arguments_as_mpd():
    ours = run(binary(), ["a.conf", "b.conf"])
    assert ours.returncode == 64
    assert message(run(mpdtest.ref_binary(), ["a.conf", "b.conf"])) == "too many arguments"
    assert "fermata: too many arguments" in ours.stderr


def test_no_daemon_stays_in_the_foreground(tmp_path):
    port = free_port()
    config = basic_config(tmp_path, port, f'pid_file "{tmp_path}/pid"')
    proc = start(["--no-daemon", str(config)])
    try:
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == GREETING + b"OK\n"
        assert proc.poll() is None and int((tmp_path / "pid").read_text()) == proc.pid
    finally:
        code, _ = stop(proc)
    assert code == 0 and not (tmp_path / "pid").exists()


def test_kill_stops_the_instance_in_pid_file(tmp_path):
    port = free_port()
    config = basic_config(tmp_path, port, f'pid_file "{tmp_path}/pid"')
    proc = start([str(config)])
    try:
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == GREETING + b"OK\n"
        killed = run(binary(), ["--kill", str(config)])
        assert killed.returncode == 0, killed.stderr
        proc.wait(timeout=20)
    finally:
        code, err = stop(proc)
    assert code == 0, "SIGTERM: a clean shutdown"
    assert "shutting down signal=15" in err
    assert not (tmp_path / "pid").exists()


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("case", ["no pid_file", "no pid file", "no process", "systemd"])
def test_kill_failures_as_mpd(tmp_path, case):
    pid_file = tmp_path / "pid"
    lines = [] if case == "no pid_file" else [f'pid_file "{pid_file}"']
    if case == "no process":
        pid_file.write_text(f"{dead_pid()}\n")
    if case == "systemd":
        pid_file.write_text(f"{os.getpid()}\n")   # --systemd ignores pid_file: this process is not signalled
    config = write_config(tmp_path, lines)
    args = ["--systemd", "--kill", str(config)] if case == "systemd" else ["--kill", str(config)]
    ours = run(binary(), args)
    theirs = run(mpdtest.ref_binary(), args)
    assert ours.returncode == theirs.returncode == 1
    assert message(ours) == message(theirs)
    if case == "systemd":
        assert "Ignoring the 'pid_file' setting in systemd mode" in ours.stderr
        assert message(ours) == "no pid_file specified in the config file"


def test_no_config_reads_no_file(tmp_path):
    """--no-config: mpd's defaults, the named file not even opened (it would be an error)."""
    activate = shutil.which("systemd-socket-activate")
    if not activate:
        pytest.fail("systemd-socket-activate missing: scripts/install-deps.sh installs systemd")
    bogus = write_config(tmp_path, ["not_an_option \"x\""])
    assert run(binary(), [str(bogus)]).returncode == 1
    port = free_port()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), HOME=str(tmp_path),
               DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-bus")
    proc = subprocess.Popen([activate, "-l", f"127.0.0.1:{port}", str(binary()), "--no-config", str(bogus)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        with connect(socket.AF_INET, ("127.0.0.1", port), timeout=20) as s:
            assert ping(s) == GREETING + b"OK\n"
    finally:
        code, err = stop(proc)
    assert code == 0, err
    assert "not_an_option" not in err


def test_systemd_mode_notifies_and_ignores_pid_file(tmp_path):
    port = free_port()
    config = basic_config(tmp_path, port, f'pid_file "{tmp_path}/pid"')
    notify = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(str(notify))
        listener.settimeout(20)
        proc = start(["--systemd", str(config)], env=dict(os.environ, NOTIFY_SOCKET=str(notify)))
        try:
            assert b"READY=1" in listener.recv(4096).split(b"\n")
            assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == GREETING + b"OK\n"
            assert not (tmp_path / "pid").exists()
        finally:
            code, err = stop(proc)
    assert code == 0
    assert "Ignoring the 'pid_file' setting in systemd mode" in err


@pytest.mark.parametrize("option", ["--stderr", "--stdout"])
def test_stderr_overrides_log_file(tmp_path, option):
    port = free_port()
    log = tmp_path / "log"
    config = basic_config(tmp_path, port, f'log_file "{log}"')
    proc = start([option, str(config)])
    try:
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == GREETING + b"OK\n"
    finally:
        code, err = stop(proc)
    assert code == 0
    assert "ready" in err
    assert not log.exists() or "ready" not in log.read_text()


def test_verbose_logs_everything(tmp_path):
    """log_level "error" hides the info line about the listener; --verbose shows it."""
    for args, shown in (([], False), (["--verbose"], True), (["-v"], True)):
        port = free_port()
        config = basic_config(tmp_path, port, 'log_level "error"')
        proc = start([*args, str(config)])
        try:
            assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == GREETING + b"OK\n"
        finally:
            code, err = stop(proc)
        assert code == 0
        assert ("listening address=127.0.0.1" in err) == shown, (args, err)
