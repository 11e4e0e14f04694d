"""The fermata executable as a user runs it: command line, configuration errors, every
bind_to_address form, clean shutdown. Fermata only (not differential); 127.0.0.1/::1 only."""

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import mpdtest

GREETING = b"OK MPD 0.23.5\n"


def binary() -> Path:
    path = mpdtest.sut_binary()
    if not path.exists():
        pytest.skip(f"system under test not found: {path}")
    if mpdtest.is_mpd(path):
        pytest.skip("Fermata's own command line")
    return path


def run(args, timeout=10):
    return subprocess.run([str(binary()), *args], capture_output=True, text=True, timeout=timeout)


def write_config(directory: Path, lines: list[str]) -> Path:
    path = directory / "fermata.conf"
    path.write_text("\n".join(lines) + "\n")
    return path


def connect(family, address, timeout=5.0) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(address)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def ping(s: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        data += s.recv(100)
    s.sendall(b"ping\n")
    reply = b""
    while not reply.endswith(b"OK\n"):
        chunk = s.recv(100)
        if not chunk:
            break
        reply += chunk
    return data + reply


class Daemon:
    def __init__(self, config: Path, env=None):
        self.proc = subprocess.Popen([str(binary()), str(config)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)

    def stop(self) -> tuple[int, str]:
        return stop_process(self.proc)


def stop_process(proc: subprocess.Popen, timeout: float = 20) -> tuple[int, str]:
    """SIGTERM (unless it has exited), then its status and standard error; a failure if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"{proc.args[0]} did not stop on SIGTERM")
    return proc.returncode, err


def test_help_and_version():
    help_ = run(["--help"])
    assert help_.returncode == 0
    assert help_.stdout.startswith("Usage: fermata [OPTIONS] [CONFIG]")
    for option in ("--help", "--version", "--verbose", "--stderr", "--no-daemon"):
        assert option in help_.stdout
    version = run(["--version"])
    assert version.returncode == 0 and "MPD protocol 0.23.5" in version.stdout


def test_unknown_option_is_a_usage_error():
    result = run(["--bogus"])
    assert result.returncode == 64
    assert "unknown option: --bogus" in result.stderr


def test_bad_config_names_file_and_line(tmp_path):
    config = write_config(tmp_path, ['port "6600"', "bogus_option \"1\""])
    result = run([str(config)])
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == \
        f"fermata: {config}:2: unrecognized parameter: bogus_option"


def test_missing_config(tmp_path):
    result = run([str(tmp_path / "nope.conf")])
    assert result.returncode == 1
    assert "nope.conf" in result.stderr and "No such file or directory" in result.stderr


def test_port_in_use_is_one_clear_line(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        config = write_config(tmp_path, ['bind_to_address "127.0.0.1"', f'port "{port}"'])
        result = run([str(config)])
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == \
        f"fermata: Failed to bind to '127.0.0.1:{port}'; Failed to bind socket: Address already in use"


def test_unsupported_mpd_options_are_warnings(tmp_path):
    port = mpdtest.free_port()
    config = write_config(tmp_path, [
        'bind_to_address "127.0.0.1"', f'port "{port}"', 'zeroconf_enabled "no"',
        'volume_normalization "yes"', "neighbors {", '  plugin "upnp"', "}",
        'replaygain "album"', "input_cache {", '  size "1 M"', "}", "audio_output {", '  type "null"', '  name "n"',
        "}"])
    daemon = Daemon(config)
    try:
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == GREETING + b"OK\n"
    finally:
        code, err = daemon.stop()
    assert code == 0
    assert f'{config}:5: neighbor plugin "upnp" is not supported by Fermata yet and is ignored' in err
    for supported in ("zeroconf_enabled", "volume_normalization", "replaygain", "input_cache", "audio_output",
                      "user"):
        assert f'"{supported}" is not supported' not in err, f"{supported} is supported"


def test_every_bind_to_address_form(tmp_path):
    port = mpdtest.free_port()
    port6 = mpdtest.free_port()
    home = tmp_path / "home"
    home.mkdir()
    socket_path = tmp_path / "fermata.sock"
    abstract = f"fermata-test-{os.getpid()}-{port}"
    config = write_config(tmp_path, [
        f'port "{port}"',
        'bind_to_address "127.0.0.1"',
        f'bind_to_address "[::1]:{port6}"',
        f'bind_to_address "{socket_path}"',
        'bind_to_address "~/home.sock"',
        f'bind_to_address "@{abstract}"',
    ])
    env = dict(os.environ, HOME=str(home))
    daemon = Daemon(config, env=env)
    try:
        expected = GREETING + b"OK\n"
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port))) == expected
        if socket.has_ipv6:
            assert ping(connect(socket.AF_INET6, ("::1", port6))) == expected
        assert ping(connect(socket.AF_UNIX, str(socket_path))) == expected
        assert ping(connect(socket.AF_UNIX, str(home / "home.sock"))) == expected
        assert ping(connect(socket.AF_UNIX, "\0" + abstract)) == expected
    finally:
        code, _ = daemon.stop()
    assert code == 0
    assert not socket_path.exists(), "the Unix socket file is removed on shutdown"


def test_sigint_shuts_down_cleanly(tmp_path):
    port = mpdtest.free_port()
    config = write_config(tmp_path, ['bind_to_address "127.0.0.1"', f'port "{port}"'])
    daemon = Daemon(config)
    client = connect(socket.AF_INET, ("127.0.0.1", port))
    assert ping(client) == GREETING + b"OK\n"
    client.sendall(b"idle\n")
    daemon.proc.send_signal(signal.SIGINT)
    code, err = daemon.stop()
    assert code == 0
    assert "shutting down" in err
    assert client.recv(100) == b"", "clients are disconnected on shutdown"


def test_paths_never_leave_the_music_directory(sut, require_commands):
    """Deliberate difference from mpd 0.23.12, which lists (listfiles) or reads (albumart) the
    directory above the music directory for these."""
    require_commands("listfiles", "albumart")
    with socket.create_connection(("127.0.0.1", sut.port), timeout=5) as s:
        f = s.makefile("rwb")
        f.readline()
        for request, reply in [
            (b"listfiles ..\n", b"ACK [2@0] {listfiles} Malformed path\n"),
            (b'listfiles "Broken/../.."\n', b"ACK [2@0] {listfiles} Malformed path\n"),
            (b'albumart "../x.mp3" 0\n', b"ACK [50@0] {albumart} No file exists\n"),
            (b'albumart "a/../../x.mp3" 0\n', b"ACK [50@0] {albumart} No file exists\n"),
        ]:
            f.write(request)
            f.flush()
            assert f.readline() == reply, request
