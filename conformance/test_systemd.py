"""Daemon integration: the systemd units pass `systemd-analyze verify`, socket activation hands
Fermata its listening sockets (TCP and a Unix socket) and `mpc` talks through them, and SIGHUP
reopens the log file for logrotate.  Fermata only; 127.0.0.1 and a temporary Unix socket only."""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import mpdtest
from test_daemon import Daemon, binary, connect, ping, write_config, GREETING
from mpdtest import free_port

REPO = Path(__file__).resolve().parent.parent


def test_units_verify(tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze missing: scripts/install-deps.sh installs systemd")
    for name in ("fermata.service", "fermata.socket"):
        text = (REPO / "etc" / name).read_text()
        # The unit names the installed binary; point it at the one under test so verify can check it.
        (tmp_path / name).write_text(text.replace("/usr/bin/fermata", str(binary())))
    result = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "fermata.socket"),
                             str(tmp_path / "fermata.service")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout + result.stderr == "", "verify warns: " + result.stderr


def test_units_verify_notices_a_broken_unit(tmp_path):
    """The check above can fail: a unit naming a missing binary is refused."""
    (tmp_path / "broken.service").write_text("[Service]\nExecStart=/nonexistent/fermata\n")
    result = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "broken.service")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0


def test_socket_activation(tmp_path):
    """systemd-socket-activate passes a TCP socket and a Unix socket on fds 3 and 4; Fermata serves
    both and ignores bind_to_address (which names a port nobody should be able to reach)."""
    activate = shutil.which("systemd-socket-activate")
    if not activate:
        pytest.fail("systemd-socket-activate missing: scripts/install-deps.sh installs systemd")
    port = free_port()
    unused = free_port()
    sock_path = tmp_path / "fermata.sock"
    config = write_config(tmp_path, ['bind_to_address "127.0.0.1"', f'port "{unused}"'])
    proc = subprocess.Popen([activate, "-l", f"127.0.0.1:{port}", "-l", str(sock_path),
                             str(binary()), "--no-daemon", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # systemd-socket-activate starts the service on the first connection.
        client = connect(socket.AF_INET, ("127.0.0.1", port))
        assert ping(client) == GREETING + b"OK\n"
        client.close()
        result = subprocess.run(["mpc", "-h", "127.0.0.1", "-p", str(port), "status"],
                                capture_output=True, text=True, timeout=10)
        assert result.returncode == 0, result.stderr
        assert "volume:" in result.stdout
        local = connect(socket.AF_UNIX, str(sock_path))
        assert ping(local) == GREETING + b"OK\n"
        local.close()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", unused), timeout=1).close()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            pytest.fail("fermata did not stop on SIGTERM")
    ready = next(line for line in err.splitlines() if "ready" in line)
    assert f"127.0.0.1:{port}" in ready and str(sock_path) in ready, err
    assert f":{unused}" not in ready, "bind_to_address is ignored under socket activation"
    assert sock_path.exists(), "the socket file belongs to systemd: Fermata must not remove it"


def test_sighup_reopens_the_log_file(tmp_path):
    port = free_port()
    log = tmp_path / "fermata.log"
    config = write_config(tmp_path, ['bind_to_address "127.0.0.1"', f'port "{port}"',
                                     f'log_file "{log}"', 'log_level "verbose"'])
    daemon = Daemon(config)
    try:
        client = connect(socket.AF_INET, ("127.0.0.1", port))
        assert ping(client) == GREETING + b"OK\n"
        client.close()
        assert "ready" in log.read_text()
        rotated = tmp_path / "fermata.log.1"
        log.rename(rotated)
        daemon.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 5
        while not (log.exists() and "log reopened" in log.read_text()):
            assert time.monotonic() < deadline, "no new log file after SIGHUP"
            time.sleep(0.05)
        assert "log reopened" not in rotated.read_text()
    finally:
        code, err = daemon.stop()
    assert code == 0, err
    assert "stopped" in log.read_text()
