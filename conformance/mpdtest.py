"""Helpers for the conformance suite: servers, raw transcripts, differential cases.

Nothing here knows about a particular test; conftest.py wires it into pytest.

Vocabulary
----------
* reference ("ref"): the real ``mpd`` (``/usr/bin/mpd``, 0.23.12).
* system under test ("sut"): Fermata (``FERMATA_BIN``), or a second mpd for the
  harness self-check.
* case: bytes sent on one or more fresh connections.  A *step* is one chunk of
  bytes written on one named connection; between steps the harness waits until
  the servers have gone quiet, so replies are attributed to the step that caused
  them.
* transcript: for each step, what was sent and what each connection received
  while that step settled; at the end, whether each connection is still open.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import gzip
import hashlib
import os
import random
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
CACHE_DIR = Path(os.environ.get("CONFORMANCE_CACHE", HERE / ".cache"))
HOST = "127.0.0.1"

#: Multiply every wait by this (slow machines, valgrind, debug builds).
TIME_SCALE = float(os.environ.get("CONFORMANCE_TIME_SCALE", "1"))
#: After a step, wait until no byte has arrived for this long.
STEP_QUIET = 0.05 * TIME_SCALE
#: After the last step, wait until no byte has arrived for this long.
FINAL_QUIET = 0.15 * TIME_SCALE
#: Once the expected replies are in, wait this long for stragglers / EOF.
GRACE = 0.03 * TIME_SCALE
#: While fewer lines than the reference sent (or fewer replies than the last step's commands ask for) have arrived,
#: a silence this long (not the quiet period) ends the step: a server that pauses under load (loading a library on
#: first use, a busy machine) is not cut off.
LATE_QUIET = 2.0 * TIME_SCALE
#: Upper bound for one settle period (a server that keeps talking).
SETTLE_MAX = 5.0 * TIME_SCALE
CONNECT_TIMEOUT = 5.0 * TIME_SCALE
#: Size of the session library (tools/make-fixtures.py --songs), unless
#: $CONFORMANCE_SONGS says otherwise.
DEFAULT_SONGS = 2000


def scaled(seconds: float) -> float:
    return seconds * TIME_SCALE


# ---------------------------------------------------------------------------
# Servers

#: Ports free_port() gave in this process.
_given_ports: set[int] = set()


def _ephemeral_ports() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A port no socket on HOST holds now, for a server to listen on later.

    It is chosen at random below the kernel's ephemeral range, never from it: a port from `bind(0)` comes from the
    range the local ports of outgoing connections come from, so another test's connection could take it before the
    server binds it (mpd's snapcast output once failed so, `Address already in use`).

    Under pytest-xdist each worker process chooses from a slice of its own: two workers that chose one port in the
    moment before either server bound it would start two servers on it, and the test whose server lost the race
    could talk to the other worker's server (the sticker crash test once read another server's empty stickers)."""
    low, high = _ephemeral_ports()
    # The larger of the stretches below and above the range (above the common 32768-60999: 4536 ports).
    first, last = max((max(1024, low - 12000), low), (high + 1, 65536), key=lambda span: span[1] - span[0])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or "1")
    if workers > 1 and worker.startswith("gw") and worker[2:].isdigit() and last - first >= workers:
        # (A worker xdist starts in place of one that crashed has a higher number: it shares a slice.)
        span = (last - first) // workers
        first += int(worker[2:]) % workers * span
        last = first + span
    chooser = random.SystemRandom()
    for _ in range(2000):
        port = chooser.randrange(first, last)
        if port in _given_ports or port == 6600:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((HOST, port))
            except OSError:
                continue
        _given_ports.add(port)
        return port
    raise RuntimeError(f"no free port in {first}-{last - 1}")


def conf_quote(value: str) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def is_mpd(binary: str | os.PathLike) -> bool:
    return os.path.basename(str(binary)) == "mpd"


def sut_binary() -> Path:
    """The Fermata binary: $FERMATA_BIN, else .build/release/fermata (repo-relative)."""
    value = os.environ.get("FERMATA_BIN", ".build/release/fermata")
    path = Path(value)
    if not path.is_absolute() and os.sep in value:
        path = REPO_ROOT / path
    elif not path.is_absolute():
        found = shutil.which(value)
        path = Path(found) if found else REPO_ROOT / value
    return path


def ref_binary() -> Path:
    return Path(os.environ.get("MPD_BIN", "/usr/bin/mpd"))


