#!/usr/bin/python3
"""Fermata vs mpd on a big generated library: scan, memory, every query form, queue work.

Usage (from the repository root, with Debian's Python):

    /usr/bin/python3 benchmarks/run.py [--songs 100000] [--runs 7]
                                       [--fermata .build/release/fermata] [--mpd /usr/bin/mpd]
                                       [--only REGEX] [--no-write] [--note TEXT]

1. builds (once, cached in benchmarks/out/library-N/) a library of N songs with
   tools/make-fixtures.py;
2. starts each server, mpd first, one after the other, on that library (127.0.0.1, null audio
   output, its own db, sticker and playlist files under benchmarks/out/run-*/,
   `max_playlist_length` and `max_output_buffer_size` raised for a 100k-song queue), and
   measures on each alone:
   * full scan: start with no db file, send `update` unless the server is already
     updating, poll `status` until `updating_db` is gone; VmRSS (/proc/PID/status) once
     the server is idle (its CPU time unchanged for 0.6 s: Fermata writes its database
     files after it reports the job done, mpd before);
   * `rescan` of everything, until `updating_db` is gone; VmRSS once idle again;
   * restart: stop it (SIGTERM, the db is saved), start it again, time to the first
     `ping` reply (median of 3); VmRSS once idle;
   then, with both running, measures every shape on both, their runs alternating (mpd's
   first, Fermata's first, mpd's second…, so that a change of the machine's load during the
   run weighs on both sides of a ratio alike):
   * every shape of the table (see shapes()): `count`, `find`, `search` and `list` on
     each tag of mpd's `tagtypes` (sort tags and AlbumArtist included: mpd falls back
     to Artist, Album…), `search any`, `list X group Y`, `count group`, `listall`,
     `listallinfo`, `lsinfo`, regular-expression, negated, `contains`, `base`,
     `modified-since` and AND filters, `sort` and `window`; a 10k-song stored
     playlist (`listplaylistinfo`, `load`); `sticker find` over 10k stickers; queue
     work on a 10k-song and on the whole library's queue (`add ""`, `playlistinfo`,
     `plchanges 0`, `shuffle`, `clear`); `update` with nothing changed and `rescan`
     of one directory (from the command to `updating_db` gone);
   each the median of --runs runs (fewer when one run takes over 0.3 s; at least 21 when
   the warm-up took under 20 ms on every server: a short shape's median of 7 moved with
   the machine's load of the moment, e.g. `qAll: shuffle` 0.49–0.80 in runs of 7 and 0.27
   in one of 3000), after one warm-up run, a fresh connection each (connect not timed; a shape's set-up commands
   are sent on that connection before the clock starts), from sending the command to
   the reply's final line, read into one buffer kept from reply to reply (`ReplyReader`);
3. compares each shape's reply on the two servers (same bytes; else the same number
   of `file:` lines, i.e. songs; an error on either is reported, not timed), and
   prints both times, Fermata/mpd, the target (issue 17: ≤ 0.2 for a library query
   where mpd needs more than 1 ms, ≤ 0.5 for queue work, ≤ 0.5× mpd's resident
   memory) and whether it is met; writes the tables into benchmarks/RESULTS.md (a
   section per library size, replaced on each run).

Query arguments are chosen from mpd's own replies after its scan (the middle value of
`list TAG` for each tag), so both servers get the same commands.  `--only REGEX`
runs only the shapes whose name matches (scan, memory and restart are always
measured).  `--fermata /usr/bin/mpd` runs the whole thing with mpd standing in, to
check the script.  Not part of `make test`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import gc
import hashlib
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "conformance"))

import mpdtest  # noqa: E402  (Server, LineClient, config writing)

OUT = HERE / "out"
RESULTS = HERE / "RESULTS.md"
PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable

#: Settings for both servers: a queue and replies as big as the whole library.
SETTINGS = {
    "max_playlist_length": "1000000",
    "max_output_buffer_size": str(512 * 1024),     # KiB
    "max_command_list_size": str(64 * 1024),       # KiB
}
#: Targets of issue 17 (Fermata/mpd).
LIBRARY_TARGET = 0.2
QUEUE_TARGET = 0.5
MEMORY_TARGET = 0.5
#: A library query has a target only where mpd needs more than this.
LIBRARY_FLOOR = 0.001
#: Runs of one shape: after the warm-up, a shape slower than this gets SLOW_RUNS runs.
SLOW = 0.3
SLOW_RUNS = 3
#: ... and a shape faster than this on every server at least FAST_RUNS (cheap, and a steadier median).
FAST = 0.02
FAST_RUNS = 21
#: Replies from this size on get a `floor` figure (see transfer_floor()).
FLOOR_SIZE = 1 << 20
STORED = "bench10k"
STICKER = "benchrating"


# ---------------------------------------------------------------------------
# Helpers

class Skip(Exception):
    """A figure that cannot be measured (reason in the message)."""


class Failed(Skip):
    """A figure whose command failed: no reply in time, or an error reply."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cpu_ticks(pid: int) -> int:
    """The process's user and system CPU time so far, in clock ticks (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_idle(pid: int, timeout: float = 30.0) -> None:
    """Returns once the process is idle: its CPU time unchanged over two polls 0.3 s apart (or after `timeout`), or
    gone (a server that died is reported by the connection that follows, not here)."""
    deadline = time.monotonic() + timeout
    try:
        last, quiet = cpu_ticks(pid), 0
        while quiet < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
            now = cpu_ticks(pid)
            quiet = quiet + 1 if now == last else 0
            last = now
    except (FileNotFoundError, ProcessLookupError):
        return


def settled_rss_mib(pid: int) -> float:
    """VmRSS once the process is idle (`wait_idle`)."""
    wait_idle(pid)
    return rss_mib(pid)


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise Skip("no VmRSS")


def query(server: mpdtest.Server, line: str, timeout: float = 120.0) -> bytes:
    with mpdtest.LineClient(server.port, timeout=timeout) as c:
        return c.command(line)


def commands_of(server: mpdtest.Server) -> set[str]:
    return set(mpdtest.command_names(query(server, "commands")))


def wait_greeting(server: mpdtest.Server, timeout: float) -> float:
    """Seconds until the server answers `ping` (from now)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    while True:
        server.check_alive()
        try:
            with socket.create_connection((mpdtest.HOST, server.port), timeout=1.0) as s:
                s.settimeout(timeout)
                f = s.makefile("rb")
                if f.readline().startswith(b"OK MPD "):
                    s.sendall(b"ping\n")
                    if f.readline() == b"OK\n":
                        return time.monotonic() - t0
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{server.label}: no reply within {timeout} s")
        time.sleep(0.005)


