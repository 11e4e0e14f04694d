"""A JACK server of the test's own and a recording client through libjack (ctypes), for conformance/test_jack.py.

The server is JACK1's `jackd` with the `dummy` driver (no sound card, no network; a server name no other running
server has, so its sockets in /dev/shm/jack-UID/NAME are its own), at 44.1 kHz, without realtime scheduling. JACK1
registers every server in a table of 8 in System V shared memory and frees an entry a dead server left only when a
server of the same name starts: so the names are taken from a small fixed set (`fermata-test-0` to `-7`), the first
one free, and a test run that was killed leaves no entry behind for good.

JACK1 0.126 sometimes loses the end of a process cycle when a client activates or deactivates beside another (the
server then logs `subgraph starting at … timed out` and waits out its client timeout, `-t`, 2 s here): no sample is
lost (the cycle is only late), so recordings are compared as they are, with deadlines that allow for it. The recorder is a client of
that server with input ports (`in_1`, `in_2`) whose process callback keeps every period's samples; it also lists
ports and connections.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Iterator

import mpdtest

RATE = 44100
PERIOD = 1024

_NO_START_SERVER = 0x01
_USE_EXACT_NAME = 0x02
_SERVER_NAME = 0x04
_PORT_IS_INPUT = 0x1
_PORT_IS_PHYSICAL = 0x4
_AUDIO_TYPE = b"32 bit float mono audio"

_PROCESS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)
_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_char_p)
#: libjack's messages (a server that is not there yet…) are not the test's output.
_QUIET = _ERROR(lambda message: None)


def _library() -> ctypes.CDLL:
    lib = ctypes.CDLL("libjack.so.0")
    lib.jack_client_open.restype = ctypes.c_void_p
    lib.jack_client_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p]
    lib.jack_client_close.argtypes = [ctypes.c_void_p]
    lib.jack_activate.argtypes = [ctypes.c_void_p]
    lib.jack_deactivate.argtypes = [ctypes.c_void_p]
    lib.jack_set_process_callback.argtypes = [ctypes.c_void_p, _PROCESS, ctypes.c_void_p]
    lib.jack_port_register.restype = ctypes.c_void_p
    lib.jack_port_register.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                                       ctypes.c_ulong]
    lib.jack_port_get_buffer.restype = ctypes.c_void_p
    lib.jack_port_get_buffer.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.jack_get_ports.restype = ctypes.POINTER(ctypes.c_char_p)
    lib.jack_get_ports.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
    lib.jack_port_get_connections.restype = ctypes.POINTER(ctypes.c_char_p)
    lib.jack_port_get_connections.argtypes = [ctypes.c_void_p]
    lib.jack_free.argtypes = [ctypes.c_void_p]
    lib.jack_set_error_function.argtypes = [_ERROR]
    lib.jack_set_error_function(_QUIET)
    return lib


def _names(lib: ctypes.CDLL, found) -> list[str]:
    names = []
    if found:
        i = 0
        while found[i] is not None:
            names.append(found[i].decode())
            i += 1
        lib.jack_free(ctypes.cast(found, ctypes.c_void_p))
    return names


class Recorder:
    """A client of the server `server` with `channels` input ports (marked physical when `physical`, so that a
    player's automatic connection finds them); records every period while `recording`."""

    def __init__(self, server: str, name: str = "rec", channels: int = 2, physical: bool = False,
                 activate: bool = True):
        self.lib = _library()
        self.name = name
        status = ctypes.c_int(0)
        self.client = self.lib.jack_client_open(name.encode(), _NO_START_SERVER | _USE_EXACT_NAME | _SERVER_NAME,
                                                ctypes.byref(status), server.encode())
        if not self.client:
            raise AssertionError(f"jack_client_open({server}): status {status.value}")
        self.ports = []
        for i in range(channels):
            flags = _PORT_IS_INPUT | (_PORT_IS_PHYSICAL if physical else 0)
            port = self.lib.jack_port_register(self.client, f"in_{i + 1}".encode(), _AUDIO_TYPE, flags, 0)
            assert port, f"jack_port_register in_{i + 1}"
            self.ports.append(port)
        self._lock = threading.Lock()
        self._chunks: list[list[bytes]] = [[] for _ in self.ports]
        self.recording = False
        self._callback = _PROCESS(self._process)   # kept: libjack holds only the pointer
        self.lib.jack_set_process_callback(self.client, self._callback, None)
        if activate:
            assert self.lib.jack_activate(self.client) == 0

    def _process(self, frames: int, _argument) -> int:
        if self.recording:
            data = [ctypes.string_at(self.lib.jack_port_get_buffer(port, frames), frames * 4) for port in self.ports]
            with self._lock:
                for chunks, chunk in zip(self._chunks, data):
                    chunks.append(chunk)
        return 0

    @property
    def destinations(self) -> str:
        """The `destination_ports` value naming this client's ports."""
        return ",".join(f"{self.name}:in_{i + 1}" for i in range(len(self.ports)))

    def start(self) -> None:
        with self._lock:
            self._chunks = [[] for _ in self.ports]
        self.recording = True

    def take(self) -> list[array.array]:
        """Each port's samples since `start` (the recording stops)."""
        self.recording = False
        with self._lock:
            chunks, self._chunks = self._chunks, [[] for _ in self.ports]
        return [array.array("f", b"".join(c)) for c in chunks]

    def ports_of(self, pattern: str) -> list[str]:
        """The names of the ports whose name matches the regular expression."""
        return _names(self.lib, self.lib.jack_get_ports(self.client, pattern.encode(), None, 0))

    def connections(self) -> list[list[str]]:
        """The ports connected to each of this client's ports."""
        return [sorted(_names(self.lib, self.lib.jack_port_get_connections(port))) for port in self.ports]

    def close(self) -> None:
        """Closes the client, once its server has stopped (its thread then ends by itself).

        Never while the server runs: JACK1's jack_client_close cancels the client's thread, which may then be in the
        Python callback (or waiting to enter it, behind a cycle the server gave up on), and would leave Python's lock
        held by a thread that no longer exists."""
        if self.client:
            client, self.client = self.client, None
            self.recording = False
            self.lib.jack_client_close(client)


class JackServer:
    """`jackd -d dummy` under a unique name."""

    def __init__(self, root: Path):
        self.name = ""
        self.root = root
        self.proc: subprocess.Popen | None = None

    @property
    def directory(self) -> Path:
        return Path("/dev/shm") / f"jack-{os.getuid()}" / self.name

    def start(self, playback_ports: int = 2) -> None:
        """Starts the server (`playback_ports` physical playback ports, `system:playback_N`)."""
        binary = shutil.which("jackd")
        if binary is None:
            raise AssertionError("jackd is not installed (scripts/install-deps.sh test installs jackd1)")
        self.root.mkdir(parents=True, exist_ok=True)
        for slot in range(8):
            self.name = f"fermata-test-{slot}"
            if self._answers():
                continue            # another test's server
            log = open(self.root / "jackd.log", "ab")
            # -r: no realtime scheduling (a shared machine); -t: the client timeout, in ms.
            self.proc = subprocess.Popen([binary, "-n", self.name, "-r", "-t", "2000", "-d", "dummy", "-r", str(RATE),
                                          "-p", str(PERIOD), "-P", str(playback_ports)], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            log.close()
            assert mpdtest.wait_until(lambda: self._answers() or self.proc.poll() is not None, 15), self.log()
            if self.proc.poll() is None:
                return
            if "already active" not in self.log():
                break
        raise AssertionError(f"jackd did not start\n{self.log()}")

    def _answers(self) -> bool:
        lib = _library()
        status = ctypes.c_int(0)
        client = lib.jack_client_open(b"probe", _NO_START_SERVER | _SERVER_NAME, ctypes.byref(status),
                                      self.name.encode())
        if client:
            lib.jack_client_close(client)
        return bool(client)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            # SIGTERM: jackd then frees its entry in JACK1's table of servers.
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def dropped_a_client(self) -> bool:
        """Whether the server threw a client out over a lost byte of its graph (JACK1 0.126 under load: a cycle
        given up on, then `pp: cannot clean up byte from graph wait fd`; the client, mpd's or Fermata's, then reads
        `cannot complete execution of the processing graph` and is shut down)."""
        path = self.root / "jackd.log"
        return path.exists() and "cannot clean up byte from graph wait fd" in path.read_text(errors="replace")

    def log(self) -> str:
        path = self.root / "jackd.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


@contextlib.contextmanager
def jack_server(root: Path, playback_ports: int = 2) -> Iterator[JackServer]:
    server = JackServer(root)
    try:
        server.start(playback_ports)
        yield server
    finally:
        server.stop()