def _die_with_parent() -> None:
    """In the child: get SIGTERM if the test process dies (no orphaned servers)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)          # PR_SET_PDEATHSIG
    except Exception:
        pass


class ServerError(RuntimeError):
    pass


class Server:
    """One server process (mpd or Fermata) with its own config and work dir."""

    def __init__(self, role: str, binary: Path, music_dir: Path, workdir: Path,
                 settings: dict[str, str | None] | None = None):
        self.role = role              # "ref" or "sut" (or a test-specific label)
        self.binary = Path(binary)
        self.music_dir = Path(music_dir)
        self.workdir = Path(workdir)
        self.overrides = dict(settings or {})
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "server.log"
        self.conf_path = self.workdir / "server.conf"
        self.returncode: int | None = None
        self.crashed = False
        self.stopped = False
        self.expect_exit = False       # a test made it exit on purpose (kill)
        #: (uid, gid) to run as, e.g. nobody's, so that file modes matter even
        #: when the tests run as root.  The work dir is chowned to it.
        self.run_as: tuple[int, int] | None = None
        #: resource limits for the process, e.g. {resource.RLIMIT_DATA: 2 << 30}.
        self.limits: dict[int, int] = {}
        #: `audio_output` blocks, each a dict of settings, instead of the one null output.
        self.outputs: list[dict[str, str]] | None = None
        #: extra environment variables for the process (e.g. HOME for an asoundrc).
        self.env: dict[str, str] = {}
        #: configuration text appended for both servers (e.g. `decoder { … }` blocks).
        self.extra_config: str = ""
        #: refuse io_uring_setup() to the process (seccomp), so that mpd reads files with plain read()s:
        #: see deny_io_uring().
        self.deny_io_uring = False

    @property
    def label(self) -> str:
        kind = "mpd" if is_mpd(self.binary) else self.binary.name
        return f"{self.role} ({kind})"

    # -- config ------------------------------------------------------------
    def settings(self) -> dict[str, str]:
        (self.workdir / "playlists").mkdir(parents=True, exist_ok=True)
        s: dict[str, str | None] = {
            "music_directory": str(self.music_dir),
            "playlist_directory": str(self.workdir / "playlists"),
            "db_file": str(self.workdir / "database"),
            "sticker_file": str(self.workdir / "sticker.sql"),
            "bind_to_address": HOST,
            "port": str(self.port),
        }
        # Never announce test servers (test_zeroconf.py runs its own, in private namespaces).
        s["zeroconf_enabled"] = "no"
        s.update(self.overrides)
        if self.role == "sut" or self.role.startswith("sut"):
            for name in filter(None, os.environ.get("FERMATA_CONFIG_OMIT", "").split(",")):
                s.pop(name.strip(), None)
        return {k: v for k, v in s.items() if v is not None}

    def write_config(self) -> None:
        lines = [f"# written by conformance/mpdtest.py for {self.role}"]
        for key, value in self.settings().items():
            # A list repeats the setting (password, host_permissions, bind_to_address).
            for one in (value if isinstance(value, list) else [value]):
                lines.append(f"{key} {conf_quote(one)}")
        for output in self.outputs if self.outputs is not None else [{"type": "null", "name": "Null Output"}]:
            lines += ["audio_output {", *(f"    {k} {conf_quote(v)}" for k, v in output.items()), "}"]
        if self.extra_config:
            lines.append(self.extra_config)
        if not is_mpd(self.binary) and os.environ.get("FERMATA_CONFIG_EXTRA"):
            lines.append(os.environ["FERMATA_CONFIG_EXTRA"])
        self.conf_path.write_text("\n".join(lines) + "\n")

    def command(self) -> list[str]:
        if is_mpd(self.binary):
            return [str(self.binary), "--no-daemon", "--stderr", str(self.conf_path)]
        return [str(self.binary), str(self.conf_path)]

    # -- lifecycle -----------------------------------------------------------
    def spawn(self) -> None:
        if not self.binary.exists():
            raise ServerError(f"{self.role}: binary not found: {self.binary}")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.stopped = False
        self.crashed = False
        self.port = free_port()
        self.write_config()
        if self.run_as is not None:
            for path in [self.workdir, *self.workdir.rglob("*")]:
                os.chown(path, *self.run_as)
        log = open(self.log_path, "ab")
        log.write(f"\n=== {' '.join(self.command())} (port {self.port})\n".encode())
        log.flush()
        run_as = self.run_as
        limits = dict(self.limits)
        no_uring = self.deny_io_uring

        def preexec():
            _die_with_parent()
            if no_uring:
                deny_io_uring()
            if limits:
                import resource
                for which, value in limits.items():
                    resource.setrlimit(which, (value, value))
            if run_as is not None:
                os.setgroups([])
                os.setgid(run_as[1])
                os.setuid(run_as[0])
                _die_with_parent()          # setuid clears the death signal

        self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **self.env} if self.env else None,
                                     cwd=self.workdir, start_new_session=True,
                                     preexec_fn=preexec)
        log.close()

    def wait_ready(self, timeout: float = 30.0, songs_hint: int | None = None) -> None:
        """Wait until the server greets, then until its database update is done."""
        deadline = time.monotonic() + scaled(timeout)
        while True:
            self.check_alive()
            try:
                with socket.create_connection((HOST, self.port), timeout=1.0) as s:
                    s.settimeout(2.0)
                    if s.makefile("rb").readline().startswith(b"OK MPD "):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ServerError(f"{self.label} did not greet on port {self.port} "
                                  f"within {timeout}s\n{self.log_tail()}")
            time.sleep(0.02)
        # Database: wait until no update runs, and (if the server has `stats`)
        # until it reports at least `songs_hint` songs.
        while True:
            self.check_alive()
            try:
                status = self.query("status")
                stats = self.query("stats")
            except OSError:                 # includes ConnectionError, timeouts
                if time.monotonic() > deadline:
                    raise ServerError(f"{self.label} stopped answering during start-up\n"
                                      f"{self.log_tail()}")
                time.sleep(0.05)
                continue
            updating = b"updating_db:" in status
            songs = parse_pairs(stats).get("songs")
            # No hint, no `stats`, or no database in it yet: nothing to wait for.
            enough = (songs_hint is None or not stats.endswith(b"OK\n") or songs is None
                      or int(songs) >= songs_hint)
            if not updating and enough:
                return
            if time.monotonic() > deadline:
                return  # let the tests show what is wrong
            time.sleep(0.05)

    def start(self, songs_hint: int | None = None, spawned: bool = False) -> "Server":
        """Spawn (unless already spawned) and wait; retry if the port got taken."""
        for attempt in range(3):
            if not (spawned and attempt == 0):
                self.spawn()
            try:
                self.wait_ready(songs_hint=songs_hint)
                return self
            except ServerError:
                lost_port = (self.proc is not None and self.proc.poll() is not None
                             and b"in use" in self.log_path.read_bytes()[-2000:])
                if not lost_port or attempt == 2:
                    raise
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            self.returncode = self.proc.returncode
            self.crashed = True
            raise ServerError(f"{self.label} exited with status {self.proc.returncode}\n"
                              f"{self.log_tail()}")

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGTERM, then SIGKILL.  Returns the exit status; records crashes."""
        if self.proc is None:
            return None
        if self.stopped:
            return self.returncode
        self.stopped = True
        if self.proc.poll() is not None:
            self.crashed = True        # died before we asked it to
        else:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=scaled(timeout))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
                self.crashed = True
            else:
                if self.proc.returncode not in (0, -signal.SIGTERM):
                    self.crashed = True
        self.returncode = self.proc.returncode
        return self.returncode

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = self.log_path.read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            return "(no log)"
        return f"--- last {min(n, len(lines))} log lines of {self.label} ({self.log_path}):\n" + \
            "\n".join(lines[-n:])

    # -- simple client -------------------------------------------------------
    def connect(self, timeout: float = CONNECT_TIMEOUT) -> "LineClient":
        return LineClient(self.port, timeout)

    def query(self, line: str | bytes, timeout: float = 5.0) -> bytes:
        """One command on a fresh connection; returns the reply up to OK/ACK."""
        with self.connect(timeout) as c:
            return c.command(line)


class LineClient:
    """A blocking, line-oriented client for non-differential tests."""

    def __init__(self, port: int, timeout: float = CONNECT_TIMEOUT, host: str = HOST):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rb")
        self.greeting = self.file.readline()

    def send(self, data: str | bytes) -> None:
        self.sock.sendall(to_bytes(data))

    def read_reply(self) -> bytes:
        """Read up to and including the OK / ACK line."""
        out = bytearray()
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("connection closed; got: " + repr(bytes(out)))
            out += line
            if line == b"OK\n" or line.startswith(b"ACK "):
                return bytes(out)

    def command(self, line: str | bytes) -> bytes:
        data = to_bytes(line)
        self.send(data if data.endswith(b"\n") else data + b"\n")
        return self.read_reply()

    def close(self) -> None:
        try:
            self.file.close()
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def parse_pairs(reply: bytes) -> dict[str, str]:
    out = {}
    for line in reply.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            out.setdefault(key, value)
    return out


def command_names(reply: bytes) -> list[str]:
    return [line[len("command: "):] for line in reply.decode().splitlines()
            if line.startswith("command: ")]


def to_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


# ---------------------------------------------------------------------------
# Cases