def songs_of(server: mpdtest.Server) -> int:
    return int(mpdtest.parse_pairs(query(server, "stats")).get("songs", -1))


def wait_scan(server: mpdtest.Server, cmds: set[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        server.check_alive()
        status = query(server, "status") if "status" in cmds else b""
        if b"updating_db:" not in status:
            if "stats" not in cmds or songs_of(server) > 0:
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{server.label}: scan not finished within {timeout} s")
        time.sleep(0.02)


class ReplyReader:
    """Reads whole replies (through the final `OK` or `ACK` line) into one buffer kept from reply to reply, as
    libmpdclient's clients (mpc, ncmpcpp) read into a buffer of their own: a fresh buffer per read would add
    the client's page faults (about as much CPU as Fermata's server time for a reply of megabytes, and varying
    with the state of Python's heap) to the time measured on both servers."""

    def __init__(self) -> None:
        self.buffer = bytearray(1 << 20)
        self.size = 0

    def read(self, sock: socket.socket) -> int:
        """Reads one reply; returns its size. The bytes stay in `buffer` until the next read."""
        buffer = self.buffer
        size = 0
        view = memoryview(buffer)
        try:
            while True:
                if size == len(buffer):
                    view.release()
                    buffer.extend(bytes(len(buffer)))
                    view = memoryview(buffer)
                n = sock.recv_into(view[size:])
                if not n:
                    raise ConnectionError("connection closed before the end of the reply")
                size += n
                if buffer[size - 1] == 0x0A:
                    start = buffer.rfind(b"\n", max(0, size - 4096), size - 1) + 1
                    if buffer.startswith(b"OK\n", start) or buffer.startswith(b"ACK ", start):
                        self.size = size
                        return size
        finally:
            view.release()

    def reply(self) -> bytes:
        """A copy of the last reply read."""
        return bytes(self.buffer[:self.size])


_reader = ReplyReader()


@contextlib.contextmanager
def no_collection():
    """Python's cyclic garbage collector held off while a run is timed: a collection of the script's large heap
    (the stored playlist's URIs, earlier replies) took about 10 ms, and landed in the timed windows of one server
    more than the other's (`qAll: add ""` after the 10k-song shapes: Fermata 25.3 ms with it, 14.3 without; mpd
    52.8 and 49.4)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_reply(sock: socket.socket) -> bytes:
    """One whole reply (`ReplyReader`), copied out of the shared buffer."""
    _reader.read(sock)
    return _reader.reply()


def is_error(reply: bytes) -> bool:
    return reply.startswith(b"ACK ") or b"\nACK " in reply


def last_line(reply: bytes) -> str:
    return reply.rstrip(b"\n").rsplit(b"\n", 1)[-1].decode(errors="replace")


def wait_updated(sock: socket.socket, timeout: float) -> None:
    """Poll `status` on `sock` until it shows no `updating_db`."""
    deadline = time.perf_counter() + timeout
    while True:
        sock.sendall(b"status\n")
        if b"updating_db:" not in read_reply(sock):
            return
        time.sleep(0.0005)          # not a busy loop that takes a core from the server
        if time.perf_counter() > deadline:
            raise TimeoutError("update not finished")


@dataclasses.dataclass
class Reply:
    """What one server answered to a shape (the last timed run's reply)."""

    seconds: float
    size: int
    digest: str
    files: int
    lines: int
    runs: int


def summary(reply: bytes, seconds: float, runs: int) -> Reply:
    return Reply(seconds, len(reply), hashlib.sha1(reply).hexdigest(),
                 reply.count(b"\nfile: ") + reply.startswith(b"file: "),
                 reply.count(b"\n"), runs)


@dataclasses.dataclass
class Shape:
    """One command to time, and how."""

    name: str                  # what the table shows
    command: str               # the line sent (without the newline)
    needs: str                 # the command the server must list in `commands`
    kind: str = "library"      # library | queue | update: which target applies
    each: tuple[str, ...] = ()  # sent (untimed) on the same connection before every run
    before: tuple[str, ...] = ()  # sent once (untimed), before the warm-up run
    wait_update: bool = False  # the time runs until `status` shows no `updating_db`, from an idle server
    compare: str = "bytes"     # bytes | files | none: what must be equal on both servers
    runs: int | None = None    # instead of --runs


class Timing:
    """One shape's runs on one server (see the module's doc), made one run at a time so that the runs of the two
    servers can alternate (measure())."""

    def __init__(self, server: mpdtest.Server, shape: Shape, runs: int, timeout: float) -> None:
        self.server, self.shape, self.runs, self.timeout = server, shape, shape.runs or runs, timeout
        #: Seconds of each run made, the warm-up first.
        self.times: list[float] = []
        self.reply = b""

    def connect(self) -> socket.socket:
        sock = socket.create_connection((mpdtest.HOST, self.server.port), timeout=self.timeout)
        greeting = b""
        while not greeting.endswith(b"\n"):
            data = sock.recv(256)
            if not data:
                raise ConnectionError("no greeting")
            greeting += data
        return sock

    def send(self, sock: socket.socket, line: str) -> bytes:
        sock.sendall(line.encode() + b"\n")
        return read_reply(sock)

    def set_up(self) -> None:
        """The shape's `before` commands, once."""
        if self.shape.before:
            with self.connect() as sock:
                for line in self.shape.before:
                    r = self.send(sock, line)
                    if is_error(r):
                        raise Failed(f"set-up `{line[:60]}`: {last_line(r)}")

    @property
    def finished(self) -> bool:
        """Whether the warm-up and every timed run are done."""
        return len(self.times) > self.runs

    def run(self, idle: list[int]) -> None:
        """The next run (the first is the warm-up, not counted); an update's starts once the processes `idle`
        (both servers: what the last job still does after reporting itself done is not the next job's time, on
        either server) are idle."""
        shape = self.shape
        if shape.wait_update:
            for pid in idle:
                wait_idle(pid)
        with self.connect() as sock:
            for line in shape.each:
                r = self.send(sock, line)
                if is_error(r) and not line.startswith("rm "):
                    raise Failed(f"set-up `{line[:60]}`: {last_line(r)}")
            with no_collection():
                t0 = time.perf_counter()
                sock.sendall(shape.command.encode() + b"\n")
                _reader.read(sock)
                # The reply is copied out of the reader's buffer after the clock stops (an update's short one
                # before, to see whether it is an error).
                if shape.wait_update:
                    self.reply = _reader.reply()
                    if not is_error(self.reply):
                        wait_updated(sock, self.timeout)
                elapsed = time.perf_counter() - t0
            if not shape.wait_update:
                self.reply = _reader.reply()
        if is_error(self.reply):
            raise Failed(f"error reply: {last_line(self.reply)}")
        self.times.append(elapsed)

    def result(self) -> Reply:
        timed = self.times[1:]
        return summary(self.reply, statistics.median(timed), len(timed))


def plan_runs(timings: list[Timing]) -> None:
    """How many timed runs each server gets, from the warm-ups (every timing's first run), unless the shape says:
    at least FAST_RUNS on each when the warm-up was short on every server (cheap, and a steadier median), at most
    SLOW_RUNS on a server whose warm-up was slow."""
    if not timings or timings[0].shape.runs is not None:
        return
    fast = all(timing.times[0] < FAST for timing in timings)
    for timing in timings:
        if fast:
            timing.runs = max(timing.runs, FAST_RUNS)
        elif timing.times[0] > SLOW:
            timing.runs = min(timing.runs, SLOW_RUNS)


_floors: dict[int, float] = {}


def transfer_floor(size: int, runs: int = 7) -> float:
    """Median seconds to get a reply of `size` bytes from a server that only sends it (a thread here, on
    127.0.0.1), read as `timed` reads: what moving the bytes costs, the least any server's reply of that
    size can take in this measurement."""
    if size in _floors:
        return _floors[size]
    line = b"file: Generated/Some Artist 1234/Some Album 1 (1999)/01 - Some title.mp3\n"
    payload = line * max(0, (size - 3) // len(line)) + b"OK\n"
    listener = socket.create_server((mpdtest.HOST, 0))

    def serve() -> None:
        for _ in range(runs + 1):
            conn, _ = listener.accept()
            with conn:
                conn.sendall(b"OK MPD 0.23.5\n")
                conn.recv(64)
                conn.sendall(payload)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    times = []
    for i in range(runs + 1):
        with socket.create_connection(listener.getsockname()) as sock:
            sock.recv(64)
            with no_collection():
                t0 = time.perf_counter()
                sock.sendall(b"x\n")
                _reader.read(sock)
                elapsed = time.perf_counter() - t0
            if i:
                times.append(elapsed)
    thread.join()
    listener.close()
    _floors[size] = statistics.median(times)
    return _floors[size]


def arg(value: str) -> str:
    return mpdtest.arg(value)


def expr(text: str, *values: str) -> str:
    """A filter expression as one protocol argument; `{}` in `text` are the quoted values."""
    return arg(text.format(*(mpdtest.fvalue(v) for v in values)))


def values(reply: bytes, key: str) -> list[str]:
    prefix = key + ": "
    return [line[len(prefix):] for line in reply.decode("utf-8", "replace").splitlines()
            if line.startswith(prefix)]


def command_list(lines: list[str]) -> str:
    return "\n".join(["command_list_begin", *lines, "command_list_end"])


# ---------------------------------------------------------------------------
# The shapes

@dataclasses.dataclass
class Arguments:
    """Query arguments, chosen from mpd's replies after its scan."""

    tags: list[str]
    value: dict[str, str]          # tag -> a value of it (the middle one of `list TAG`)
    artist: str
    album: str
    artist_dir: str                # Generated/ARTIST
    stored: list[str]              # the stored playlist's songs (and the stickers')

    def line(self) -> str:
        return (f"artist {self.artist!r}, album {self.album!r}, {len(self.stored)} songs "
                f"in the stored playlist and stickers, directory {self.artist_dir!r}")


def choose(server: mpdtest.Server, music: Path, songs: int) -> Arguments:
    tags = values(query(server, "tagtypes"), "tagtype")
    value = {}
    for tag in tags:
        found = sorted(v for v in values(query(server, f"list {tag}"), tag) if v)
        value[tag] = found[len(found) // 2] if found else "none"
    generated = sorted(p.name for p in (music / "Generated").iterdir())
    artists = [a for a in generated if a.endswith(tuple("0123456789"))]
    mid = music / "Generated" / artists[len(artists) // 2]
    albums = sorted(re.sub(r" \(\d+\)$", "", p.name) for p in mid.iterdir())
    # Songs of the generated part only (the hand-written ones have awkward names).
    files = [f for f in values(query(server, "listall", timeout=600), "file")
             if f.startswith("Generated/")]
    step = max(1, len(files) // 10000)
    stored = files[::step][:10000]
    return Arguments(tags, value, mid.name, albums[0], f"Generated/{mid.name}", stored)


def substring(value: str) -> str:
    """A part of a value for `search`: 4 characters from its second (lower case)."""
    v = value.lower()
    return v[1:5] if len(v) >= 5 else v


def shapes(a: Arguments) -> list[Shape]:
    out: list[Shape] = []

    def add(name: str, command: str, needs: str | None = None, **kw) -> None:
        out.append(Shape(name, command, needs or command.split()[0], **kw))

    artist, album = a.artist, a.album
    # The shapes the benchmark ran before (their names kept, so the figures compare).
    add("list albumartist", "list albumartist")
    add("list album group albumartist", "list album group albumartist")
    add("find (Artist == A)", f"find {mpdtest.fx('Artist', '==', artist)}")
    add("find (Album == B)", f"find {mpdtest.fx('Album', '==', album)}")
    add("count (Genre == 'Jazz')", f"count {mpdtest.fx('Genre', '==', 'Jazz')}")
    add("count group albumartist", "count group albumartist")
    add("search title zenwy", f"search title {arg('zenwy')}")
    # Each tag: count, find, search (substring) and list; old-style arguments, as most
    # clients send them.
    for tag in a.tags:
        v = a.value[tag]
        add(f"count {tag} V", f"count {tag} {arg(v)}")
        add(f"find {tag} V", f"find {tag} {arg(v)}")
        add(f"search {tag} v", f"search {tag} {arg(substring(v))}")
        add(f"list {tag}", f"list {tag}")
    add("list file", "list file")
    add("find any V", f"find any {arg(artist)}")
    add("search any zenwy", f"search any {arg('zenwy')}")
    add("search any v (common)", f"search any {arg('lor')}")
    add("count albumartist A", f"count albumartist {arg(artist)}")
    add("find albumartist A", f"find albumartist {arg(artist)}")
    add("find artist A album B", f"find artist {arg(artist)} album {arg(album)}")
    add("find albumartist A album B", f"find albumartist {arg(artist)} album {arg(album)}")
    add("search artist v album v", f"search artist {arg(substring(artist))} album {arg(substring(album))}")
    # list X group Y, count group Y.
    for x, y in [("album", "albumartist"), ("album", "date"), ("title", "album"),
                 ("album", "artist"), ("date", "album"), ("album", "albumartistsort"),
                 ("albumartist", "genre"), ("artist", "genre"), ("album", "genre"),
                 ("title", "artist")]:
        add(f"list {x} group {y}", f"list {x} group {y}")
    add("list album group date group albumartist", "list album group date group albumartist")
    add("list album (AlbumArtist == A)", f"list album {mpdtest.fx('AlbumArtist', '==', artist)}")
    add("list album albumartist A (old form)", f"list album albumartist {arg(artist)}")
    add("list title (Album == B) group artist", f"list title {mpdtest.fx('Album', '==', album)} group artist")
    for y in ("artist", "album", "genre", "date"):
        add(f"count group {y}", f"count group {y}")
    add("count (Genre == 'Jazz') group date", f"count {mpdtest.fx('Genre', '==', 'Jazz')} group date")
    # The whole database.
    add("listall", "listall")
    add("listallinfo", "listallinfo")
    add("listall Generated", f"listall {arg('Generated')}")
    add("lsinfo Generated", f"lsinfo {arg('Generated')}")
    add("lsinfo artist directory", f"lsinfo {arg(a.artist_dir)}")
    add("listfiles artist directory", f"listfiles {arg(a.artist_dir)}")
    # Filters: regular expressions, negation, contains, AND, base, modified-since, file.
    add("find (Artist =~ regex)", f"find {expr('(Artist =~ {})', '^' + artist[:4] + '.*5')}")
    add("find (Title =~ regex)", f"find {expr('(Title =~ {})', 'zen.*wy$')}")
    add("count (Album =~ regex)", f"count {expr('(Album =~ {})', '^Lor.* 2$')}")
    add("search (Title =~ regex) (folded)", f"search {expr('(Title =~ {})', 'ZEN.*WY')}")
    add("find (Artist !~ regex)", f"find {expr('(Artist !~ {})', '^[A-Y]')}")
    add("count (Genre != 'Jazz')", f"count {mpdtest.fx('Genre', '!=', 'Jazz')}")
    add("find (Genre != 'Jazz')", f"find {mpdtest.fx('Genre', '!=', 'Jazz')}")
    add("count !(Artist == A)", f"count {expr('(!(Artist == {}))', artist)}")
    add("find (Album == B) AND !(Artist == A)",
        f"find {expr('((Album == {}) AND (!(Artist == {})))', album, artist)}")
    add("find (Title contains v)", f"find {expr('(Title contains {})', 'zenwy')}")
    add("search (Title contains v)", f"search {expr('(Title contains {})', 'ZENWY')}")
    add("find (Title !contains v)", f"count {expr('(Title !contains {})', 'a')}", "find")
    add("find (Artist == A) AND (Album == B)",
        f"find {expr('((Artist == {}) AND (Album == {}))', artist, album)}")
    add("find (Genre == 'Jazz') AND (Date == D)",
        f"find {expr('((Genre == {}) AND (Date == {}))', 'Jazz', a.value.get('Date', '2000'))}")
    add("find 3 tags AND",
        f"find {expr('((Genre == {}) AND (Date == {}) AND (Track == {}))', 'Jazz', a.value.get('Date', '2000'), '1/10')}")
    add("search (Artist contains v) AND (Title contains w)",
        f"search {expr('((Artist contains {}) AND (Title contains {}))', 'nor', 'zen')}")
    add("find (A OR B): mpd 0.23 has no OR",
        f"find {expr('((Artist == {}) OR (Album == {}))', artist, album)}", compare="error")
    add("find (base 'Generated/ARTIST')", f"find {expr('(base {})', a.artist_dir)}")
    add("find (base 'Generated') AND (Genre == 'Jazz')",
        f"find {expr('((base {}) AND (Genre == {}))', 'Generated', 'Jazz')}")
    add("find (modified-since …)", f"find {expr('(modified-since {})', '2020-09-14T00:00:00Z')}")
    add("find (file == URI)", f"find {expr('(file == {})', a.stored[len(a.stored) // 2])}")
    add("find (AudioFormat == 44100:16:2)", f"count {expr('(AudioFormat == {})', '44100:16:2')}", "find")
    # Sort and window.
    add("find (Genre == 'Jazz') sort Title window 0:100",
        f"find {mpdtest.fx('Genre', '==', 'Jazz')} sort Title window 0:100")
    add("find (Genre == 'Jazz') sort -Date", f"find {mpdtest.fx('Genre', '==', 'Jazz')} sort -Date")
    add("find (Genre == 'Jazz') sort AlbumArtist window 500:600",
        f"find {mpdtest.fx('Genre', '==', 'Jazz')} sort AlbumArtist window 500:600")
    add("find (Genre == 'Jazz') window 1000:1100", f"find {mpdtest.fx('Genre', '==', 'Jazz')} window 1000:1100")
    add("find (Genre == 'Jazz') sort Last-Modified window 0:10",
        f"find {mpdtest.fx('Genre', '==', 'Jazz')} sort Last-Modified window 0:10")
    add("search any v sort Artist window 0:50", f"search any {arg('lor')} sort Artist window 0:50")
    add("search title zenwy sort Album", f"search title {arg('zenwy')} sort Album")
    add("find artist A sort Track", f"find artist {arg(artist)} sort Track")
    add("search (Artist contains v) sort -Title window 10:20",
        f"search {expr('(Artist contains {})', 'nor')} sort -Title window 10:20")
    # Stored playlist of 10k songs (saved in the set-up), stickers on 10k songs.
    add("listplaylistinfo (10k songs)", f"listplaylistinfo {arg(STORED)}")
    add("listplaylist (10k songs)", f"listplaylist {arg(STORED)}")
    add("listplaylists", "listplaylists", compare="files")
    add("sticker find song \"\" NAME (10k)", f"sticker find song {arg('')} {STICKER}", "sticker")
    add("sticker find song \"\" NAME = 5", f"sticker find song {arg('')} {STICKER} = 5", "sticker")
    add("sticker find song DIR NAME", f"sticker find song {arg('Generated')} {STICKER}", "sticker")
    add("sticker get (one song)", f"sticker get song {arg(a.stored[0])} {STICKER}", "sticker")
    # Queue work on 10k songs.
    q = dict(kind="queue", compare="files")
    add("q10k: load (10k-song playlist)", f"load {arg(STORED)}", each=("clear",), **q)
    add("q10k: add ×10k (command list)", command_list([f"add {arg(u)}" for u in a.stored]), "add",
        each=("clear",), **q)
    before10k = ("clear", f"load {arg(STORED)}")
    add("q10k: playlistinfo", "playlistinfo", before=before10k, **q)
    add("q10k: plchanges 0", "plchanges 0", before=before10k, **q)
    add("q10k: plchangesposid 0", "plchangesposid 0", before=before10k, **q)
    half = len(a.stored) // 2
    add("q10k: playlistinfo (100 in the middle)", f"playlistinfo {half}:{half + 100}", before=before10k, **q)
    add("q10k: playlistfind (Album == B)", f"playlistfind {mpdtest.fx('Album', '==', album)}",
        before=before10k, **q)
    add("q10k: playlistsearch title v", f"playlistsearch title {arg('zen')}", before=before10k, **q)
    add("q10k: shuffle", "shuffle", before=before10k, **q)
    add("q10k: clear", "clear", each=("clear", f"load {arg(STORED)}"), **q)
    add("q10k: save", f"save {arg('benchsaved')}", before=before10k,
        each=(f"rm {arg('benchsaved')}",), **q)
    # Queue work on the whole library (100k songs).
    add("qAll: add \"\"", f"add {arg('')}", each=("clear",), **q)
    add("qAll: findadd (Genre == 'Jazz')", f"findadd {mpdtest.fx('Genre', '==', 'Jazz')}",
        each=("clear",), **q)
    before_all = ("clear", f"add {arg('')}")
    add("qAll: playlistinfo", "playlistinfo", before=before_all, **q)
    add("qAll: plchanges 0", "plchanges 0", before=before_all, **q)
    add("qAll: plchangesposid 0", "plchangesposid 0", before=before_all, **q)
    add("qAll: shuffle", "shuffle", before=before_all, **q)
    add("qAll: clear", "clear", each=("clear", f"add {arg('')}"), **q)
    # Update with nothing changed; rescan of one directory (the last: the db is rewritten).
    u = dict(kind="update", wait_update=True, compare="none")
    add("update (nothing changed)", "update", **u)
    add("rescan of one directory", f"rescan {arg(a.artist_dir)}", **u)
    return out


def prepare(server: mpdtest.Server, a: Arguments, timeout: float) -> None:
    """The stored playlist and the stickers (untimed), and an empty queue."""
    with mpdtest.LineClient(server.port, timeout=timeout) as c:
        for line in ["clear", f"rm {arg(STORED)}"]:
            c.command(line)
        for lines in [
            [f"add {arg(u)}" for u in a.stored] + [f"save {arg(STORED)}", "clear"],
            [f"sticker set song {arg(u)} {STICKER} {i % 10}" for i, u in enumerate(a.stored)],
        ]:
            reply = c.command(command_list(lines))
            if is_error(reply):
                raise Failed(f"set-up: {last_line(reply)}")


# ---------------------------------------------------------------------------
# One server

def start(kind: str, binary: Path, music: Path, workdir: Path, scan_timeout: float,
          out: dict) -> tuple[mpdtest.Server, set[str]]:
    """Scan, rescan and restart one server (figures into `out`); returns it running, and its commands."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    server = mpdtest.Server(kind, binary, music, workdir, settings=SETTINGS)
    t0 = time.monotonic()
    server.spawn()
    wait_greeting(server, 120)
    cmds = commands_of(server)
    status = query(server, "status") if "status" in cmds else b""
    if b"updating_db:" not in status and songs_of(server) <= 0:
        if "update" not in cmds:
            raise Skip("no `update` and no scan at start-up")
        query(server, "update")
    wait_scan(server, cmds, scan_timeout)
    out["scan"] = time.monotonic() - t0
    out["songs"] = songs_of(server) if "stats" in cmds else None
    out["rss after scan"] = settled_rss_mib(server.proc.pid)
    log(f"  {kind}: full scan {out['scan']:.2f} s, {out['songs']} songs, RSS {out['rss after scan']:.1f} MiB")

    if "rescan" in cmds:
        t0 = time.monotonic()
        query(server, "rescan")
        wait_scan(server, cmds, scan_timeout)
        out["rescan"] = time.monotonic() - t0
        out["rss after rescan"] = settled_rss_mib(server.proc.pid)
        log(f"  {kind}: rescan {out['rescan']:.2f} s, RSS {out['rss after rescan']:.1f} MiB")
    else:
        out["rescan"] = out["rss after rescan"] = Skip("`rescan` not in `commands`")

    server.stop()
    if server.crashed:
        raise RuntimeError(f"{server.label} did not stop cleanly:\n{server.log_tail()}")
    db = workdir / "database"
    out["db size"] = db.stat().st_size / 2**20 if db.exists() else None
    restarts = []
    for i in range(3):                      # median of three restarts
        if i:
            server.stop()
        t0 = time.monotonic()
        server.spawn()
        wait_greeting(server, 300)
        restarts.append(time.monotonic() - t0)
    out["restart"] = statistics.median(restarts)
    if "stats" in cmds:
        restarted = songs_of(server)
        if out["songs"] is not None and restarted != out["songs"]:
            log(f"  {kind}: WARNING: {restarted} songs after the restart, "
                f"{out['songs']} before (db not saved?)")
    out["rss"] = settled_rss_mib(server.proc.pid)
    log(f"  {kind}: restart {out['restart'] * 1000:.0f} ms, RSS {out['rss']:.1f} MiB")
    return server, cmds


def attempt(step, query_timeout: float) -> Skip | None:
    """Runs `step`; the Skip (or Failed) that says why a figure has no value, when it raises one."""
    try:
        step()
    except (TimeoutError, socket.timeout):
        return Failed(f"no reply within {query_timeout:.0f} s")
    except Skip as exc:
        return exc
    except (OSError, ConnectionError) as exc:
        return Failed(f"{type(exc).__name__}: {exc}")
    return None


def measure_shape(running: list[tuple[str, mpdtest.Server, set[str]]], shape: Shape, runs: int,
                  query_timeout: float) -> dict[str, object]:
    """One shape on every running server, their runs alternating (mpd's first run, Fermata's, mpd's second…), so
    that a change of the machine's load weighs on both sides of the ratio alike: {kind: its Reply, or the Skip
    that says why there is none}."""
    results: dict[str, object] = {}
    timings: dict[str, Timing] = {}
    for kind, server, cmds in running:
        if shape.needs not in cmds:
            results[kind] = Skip(f"`{shape.needs}` not in `commands`")
            continue
        timing = Timing(server, shape, runs, query_timeout)
        failure = attempt(timing.set_up, query_timeout)
        if failure is None:
            timings[kind] = timing
        else:
            results[kind] = failure
    pids = [server.proc.pid for _, server, _ in running]

    def one_round() -> None:
        for kind, timing in list(timings.items()):
            if timing.finished:
                continue
            failure = attempt(lambda: timing.run(pids), query_timeout)
            if failure is not None:
                results[kind] = failure
                del timings[kind]

    one_round()  # the warm-ups
    plan_runs(list(timings.values()))
    while any(not timing.finished for timing in timings.values()):
        one_round()
    for kind, timing in timings.items():
        results[kind] = timing.result()
    for kind, server, _ in running:
        result = results.get(kind)
        if isinstance(result, Reply):
            log(f"  {kind}: {shape.name}: {result.seconds * 1000:.1f} ms ×{result.runs}, {result.size} bytes")
        elif isinstance(result, Skip):
            log(f"  {kind}: {shape.name}: {result}")
        server.check_alive()
    return results


def measure(servers: list[tuple[str, Path]], music: Path, runs: int, choose_args,
            only: re.Pattern | None, scan_timeout: float, query_timeout: float) -> tuple[dict, Arguments]:
    """Every figure on every server: {kind: {figure: value or Skip}}, and the arguments chosen.

    The scans, rescans and restarts run one server after the other (each has the machine to itself); then
    both servers stay up and every shape is measured on both, their runs alternating (measure_shape()), so that a
    change of the machine's load during the run (other builds) weighs on both sides of each ratio alike.
    """
    results: dict[str, dict] = {kind: {} for kind, _ in servers}
    running: list[tuple[str, mpdtest.Server, set[str]]] = []
    args = None
    try:
        for kind, binary in servers:
            log(f"bench: {kind} ({binary})")
            try:
                server, cmds = start(kind, binary, music, OUT / f"run-{kind}", scan_timeout, results[kind])
            except Skip as exc:
                results[kind].setdefault("scan", exc)
                continue
            if args is None:
                args = choose_args(server)
                log(f"bench: arguments: {args.line()}")
            # Idle while the next one scans.
            running.append((kind, server, cmds))
        if args is None:
            raise SystemExit("bench: no arguments chosen (the first server's run failed)")
        for kind, server, _ in running:
            try:
                prepare(server, args, query_timeout)
            except (Skip, OSError, ConnectionError) as exc:
                log(f"  {kind}: set-up of the stored playlist and stickers failed: {exc}")
        t_shapes = time.monotonic()
        for shape in shapes(args):
            if only is not None and not only.search(shape.name):
                continue
            for kind, result in measure_shape(running, shape, runs, query_timeout).items():
                results[kind][shape.name] = result
        for kind, _, _ in running:
            results[kind]["shapes time"] = time.monotonic() - t_shapes
    finally:
        for _, server, _ in running:
            server.stop()
    return results, args


# ---------------------------------------------------------------------------
# Report

def machine() -> str:
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
            mem = f"{kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} CPUs ({model}), {mem} RAM, {platform.system()} {platform.release()}"


def shown_path(path: Path) -> str:
    """The path as RESULTS.md shows it: relative to the repository when inside it, so no machine's
    absolute paths end up in the committed file."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(REPO))
    except ValueError:
        return str(path)


def version_of(binary: Path) -> str:
    try:
        r = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                           timeout=10)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "?"


def fmt(value, unit: str) -> str:
    if isinstance(value, Failed):
        return "failed"
    if isinstance(value, Skip):
        return "skipped"
    if value is None:
        return "n/a"
    if isinstance(value, Reply):
        value = value.seconds
    if unit == "ms":
        return f"{value * 1000:.1f} ms" if value < 10 else f"{value:.2f} s"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    return str(value)


def number(v) -> float | None:
    if isinstance(v, Reply):
        return v.seconds
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def ratio_of(a, b) -> float | None:
    x, y = number(a), number(b)
    if x is None or y is None or x == 0:
        return None
    return y / x


def target_of(kind: str, ref) -> tuple[float | None, str]:
    """The target of a figure (None: none), and what the table says about it."""
    if kind in ("library", "update", "queue"):
        t = number(ref)
        if t is not None and t <= LIBRARY_FLOOR:
            return None, "(mpd ≤ 1 ms)"
        if kind == "queue":
            return QUEUE_TARGET, f"≤ {QUEUE_TARGET}"
        return LIBRARY_TARGET, f"≤ {LIBRARY_TARGET}"
    if kind == "memory":
        return MEMORY_TARGET, f"≤ {MEMORY_TARGET}"
    return None, ""


def check(compare: str, a, b) -> tuple[str, str | None]:
    """The table's reply column, and a note when the servers disagree."""
    if compare == "error":
        if isinstance(a, Failed) and isinstance(b, Failed):
            same = str(a) == str(b)
            return ("same ACK" if same else "ACK on both"), (None if same else f"mpd: {a}; Fermata: {b}")
        return "**DIFFERS**", f"mpd: {a if isinstance(a, Skip) else 'OK'}; Fermata: {b if isinstance(b, Skip) else 'OK'}"
    if isinstance(a, Skip) or isinstance(b, Skip):
        if isinstance(a, Failed) or isinstance(b, Failed):
            return "**ERROR**", None
        return "", None
    if not isinstance(a, Reply) or not isinstance(b, Reply):
        return "", None
    if a.digest == b.digest:
        return "same", None
    if compare == "none":
        return "", None
    if a.files == b.files and (compare == "files" or a.files or a.lines == b.lines):
        what = f"same songs ({a.files})" if a.files else f"same lines ({a.lines})"
        return what + ("" if compare == "files" else ", other bytes"), None
    return "**DIFFERS**", (f"mpd {a.files} songs, {a.lines} lines, {a.size} bytes; "
                           f"Fermata {b.files} songs, {b.lines} lines, {b.size} bytes")


def table(figures, ref: dict, sut: dict) -> tuple[list[str], list[str], list[str]]:
    """figures: (key, label, unit, kind, compare). Returns rows, notes, and the misses."""
    rows = ["| figure | mpd | Fermata | Fermata/mpd | target | met | floor | reply |",
            "|---|---:|---:|---:|---|---|---:|---|"]
    notes = []
    misses = []
    for key, label, unit, kind, compare in figures:
        a, b = ref.get(key), sut.get(key)
        if a is None and b is None:
            continue
        r = ratio_of(a, b)
        target, target_text = target_of(kind, a)
        if target is None or r is None:
            met = "" if target is None else "**no figure**"
        elif r <= target:
            met = "yes"
        else:
            met = "**MISS**"
            misses.append(f"{label} {r:.2f}")
        if compare == "error":
            target_text, met = "", ""
        reply, note = check(compare, a, b) if unit == "ms" else ("", None)
        floor = ""
        if isinstance(a, Reply) and a.size >= FLOOR_SIZE and a.seconds > 0:
            floor = f"{transfer_floor(a.size) / a.seconds:.2f}"
        rows.append(f"| {label} | {fmt(a, unit)} | {fmt(b, unit)} | "
                    f"{'–' if r is None else f'{r:.2f}'} | {target_text} | {met} | {floor} | {reply} |")
        for who, v in (("mpd", a), ("Fermata", b)):
            if isinstance(v, Skip) and compare != "error":
                what = "failed" if isinstance(v, Failed) else "skipped"
                notes.append(f"* {label}: {what} on {who}: {v}")
        if note:
            notes.append(f"* {label}: {note}")
    return rows, notes, misses


def write_results(songs: int, header: list[str], rows: list[str], notes: list[str], mixed: bool = False) -> None:
    title = f"## {songs} songs" + (", mixed formats" if mixed else "")
    section = "\n".join([title, "", *header, "", *rows, "", *notes]).rstrip() + "\n"
    intro = ("# Benchmarks\n\nWritten by `benchmarks/run.py` (one section per library "
             "size; a new run replaces its section).\nTimes are wall-clock on 127.0.0.1; "
             "query times are the median of several runs (fresh connection each, connect not timed, from "
             "sending the command to the reply's last line, read into one buffer kept from reply to reply).\n")
    text = RESULTS.read_text() if RESULTS.exists() else intro
    sections = re.split(r"(?m)^(?=## )", text)[1:]
    head = intro
    sections = [s for s in sections if not s.startswith(title + "\n")]
    sections.append(section)
    sections.sort(key=lambda s: int(re.match(r"## (\d+)", s).group(1))
                  if re.match(r"## (\d+)", s) else 0)
    RESULTS.write_text(head.rstrip() + "\n\n" + "\n".join(s.rstrip() + "\n" for s in sections))


# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--songs", type=int, default=100000)
    ap.add_argument("--runs", type=int, default=7, help="runs per query (median)")
    ap.add_argument("--fermata", default=str(REPO / ".build/release/fermata"))
    ap.add_argument("--mpd", default="/usr/bin/mpd")
    ap.add_argument("--scan-timeout", type=float, default=3600.0)
    ap.add_argument("--query-timeout", type=float, default=120.0,
                    help="seconds one query may take before its figure is given up")
    ap.add_argument("--only", default=None, help="only the shapes whose name matches this regex")
    ap.add_argument("--no-write", action="store_true", help="do not touch RESULTS.md")
    ap.add_argument("--note", default="", help="a line for RESULTS.md, e.g. which build")
    ap.add_argument("--mixed", action="store_true",
                    help="the library of tools/make-mixed-library.py: FLAC, MP3, Ogg, Opus, M4A, WAV, WavPack")
    args = ap.parse_args(argv)

    fermata = Path(args.fermata)
    if not fermata.is_absolute():
        fermata = (Path.cwd() / fermata).resolve()
    if not fermata.exists():
        sys.exit(f"bench: {fermata} not found (swift build -c release, or --fermata PATH)")
    mpd = Path(args.mpd)
    mpdtest.raise_nofile_limit(4096)
    only = re.compile(args.only) if args.only else None

    OUT.mkdir(parents=True, exist_ok=True)
    generator = "make-mixed-library.py" if args.mixed else "make-fixtures.py"
    music = OUT / (f"mixed-{args.songs}" if args.mixed else f"library-{args.songs}")
    log(f"bench: library of {args.songs} songs in {music}")
    t0 = time.monotonic()
    subprocess.run([PYTHON, str(REPO / "tools" / generator), str(music),
                    "--songs", str(args.songs), "--quiet"], check=True, timeout=7200)
    log(f"bench: library ready ({time.monotonic() - t0:.0f} s)")
    # Read every file once, so that neither server pays for a cold page cache.
    for dirpath, _, filenames in os.walk(music):
        for name in filenames:
            try:
                with open(os.path.join(dirpath, name), "rb") as f:
                    while f.read(1 << 20):
                        pass
            except OSError:
                pass

    load_at_start = os.getloadavg()
    started = time.monotonic()
    results, chosen = measure([("mpd", mpd), ("fermata", fermata)], music, args.runs,
                              lambda server: choose(server, music, args.songs), only,
                              args.scan_timeout, args.query_timeout)
    load_at_end = os.getloadavg()

    ref, sut = results["mpd"], results["fermata"]
    groups = [
        ("Scan, restart and memory", [
            ("scan", "full scan (empty db → `updating_db` gone)", "s", "", ""),
            ("rescan", "`rescan` of everything (→ `updating_db` gone)", "s", "", ""),
            ("restart", "restart with saved db → first reply", "ms", "", ""),
            ("rss after scan", "resident memory after the full scan (VmRSS)", "MiB", "memory", ""),
            ("rss after rescan", "resident memory after `rescan` of everything (VmRSS)", "MiB", "memory", ""),
            ("rss", "resident memory after a restart with saved db (VmRSS)", "MiB", "memory", ""),
            ("db size", "database file", "MiB", "", ""),
        ]),
    ]
    titles = {"library": "Library queries", "queue": "Queue work",
              "update": "`update` and `rescan` of one directory (→ `updating_db` gone)"}
    by_kind: dict[str, list] = {}
    for shape in shapes(chosen):
        if shape.name in ref or shape.name in sut:
            by_kind.setdefault(shape.kind, []).append(
                (shape.name, f"`{shape.name}`", "ms", shape.kind, shape.compare))
    groups += [(titles[k], by_kind[k]) for k in ("library", "queue", "update") if k in by_kind]

    body, all_notes, all_misses, counted = [], [], [], 0
    for title, figures in groups:
        rows, notes, misses = table(figures, ref, sut)
        body += [f"### {title}", "", *rows, ""]
        all_notes += notes
        all_misses += misses
        counted += sum(1 for key, _, _, kind, compare in figures
                       if compare != "error" and target_of(kind, ref.get(key))[0] is not None)
    n_ref, n_sut = ref.get("songs"), sut.get("songs")
    if n_ref != n_sut:
        all_notes.append(f"* song counts differ: mpd {n_ref}, Fermata {n_sut}")
    verdict = (f"**Targets: {counted - len(all_misses)} of {counted} figures with a target meet it; "
               f"{len(all_misses)} miss**" + (": " + "; ".join(all_misses) + "." if all_misses else "."))
    minutes = (time.monotonic() - started) / 60
    header = [
        f"* date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"* machine: {machine()}; load average {load_at_start[0]:.2f} at the start, "
        f"{load_at_end[0]:.2f} at the end (both servers measured in this run, {minutes:.0f} min; "
        "the runs of each shape alternating between mpd and Fermata)",
        f"* mpd: {mpd} ({version_of(mpd)}); Fermata: {shown_path(fermata)} ({version_of(fermata)})",
        f"* library: `tools/{generator} --songs {args.songs}` ({n_ref} songs in mpd's "
        f"database); queries: median of {args.runs} runs ({SLOW_RUNS} when one takes over {SLOW} s), "
        f"after a warm-up run",
        f"* query arguments (from mpd's replies): {chosen.line()}; for each tag V is the middle "
        f"value of mpd's `list TAG`, v four letters of it",
        "* targets (issue 17): Fermata/mpd ≤ 0.2 for a library query where mpd needs more than 1 ms "
        "(also applied to `update` and `rescan`), ≤ 0.5 for queue work (where mpd needs more than 1 ms), resident memory ≤ 0.5× mpd's; "
        "reply: `same` = the same bytes from both servers, `same songs (N)` = the same number of "
        "`file:` lines (queue replies: ids differ)",
        "* floor (replies of 1 MiB or more): the time a server that only sends a reply of that size takes "
        "(a Python thread, read the same way), over mpd's time: the smallest ratio any server could reach "
        "in this measurement, since moving the bytes through the kernel and into the client costs that much",
    ] + ([f"* note: {args.note}"] if args.note else []) + ([f"* only the shapes matching `{args.only}`"]
                                                            if args.only else [])
    print("\n".join(header + ["", verdict, ""] + body + all_notes))
    if not args.no_write:
        write_results(args.songs, header + ["", verdict], body, all_notes, args.mixed)
        log(f"bench: wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