@dataclasses.dataclass
class Step:
    conn: str
    data: bytes
    #: Wait (up to SETTLE_MAX) until this connection has the replies to what the step
    #: sent, instead of only until the servers are quiet: for ``idle`` that ends when a
    #: song does, and for commands that a busy player may answer late. A silence of
    #: LATE_QUIET does not end such a step: a command that computes (getfingerprint) is
    #: silent until it answers.
    wait: bool = False
    #: With ``wait``: the longest the step waits, in seconds before TIME_SCALE (None: SETTLE_MAX).
    wait_max: float | None = None


@dataclasses.dataclass
class Case:
    """What to send.  Build with :func:`make_case`; see README.md."""

    steps: list[Step]
    #: Total replies (OK / ACK lines, greeting excluded) the case ends with, if
    #: known: lets the harness stop early instead of waiting for silence.
    #: ``"auto"`` (in make_case) counts them from the lines sent.
    replies: int | None = None
    #: Extra normalisation: callable(bytes line) -> bytes line, or None to drop the line.
    normalize: Callable[[bytes], bytes] | None = None
    #: Extra volatile keys (``key: value`` lines whose value is masked).
    volatile: tuple[str, ...] = ()
    #: MPD commands the case needs.  None = parse them from the sent lines.
    requires: frozenset[str] | None = None
    #: Wait this long (quiet period) after each step; None = STEP_QUIET.
    step_quiet: float | None = None
    #: Queue cases: before the case, learn the next song id and the queue version on
    #: each server (``addid probe_uri``, ``deleteid``, ``status``), so the case can say
    #: ``{id1}`` (its first song's id), ``{id2}``…, ``{v}`` (the version it starts at),
    #: ``{v+2}``… and ids and versions in replies compare relative to those.
    queue: bool = False
    probe_uri: str = "root song.mp3"

    def connections(self) -> list[str]:
        seen = []
        for s in self.steps:
            if s.conn not in seen:
                seen.append(s.conn)
        return seen

    def sent_commands(self) -> set[str]:
        """First words of every line sent (what the case needs a server to know)."""
        names = set()
        for conn in self.connections():
            data = b"".join(s.data for s in self.steps if s.conn == conn)
            for line in data.split(b"\n"):
                m = re.match(rb"([a-z][a-z0-9_]*)", line)
                if m:
                    names.add(m.group(1).decode())
        return names


def deny_io_uring() -> None:
    """Makes io_uring_setup() fail with ENOSYS in this process and its children (a seccomp filter; x86-64
    only, other architectures are left alone), as on a kernel without io_uring: mpd then reads local files
    with read() instead of its io_uring input stream.

    Why: mpd 0.23.12's `getfingerprint` waits for its io_uring file stream without registering a handler
    that would wake it (DecodeFile sets none; fixed upstream later), so on kernels with io_uring it hangs
    for good whenever a read is not complete yet (always for WAV, often for Ogg, FLAC, AAC...)."""
    import ctypes
    import platform
    import struct
    if platform.machine() != "x86_64":
        return
    audit_arch_x86_64, nr_io_uring_setup, enosys = 0xC000003E, 425, 38
    program = [
        (0x20, 0, 0, 4),                              # A = arch
        (0x15, 0, 3, audit_arch_x86_64),              # not x86-64: allow
        (0x20, 0, 0, 0),                              # A = syscall number
        (0x15, 0, 1, nr_io_uring_setup),
        (0x06, 0, 0, 0x00050000 | enosys),            # SECCOMP_RET_ERRNO | ENOSYS
        (0x06, 0, 0, 0x7FFF0000),                     # SECCOMP_RET_ALLOW
    ]
    raw = b"".join(struct.pack("HBBI", *op) for op in program)
    filters = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program), ctypes.cast(filters, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if (libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0
            or libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0):
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def known_commands(server: "Server") -> set[str]:
    """Every command a server implements, whatever the asking client may run: `commands` plus
    `notcommands` (a client without permissions sees most of them only in the latter)."""
    return (set(command_names(server.query("commands")))
            | set(command_names(server.query("notcommands"))))


def compare_on_pair(pair, spec, case_id: str, **options) -> None:
    """Runs `spec` on an extra server pair (conftest's `server_pair`), skipping the test when the system
    under test is missing or lacks a command the case needs. `options` go to `make_case` (`volatile=…`)."""
    import pytest
    if pair.sut is None:
        pytest.skip(pair.sut_missing)
    case = make_case(spec, replies="auto", **options)
    missing = missing_commands(case, known_commands(pair.ref), known_commands(pair.sut))
    if missing:
        pytest.skip(f"the system under test does not list {', '.join(missing)}")
    compare(case, pair.ref, pair.sut, case_id)


def missing_commands(case: Case, mpd_commands: set[str], sut_commands: set[str]) -> list[str]:
    """Commands the case uses that mpd knows but the SUT does not list.

    Only real mpd commands count: a case that sends ``foo`` or ``Ping`` tests
    how unknown input is handled, which every server must do.
    """
    if case.requires is not None:
        needed = set(case.requires)
    else:
        needed = case.sent_commands() & set(mpd_commands)
    return sorted(needed - set(sut_commands))


def count_replies(data: bytes) -> int | None:
    """How many OK/ACK lines mpd sends for ``data`` written on one connection.

    One per command outside a command list, one per command list.  None (do not
    guess) if a line would close the connection or blocks (idle).
    """
    n = 0
    in_list = False
    for line in data.split(b"\n")[:-1]:
        m = re.match(rb"[a-z][a-z0-9_]*", line)
        if not m:
            return None
        word = m.group()
        if word in (b"command_list_begin", b"command_list_ok_begin") and not in_list:
            in_list = True
        elif word == b"command_list_end" and in_list:
            in_list = False
            n += 1
        elif in_list:
            continue
        elif word in (b"idle", b"noidle", b"close", b"kill"):
            return None
        else:
            n += 1
    return None if in_list else n


def _auto_replies(c: Case) -> Case:
    """``replies="auto"``: count them, if the case runs on one connection."""
    if c.replies != "auto":
        return c
    conns = c.connections()
    n = count_replies(b"".join(s.data for s in c.steps)) if len(conns) == 1 else None
    return dataclasses.replace(c, replies=n)


def make_case(spec, **options) -> Case:
    """Turn a short description into a Case.

    ``replies="auto"`` counts the replies with :func:`count_replies` (single
    connection cases only; otherwise it means "unknown").

    * ``"ping\\n"`` or ``b"ping\\n"``: one chunk on one connection;
    * ``["pi", "ng\\n"]``: several chunks on one connection, with pauses;
    * ``[("a", "idle\\n"), ("b", "subscribe x\\n"), ("a", "noidle\\n")]``:
      chunks on named connections (opened on first use, in that order);
    * ``[]``: connect, send nothing (the greeting alone);
    * a ready :class:`Case` is returned unchanged (options are applied).
    """
    if isinstance(spec, Case):
        # Options given for a whole table only fill fields the case left at default.
        defaults = {f.name: f.default for f in dataclasses.fields(Case)}
        keep = {k: v for k, v in options.items() if getattr(spec, k) == defaults.get(k)}
        return _auto_replies(dataclasses.replace(spec, **keep) if keep else spec)
    if isinstance(spec, (str, bytes)):
        spec = [spec]
    steps = []
    for item in spec:
        if isinstance(item, tuple):
            conn, data, *flags = item
            steps.append(Step(conn, to_bytes(data), wait="wait" in flags))
        else:
            steps.append(Step("a", to_bytes(item)))
    if not steps:
        steps = [Step("a", b"")]
    if "requires" in options and options["requires"] is not None:
        options["requires"] = frozenset(options["requires"])
    return _auto_replies(Case(steps=steps, **options))


# ---------------------------------------------------------------------------
# Running a case

DEFAULT_VOLATILE = ("uptime", "playtime", "elapsed", "time", "db_update")


@dataclasses.dataclass
class Transcript:
    """What happened on the wire.  ``events`` is comparable as-is."""

    events: list[tuple]          # ("send", step, conn, bytes) / ("recv", step, conn, bytes)
    closed: dict[str, bool]      # per connection, at the end
    reset: dict[str, bool]       # informational: closed by RST (not compared)
    replies: int                 # OK/ACK lines received (greeting excluded)
    lines_per_step: dict[tuple[int, str], int]
    closed_step: dict[str, int]
    elapsed: float
    #: Queue cases: (id before the case's first song, queue version at its start).
    bases: tuple[int, int] | None = None

    def normalized(self, case: Case) -> list[tuple]:
        rx = _volatile_pattern(case)
        out = []
        for ev in self.events:
            if ev[0] == "recv":
                lines = ev[3].split(b"\n")
                norm = []
                for line in lines:
                    line = rx.sub(rb"\1: <volatile>", line)
                    if self.bases is not None:
                        line = _relative_queue_line(line, self.bases)
                    if case.normalize:
                        line = case.normalize(line)
                        if line is None:        # the normaliser dropped the line
                            continue
                    norm.append(line)
                out.append(ev[:3] + (b"\n".join(norm),))
            else:
                out.append(ev)
        out.append(("closed", tuple(sorted(self.closed.items()))))
        return out


def _volatile_pattern(case: Case) -> re.Pattern[bytes]:
    """The lines whose values the comparison masks (``elapsed: <volatile>``)."""
    keys = DEFAULT_VOLATILE + tuple(case.volatile)
    return re.compile(rb"^(" + b"|".join(re.escape(k.encode()) for k in keys) + rb"): .*$")


_ID_LINE = re.compile(rb"^(Id|songid|nextsongid): (\d+)$")
_VERSION_LINE = re.compile(rb"^playlist: (\d+)$")
_PLACEHOLDER = re.compile(rb"\{(id|v)(?:([+-])(\d+))?(\d*)\}")


def _relative_queue_line(line: bytes, bases: tuple[int, int]) -> bytes:
    """``Id: 1234`` -> ``Id: id3`` (the case's third id), ``playlist: 57`` -> ``playlist: v+2``."""
    m = _ID_LINE.match(line)
    if m:
        return m.group(1) + b": id" + str(int(m.group(2)) - bases[0]).encode()
    m = _VERSION_LINE.match(line)
    if m:
        delta = int(m.group(1)) - bases[1]
        return b"playlist: v" + (b"%+d" % delta if delta else b"")
    return line


def _substitute(data: bytes, bases: tuple[int, int]) -> bytes:
    """``{id2}`` -> the case's second id; ``{v}``, ``{v+1}``, ``{v-1}`` -> versions."""
    def repl(m: re.Match) -> bytes:
        kind, sign, delta, index = m.groups()
        if kind == b"id":
            return str(bases[0] + int(index or b"1")).encode()
        value = bases[1] + (int(delta) if sign == b"+" else -int(delta) if sign else 0)
        return str(value).encode()
    return _PLACEHOLDER.sub(repl, data)


def probe_queue(port: int, uri: str) -> tuple[int, int]:
    """The id the next added song will get minus one, and the queue version, read with
    ``addid``/``deleteid``/``status`` (ids are never reused before they wrap)."""
    with LineClient(port) as c:
        reply = c.command(f"addid {arg(uri)}")
        m = re.search(rb"^Id: (\d+)$", reply, re.M)
        if not m:
            raise ServerError(f"queue probe: addid {uri!r} failed: {reply!r}")
        c.command(b"deleteid " + m.group(1))
        version = parse_pairs(c.command("status")).get("playlist")
        return int(m.group(1)), int(version)


class _Conn:
    def __init__(self, name: str, port: int, kept: Callable[[bytes], bool] | None = None):
        self.name = name
        #: Whether the case's normalised transcript keeps a line: only those count in ``lines``, so a line
        #: the comparison drops anyway (``audio:`` where the case ignores it) never makes a step wait.
        self.kept = kept
        self.sock = socket.create_connection((HOST, port), timeout=CONNECT_TIMEOUT)
        self.sock.setblocking(False)
        self.out = b""
        self.closed = False
        self.closed_step: int | None = None
        self.reset = False
        self.lines = 0
        self.replies = 0
        self.partial = b""     # incomplete last line, for reply counting
        self.greeted = False
        self.step_bytes: dict[int, bytearray] = {}

    def feed(self, step: int, data: bytes) -> None:
        self.step_bytes.setdefault(step, bytearray()).extend(data)
        buf = self.partial + data
        *complete, self.partial = buf.split(b"\n")
        for line in complete:
            if self.kept is None or self.kept(line):
                self.lines += 1
            if not self.greeted:
                self.greeted = True
                continue
            if line == b"OK" or line.startswith(b"ACK "):
                self.replies += 1


def run_case(port: int, case: Case, expect: "Expectation | None" = None) -> Transcript:
    """Play ``case`` against the server on ``port`` and record the transcript.

    ``expect`` (from a previous run on the reference server) lets each step stop
    as soon as the same number of lines has arrived, instead of waiting for a
    quiet period.
    """
    t0 = time.monotonic()
    bases = probe_queue(port, case.probe_uri) if case.queue else None
    kept = None
    if case.normalize is not None:
        volatile = _volatile_pattern(case)

        def kept(line: bytes) -> bool:
            line = volatile.sub(rb"\1: <volatile>", line)
            if bases is not None:
                line = _relative_queue_line(line, bases)
            return case.normalize(line) is not None
    sel = selectors.DefaultSelector()
    conns: dict[str, _Conn] = {}
    events: list[tuple] = []
    lines_per_step: dict[tuple[int, str], int] = {}

    def pump(step: int, quiet: float, done: Callable[[], bool] | None, patience: float | None = None) -> None:
        """Read (and write pending data) until quiet, or until done() + GRACE; with `patience`, only done()
        or that many seconds end it."""
        last = time.monotonic()
        start = last
        done_at = None
        while True:
            now = time.monotonic()
            pending = any(c.out for c in conns.values() if not c.closed)
            if done_at is None and not pending and done is not None and done():
                done_at = now
            if done_at is not None and now - done_at >= GRACE and now - last >= min(GRACE, quiet):
                return
            # Short of the reference's lines (or of the replies counted for the last step), only a long silence
            # ends the step: a server that pauses under load is not cut off (a real shortfall then fails).
            late = done is not None and done_at is None
            if not pending and now - last >= (LATE_QUIET if late and patience is None else quiet):
                return
            if now - start > (patience or SETTLE_MAX):
                return
            for c in conns.values():
                if c.closed:
                    continue
                want = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.out else 0)
                sel.modify(c.sock, want, c)
            if all(c.closed for c in conns.values()):
                return
            timeout = 0.005
            for key, mask in sel.select(timeout):
                c: _Conn = key.data
                if mask & selectors.EVENT_WRITE and c.out:
                    try:
                        n = c.sock.send(c.out)
                        c.out = c.out[n:]
                        last = time.monotonic()
                    except (BlockingIOError, InterruptedError):
                        pass
                    except (BrokenPipeError, ConnectionResetError):
                        c.out = b""
                if mask & selectors.EVENT_READ:
                    try:
                        data = c.sock.recv(1 << 16)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except ConnectionResetError:
                        data = b""
                        c.reset = True
                    if data:
                        c.feed(step, data)
                        last = time.monotonic()
                    else:
                        c.closed = True
                        c.closed_step = step
                        c.out = b""
                        sel.unregister(c.sock)
                        last = time.monotonic()

    try:
        nsteps = len(case.steps)
        for i, step in enumerate(case.steps):
            c = conns.get(step.conn)
            if c is None:
                c = conns[step.conn] = _Conn(step.conn, port, kept)
                sel.register(c.sock, selectors.EVENT_READ, c)
            if c.closed:
                events.append(("send", i, step.conn, b"<not sent: connection closed>"))
            else:
                c.out += _substitute(step.data, bases) if bases else step.data
                events.append(("send", i, step.conn, step.data))
            last_step = i == nsteps - 1
            quiet = FINAL_QUIET if last_step else (case.step_quiet or STEP_QUIET)
            done = None
            patience = None
            if step.wait:
                patience = SETTLE_MAX if step.wait_max is None else step.wait_max * TIME_SCALE
                quiet = patience
                if expect is None:
                    def done(c=c, need=c.replies + (count_replies(step.data) or 1)):
                        return c.closed or c.replies >= need
            if expect is not None:
                want = {name: expect.lines.get((i, name), 0) for name in conns}
                prev = {name: expect.lines.get((i - 1, name), 0) for name in conns}
                wanted_closed = expect.closed_after.get(i, set())
                if want == prev and not wanted_closed:
                    done = None       # the reference stayed silent: wait for quiet
                else:
                    def done(want=want, wanted_closed=wanted_closed):
                        return all((conns[n].closed or conns[n].lines >= k)
                                   and (n not in wanted_closed or conns[n].closed)
                                   for n, k in want.items())
            elif last_step and case.replies is not None:
                def done():
                    return sum(x.replies for x in conns.values()) >= case.replies
            pump(i, quiet, done, patience)
            for name, x in conns.items():
                lines_per_step[(i, name)] = x.lines
                if x.step_bytes.get(i):
                    events.append(("recv", i, name, bytes(x.step_bytes[i])))
        closed = {n: x.closed for n, x in conns.items()}
        closed_step = {n: x.closed_step for n, x in conns.items() if x.closed}
        reset = {n: x.reset for n, x in conns.items()}
        replies = sum(x.replies for x in conns.values())
    finally:
        _teardown(conns, sel)
    return Transcript(events, closed, reset, replies, lines_per_step, closed_step,
                      time.monotonic() - t0, bases)


def _teardown(conns: dict[str, _Conn], sel) -> None:
    """Close the case's connections so the server has forgotten them.

    ``close`` is a barrier: when we see EOF, the server has dropped the client
    (its subscriptions, idle state, ...).  If the server answers instead (no
    ``close`` support) or stays silent (an open command list stores the line),
    we give up after a short while and just hang up.
    """
    open_conns = [c for c in conns.values() if not c.closed]
    for c in open_conns:
        try:
            c.sock.settimeout(0.2 * TIME_SCALE)
            c.sock.sendall(b"close\n")
        except OSError:
            c.closed = True
    deadline = time.monotonic() + 0.5 * TIME_SCALE
    for c in open_conns:
        if c.closed:
            continue
        c.sock.setblocking(True)
        got = b""
        try:
            while time.monotonic() < deadline:
                c.sock.settimeout(max(0.005, deadline - time.monotonic()))
                data = c.sock.recv(1 << 16)
                if not data:
                    break
                got = (got + data)[-4096:]
                if re.search(rb"(^|\n)ACK [^\n]*\n$", got):
                    break
        except OSError:
            pass
    for c in conns.values():
        try:
            c.sock.close()
        except OSError:
            pass
    sel.close()


@dataclasses.dataclass
class Expectation:
    """The shape of a reference transcript, used to speed up the second run."""

    lines: dict[tuple[int, str], int]
    closed_after: dict[int, set[str]]

    @classmethod
    def from_transcript(cls, t: Transcript) -> "Expectation":
        closed_after: dict[int, set[str]] = {}
        for name, step in t.closed_step.items():
            closed_after.setdefault(step, set()).add(name)
        return cls(dict(t.lines_per_step), closed_after)


# ---------------------------------------------------------------------------
# Rendering and comparing

def _show_bytes(line: bytes, limit: int = 200) -> str:
    text = line.decode("utf-8", "backslashreplace")
    text = "".join(ch if (ch >= " " and ch != "\x7f") or ch == "\t" else
                   f"\\x{ord(ch):02x}" for ch in text).replace("\t", "\\t").replace("\\x0d", "\\r")
    if len(text) > limit:
        digest = hashlib.sha1(line).hexdigest()[:10]
        text = f"{text[:limit // 2]}…[{len(line)} bytes, sha1 {digest}]…{text[-20:]}"
    return text


def render(events: Iterable[tuple]) -> list[str]:
    out = []
    for ev in events:
        if ev[0] == "closed":
            for name, closed in ev[1]:
                out.append(f"{name}: connection {'CLOSED by server' if closed else 'still open'}")
            continue
        kind, step, conn, data = ev
        arrow = ">" if kind == "send" else "<"
        if kind == "send" and data == b"":
            out.append(f"{conn}{arrow} (connect, send nothing)")
            continue
        lines = data.split(b"\n")
        tail = lines.pop()          # after the last \n: b"" if the data ended in \n
        for line in lines:
            out.append(f"{conn}{arrow} {_show_bytes(line)}")
        if tail:
            out.append(f"{conn}{arrow} {_show_bytes(tail)}  ⟵ no newline")
    return out


class DifferentialMismatch(AssertionError):
    pass


def compare(case: Case, ref: Server, sut: Server, case_id: str = "") -> tuple[Transcript, Transcript]:
    """Run ``case`` on both servers and raise DifferentialMismatch on any difference."""
    t_ref = run_case(ref.port, case)
    t_sut = run_case(sut.port, case, Expectation.from_transcript(t_ref))
    n_ref = t_ref.normalized(case)
    n_sut = t_sut.normalized(case)
    if n_ref != n_sut:
        a = render(n_ref)
        b = render(n_sut)
        diff = "\n".join(difflib.unified_diff(a, b, f"{ref.label}", f"{sut.label}",
                                              lineterm="", n=4))
        raise DifferentialMismatch(
            f"transcripts differ for case {case_id!r}\n"
            f"(> sent, < received; normalised keys: "
            f"{', '.join(DEFAULT_VOLATILE + tuple(case.volatile))})\n\n{diff}\n\n"
            f"--- full {ref.label} transcript:\n" + "\n".join(a))
    return t_ref, t_sut


# ---------------------------------------------------------------------------
# Misc helpers for non-differential tests

def raise_nofile_limit(want: int = 8192) -> int:
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, want), hard) if hard != resource.RLIM_INFINITY else max(soft, want)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def server_side_connections(port: int) -> int:
    """Sockets on the server's side of 127.0.0.1:port that are not yet closed.

    Counts ESTABLISHED (01) and CLOSE_WAIT (08) entries whose local port is
    ``port`` in /proc/net/tcp{,6}: a connection the server has not closed yet.
    """
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for row in f:
                    fields = row.split()
                    local, state = fields[1], fields[3]
                    if int(local.rsplit(":", 1)[1], 16) == port and state in ("01", "08"):
                        count += 1
        except OSError:
            continue
    return count


@contextlib.contextmanager
def stream_server(root: Path, port_file: Path, lifetime: int = 600):
    """tools/streamserver.py serving the files of `root` on 127.0.0.1 (its port written to `port_file`): yields its
    base URL (`http://127.0.0.1:PORT`), and stops it after."""
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "tools" / "streamserver.py"), "--root", str(root),
                             "--port-file", str(port_file), "--lifetime", str(lifetime)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(port_file.exists, 10), "streamserver did not start"
        yield f"http://{HOST}:{port_file.read_text().strip()}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def pulseaudio_daemon(root: Path, modules: list[str] = ("module-null-sink sink_name=null",)):
    """A PulseAudio daemon of the test's own: the modules given (a null sink by default) and the native protocol on a
    Unix socket in `root` only (no network module, no D-Bus, no autospawn; HOME and the runtime directory in
    `root`, so a user's session is never touched). Its log, `root/log`, is at the info level: each stream it
    creates shows there with its sample spec, channel map and properties. Yields the socket's path; stopped when
    the block ends."""
    binary = shutil.which("pulseaudio")
    if binary is None:
        raise AssertionError("pulseaudio is not installed (scripts/install-deps.sh test installs it)")
    (root / "runtime").mkdir(parents=True, exist_ok=True)
    socket_path = root / "native"
    env = {**os.environ, "HOME": str(root), "XDG_RUNTIME_DIR": str(root / "runtime"),
           "DBUS_SESSION_BUS_ADDRESS": "disabled:", "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={root / 'no-bus'}"}
    arguments = [binary, "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
                 "--log-target=stderr", "--log-level=info", "-L", f"module-native-protocol-unix socket={socket_path} auth-anonymous=1"]
    for module in modules:
        arguments += ["-L", module]
    with open(root / "log", "wb") as log:
        proc = subprocess.Popen(arguments, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            assert wait_until(lambda: socket_path.exists() or proc.poll() is not None, scaled(15)), \
                "pulseaudio did not start"
            assert proc.poll() is None, (root / "log").read_text()[-2000:]
            yield socket_path
        finally:
            proc.terminate()
            proc.wait()


#: The configuration of `pipewire_daemon`: the native protocol, the modules a stream needs (client nodes,
#: adapters, links made by hand, access for every client), a dummy driver, the rates a stream may ask for, and
#: periods of 4096 frames (long enough that a loaded machine does not miss cycles, which loses samples). No
#: session manager: the test configures the streams' ports and links them (`pw-cli set-param`, `pw-link`).
PIPEWIRE_CONFIG = """context.properties = {
    core.daemon = true
    core.name = pipewire-0
    link.max-buffers = 16
    default.clock.rate = 44100
    default.clock.allowed-rates = [ 44100 48000 ]
    default.clock.quantum = 4096
    default.clock.min-quantum = 4096
    default.clock.max-quantum = 4096
    settings.check-quantum = true
    settings.check-rate = true
    support.dbus = false
}
context.spa-libs = {
    audio.convert.* = audioconvert/libspa-audioconvert
    support.* = support/libspa-support
}
context.modules = [
    { name = libpipewire-module-protocol-native }
    { name = libpipewire-module-metadata }
    { name = libpipewire-module-spa-node-factory }
    { name = libpipewire-module-client-node }
    { name = libpipewire-module-access args = { } }
    { name = libpipewire-module-adapter }
    { name = libpipewire-module-link-factory }
]
context.objects = [
    { factory = metadata args = { metadata.name = default } }
    { factory = spa-node-factory
        args = {
            factory.name = support.node.driver
            node.name = Dummy-Driver
            node.group = pipewire.dummy
            priority.driver = 20000
        }
    }
]
"""


def pipewire_environment(root: Path) -> dict[str, str]:
    """The environment a client of `pipewire_daemon(root)` connects with (its runtime directory, no D-Bus)."""
    return {"XDG_RUNTIME_DIR": str(root / "runtime"), "PIPEWIRE_RUNTIME_DIR": str(root / "runtime"),
            "DBUS_SESSION_BUS_ADDRESS": "disabled:"}


@contextlib.contextmanager
def pipewire_daemon(root: Path):
    """A PipeWire daemon of the test's own, without a session manager: `PIPEWIRE_CONFIG`, its socket
    (`pipewire-0`) in `root/runtime` only (nothing on the network, no D-Bus; HOME in `root`, so a user's session is
    never touched). Its log is `root/log`. Yields the environment its clients need (`pipewire_environment`)
    with the daemon's process id in `PIPEWIRE_DAEMON_PID` (for a test that stops it early); stopped when the block
    ends."""
    binary = shutil.which("pipewire")
    if binary is None:
        raise AssertionError("pipewire is not installed (scripts/install-deps.sh test installs it)")
    (root / "runtime").mkdir(parents=True, exist_ok=True)
    (root / "pipewire.conf").write_text(PIPEWIRE_CONFIG)
    env = {**os.environ, "HOME": str(root), **pipewire_environment(root)}
    with open(root / "log", "wb") as log:
        proc = subprocess.Popen([binary, "-c", str(root / "pipewire.conf")], env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            socket_path = root / "runtime" / "pipewire-0"
            assert wait_until(lambda: socket_path.exists() or proc.poll() is not None, scaled(15)), \
                "pipewire did not start"
            assert proc.poll() is None, (root / "log").read_text()[-2000:]
            yield {**pipewire_environment(root), "PIPEWIRE_DAEMON_PID": str(proc.pid)}
        finally:
            proc.terminate()
            proc.wait()


def at_once(body: Callable[[Any], Any], keys) -> dict:
    """Runs `body(key)` for every key at once, each on a thread of its own; returns their results by key, or raises
    the first error one of them raised."""
    import threading
    results: dict = {}
    errors: list[BaseException] = []

    def run(key):
        try:
            results[key] = body(key)
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(key,)) for key in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def unix_replies(path: str | os.PathLike, requests: list[str], timeout: float = 30) -> list[bytes]:
    """Sends each request over a server's Unix socket (a local client, which may name files outside the music
    directory) and reads its reply up to `OK` or an `ACK`; the replies, in order."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(str(path))
        f = s.makefile("rb")
        f.readline()
        replies = []
        for request in requests:
            s.sendall(request.encode() + b"\n")
            out = b""
            while True:
                line = f.readline()
                out += line
                if not line or line == b"OK\n" or line.startswith(b"ACK "):
                    break
            replies.append(out)
        return replies


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + scaled(timeout)
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()



def run_again_while(run: Callable[[int], Any], runs: int = 3, result: Callable[[Any], bool] = lambda _: False,
                    error: Callable[[BaseException], bool] = lambda _: False) -> Any:
    """`run(attempt)`, from 0, up to `runs` times: once more while its value shows a known race that is not the
    server under test's (`result(value)`: `mpd`'s own, or a shared daemon's), or while it failed with one
    (`error(exception)`, for an assertion or a `pytest.fail`). The last run's value is returned, its failure raised.
    Each caller names the race it waits out, and when it was seen; anything else fails at once."""
    import pytest

    for attempt in range(runs):
        last = attempt == runs - 1
        try:
            value = run(attempt)
        except (Exception, pytest.fail.Exception) as failure:
            if last or not error(failure):
                raise
            continue
        if last or not result(value):
            return value
    raise AssertionError("unreachable")

_PLAYING_VOLATILE = re.compile(rb"^(elapsed|time): .*$", re.M)
_BITRATE = re.compile(rb"^bitrate: .*\n", re.M)


def simple_database_block(work: Path, cache: bool = True) -> str:
    """The `database` block `mount` needs in both servers: mpd's `simple` database in `work/db`, with a
    `cache_directory` (`work/cache`, made here) unless not `cache`. Goes in `Server.extra_config`, with `db_file`
    left out of the overrides (mpd refuses both)."""
    if not cache:
        return f'database {{\n    plugin "simple"\n    path "{work}/db"\n}}'
    (work / "cache").mkdir(parents=True, exist_ok=True)
    return (f'database {{\n    plugin "simple"\n    path "{work}/db"\n'
            f'    cache_directory "{work}/cache"\n}}')


def log_matches(text: str, pattern: str) -> list[str]:
    """For each line of a log `text` where `pattern` is found, its first group (the whole match without one), in
    order: the lines both servers must print alike, without what is not theirs to match (Fermata's time and
    level)."""
    regex = re.compile(pattern)
    found = []
    for line in text.splitlines():
        match = regex.search(line)
        if match:
            found.append(match.group(1) if regex.groups else match.group(0))
    return found


def open_paths(pid: int) -> list[str]:
    """What the process `pid` has open, as its `/proc/PID/fd` links say (empty once it is gone)."""
    paths = []
    try:
        entries = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return paths
    for entry in entries:
        try:
            paths.append(os.readlink(entry))
        except OSError:
            continue
    return paths


def queue_version(server: "Server") -> int:
    """The queue's version (`playlist:` in `status`)."""
    return int(re.search(rb"\nplaylist: (\d+)\n", b"\n" + server.query("status")).group(1))


def thread_credentials(pid: int) -> set[tuple[str, str, str]]:
    """(Uid, Gid, Groups) of every thread of process `pid`, each field's values joined by one space (the groups
    sorted by number). A thread that ends between the listing and the read is left out (the server starts short
    workers: deferred replies, a trim after an update)."""
    seen = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # ENOENT or ESRCH: the thread has ended
        fields = {}
        for line in status.splitlines():
            key, _, value = line.partition(":")
            fields[key] = " ".join(value.split())
        seen.add((fields["Uid"], fields["Gid"], " ".join(sorted(fields["Groups"].split(), key=int))))
    return seen


def settled_play(server: "Server", commands: str, tagged: bool = False,
                 retagged_from: int | None = None) -> list[bytes]:
    """Sends `commands` (ending in a `play`) as one command list, waits until the decoder has opened the song
    (`audio:` in `status`, which comes after `play` has answered: a status taken at once races it, in either
    server), then returns the list's reply and `currentsong` plus `status`, times masked and the bit rate left
    out (it shows once the first chunk has played, which may be after `audio:`).

    `tagged`: the song is a URL queued without tags, whose decoder reports them (and bumps the queue's version):
    also wait until `currentsong` has a `Title:` (under load mpd's decoder reported it after `audio:` showed).
    `retagged_from`: the queue's version before `commands`, for a song that has its tags already but is played
    from a remote URI (a song of a mounted storage): wait until the decoder's tags have replaced them, which
    raises the version (mpd's `playlist::TagModified`)."""
    queued = server.query(f"command_list_begin\n{commands}command_list_end\n")
    assert wait_until(lambda: b"\naudio: " in server.query("status"), 10), (server.label, server.query("status"))
    if tagged:
        assert wait_until(lambda: b"\nTitle: " in server.query("currentsong"), scaled(10)), \
            (server.label, server.query("currentsong"))
    if retagged_from is not None:
        assert wait_until(lambda: queue_version(server) > retagged_from, scaled(10)), (server.label, retagged_from)
    playing = server.query("command_list_begin\ncurrentsong\nstatus\ncommand_list_end\n")
    return [queued, _PLAYING_VOLATILE.sub(b"\\1: <volatile>", _BITRATE.sub(b"", playing))]


def settled_failure(server: "Server", uri: str) -> bytes:
    """Queues `uri` alone and plays it, then returns `status` once the decoder's `error:` shows there. `play`
    answers OK, or with the decoder's error when the decoder has failed by the time it answers (a malformed URL
    fails at once, but not always under load; in either server): that answer is checked, not compared."""
    played = server.query(f"command_list_begin\nclear\nadd {uri}\nplay 0\ncommand_list_end\n")
    assert played == b"OK\n" or played.startswith(b"ACK [5@2] {play} Failed to decode "), (server.label, played)
    assert wait_until(lambda: b"\nerror: " in server.query("status"), scaled(10)), (server.label, uri)
    return server.query("status")


# ---------------------------------------------------------------------------
# Generated databases in mpd's format, for large libraries without files

def database_header(binary: str | Path, work: Path) -> str:
    """The `info_begin` … `info_end` block `binary` writes for an empty music directory (its tag list)."""
    music = work / "empty"
    music.mkdir(exist_ok=True)
    port = free_port()
    conf = work / "header.conf"
    conf.write_text(f'music_directory "{music}"\ndb_file "{work}/header.db"\nbind_to_address "127.0.0.1"\n'
                    f'port "{port}"\nlog_file "{work}/header.log"\n')
    proc = subprocess.Popen([str(binary), "--no-daemon", str(conf)])
    try:
        assert wait_until(lambda: (work / "header.db").exists(), timeout=30)
        time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait()
    return gzip.open(work / "header.db").read().decode().split("info_end\n")[0] + "info_end\n"


def generated_database(head: str, artists: int, albums: int, songs: int) -> bytes:
    """mpd's gzip-compressed database after `head`: `artists` directories of `albums` directories of `songs` songs
    each (title, artist, album artist, album, track, date, genre, a MusicBrainz track id, the audio format), whose
    files do not exist."""
    generator = random.Random(1)
    out = [head]
    for a in range(artists):
        artist = f"Artist {a:04d}"
        out.append(f"directory: {artist}\nmtime: 1700000000\nbegin: {artist}\n")
        for b in range(albums):
            album = f"Album {a:04d}-{b:02d}"
            path = f"{artist}/{album}"
            out.append(f"directory: {album}\nmtime: 1700000000\nbegin: {path}\n")
            for t in range(songs):
                out.append(f"song_begin: {t + 1:02d} Song number {t + 1} of {album}.flac\nTime: {180 + t}.123\n"
                           f"Artist: Artist number {a}\nAlbumArtist: Artist number {a}\nAlbum: {album} the album\n"
                           f"Title: Song title {a}-{b}-{t} with some words\nTrack: {t + 1}\n"
                           f"Date: {1970 + a % 50}\nGenre: Genre {a % 30}\n"
                           f"MUSICBRAINZ_TRACKID: {uuid.UUID(int=generator.getrandbits(128))}\n"
                           f"Format: 44100:16:2\nmtime: 1700000000\nsong_end\n")
            out.append(f"end: {path}\n")
        out.append(f"end: {artist}\n")
    return gzip.compress("".join(out).encode())


# ---------------------------------------------------------------------------
# Quoting, for writing cases that contain awkward values

def arg(value: str) -> str:
    """One protocol argument: double-quoted, with ``\\`` and ``"`` escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fvalue(value: str, quote: str = "'") -> str:
    """A quoted value inside a filter expression (the inner escaping layer)."""
    return quote + value.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


def fx(tag: str, op: str, value: str, quote: str = "'") -> str:
    """A whole filter expression as one protocol argument: both escaping layers.

    ``fx("Artist", "==", "O'Brien")`` gives ``"(Artist == 'O\\\\'Brien')"`` on the wire
    (what a careful client sends).
    """
    return arg(f"({tag} {op} {fvalue(value, quote)})")


# ---------------------------------------------------------------------------
# Declaring differential tests

def case(spec, **options) -> Case:
    """Alias of :func:`make_case`, for tables: ``"name": case("ping\\n", replies=1)``."""
    return make_case(spec, **options)


def _named(test, name: str, doc: str | None, module: str | None):
    test.__name__ = name
    test.__qualname__ = name
    test.__doc__ = doc
    if module:
        test.__module__ = module
    return test


def differential(fn=None, **options):
    """Decorator: the function returns a case spec (see :func:`make_case`).

    ::

        @differential
        def test_ping():
            return "ping\\n"

        @differential(replies=2)
        def test_two_pings():
            return ["ping\\n", "ping\\n"]
    """
    def wrap(fn):
        def test(differential_runner):
            differential_runner(make_case(fn(), **options), fn.__name__)
        return _named(test, fn.__name__, fn.__doc__, fn.__module__)
    return wrap(fn) if fn is not None else wrap


@dataclasses.dataclass
class Deviation:
    """A table row where Fermata deliberately differs from mpd (see :func:`deviation`)."""
    spec: object
    reason: str


def deviation(spec, reason: str) -> Deviation:
    """Marks a table row as a deliberate, documented difference from mpd.

    The row still runs and is expected to differ (``xfail(strict=True)``): if it ever matches mpd,
    the suite fails so the marker can go.
    """
    return Deviation(spec, reason)


def differential_table(table: dict, **options):
    """One parametrised test over ``{"case id": spec-or-Case, ...}``.

    ::

        test_quoting = differential_table({
            "missing closing quote": 'ping "a\\n',
            "two pings": case(["ping\\n", "ping\\n"], replies=2),
        })
    """
    import pytest
    ids = list(table)
    params = [
        pytest.param(i, id=i, marks=pytest.mark.xfail(strict=True, reason=table[i].reason))
        if isinstance(table[i], Deviation) else pytest.param(i, id=i)
        for i in ids
    ]

    @pytest.mark.parametrize("case_id", params)
    def test(case_id, differential_runner):
        spec = table[case_id]
        if isinstance(spec, Deviation):
            spec = spec.spec
        differential_runner(make_case(spec, **options), case_id)
    return test


# ---------------------------------------------------------------------------
# Command line: look at a transcript while writing a case.

def _main(argv: Sequence[str]) -> int:
    import argparse
    ap = argparse.ArgumentParser(
        description="Print the transcript of a case, e.g.  "
                    "mpdtest.py 'ping\\n' 'b:subscribe x\\n'  (Python escapes; "
                    "NAME: prefix = connection)")
    ap.add_argument("chunks", nargs="*")
    ap.add_argument("--port", type=int, help="use a server already listening here")
    ap.add_argument("--binary", default=str(ref_binary()),
                    help="else start this server (default: mpd) on the cached library")
    ap.add_argument("--songs", type=int,
                    default=int(os.environ.get("CONFORMANCE_SONGS", DEFAULT_SONGS)))
    args = ap.parse_args(argv)
    steps = []
    for chunk in args.chunks:
        conn = "a"
        m = re.match(r"^([a-z]):", chunk)
        if m:
            conn, chunk = m.group(1), chunk[2:]
        import codecs
        steps.append((conn, codecs.escape_decode(chunk.encode("utf-8"))[0]))
    c = make_case(steps)
    server = None
    port = args.port
    if port is None:
        music = CACHE_DIR / f"library-{args.songs}"
        subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make-fixtures.py"),
                        str(music), "--songs", str(args.songs), "--quiet"], check=True)
        server = Server("show", Path(args.binary), music,
                        Path(tempfile.mkdtemp(prefix="mpdtest-show-")))
        server.start()
        port = server.port
    try:
        t = run_case(port, c)
        print("\n".join(render(t.normalized(c))))
        print(f"({t.replies} replies, {t.elapsed * 1000:.0f} ms"
              + (", reset" if any(t.reset.values()) else "") + ")")
    finally:
        if server:
            server.stop()
            shutil.rmtree(server.workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
