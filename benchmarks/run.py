#!/usr/bin/python3
"""Fermata vs mpd on a big generated library: scan, restart, memory, queries.

Usage (from the repository root, with Debian's Python):

    /usr/bin/python3 benchmarks/run.py [--songs 100000] [--runs 7]
                                       [--fermata .build/release/fermata] [--mpd /usr/bin/mpd]

1. builds (once, cached in benchmarks/out/library-N/) a library of N songs with
   tools/make-fixtures.py;
2. for each server, one after the other, on that library (127.0.0.1, null audio
   output, its own db file under benchmarks/out/run-*/):
   * full scan: start with no db file, send `update` unless the server is already
     updating, poll `status` until `updating_db` is gone (and `stats` shows songs);
   * restart: stop it (SIGTERM, the db is saved), start it again, time to the first
     `ping` reply (median of 3);  then VmRSS from /proc/PID/status;
   * queries, each the median of --runs runs (a fresh connection each, connect not
     timed; from sending the command to the reply's final line, read in large
     chunks; a query that gets no reply within --query-timeout is given up): `list albumartist`,
     `list album group albumartist`, `find` by artist and by album, `count`, and
     `search` on a common substring;
3. prints both values and Fermata/mpd for every figure, and writes the table into
   benchmarks/RESULTS.md (a section per library size, replaced on each run).

A figure whose command the Fermata binary does not list in `commands` is skipped
(and says so).  `--fermata /usr/bin/mpd` runs the whole thing with mpd standing in,
to check the script.  Not part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "conformance"))

import mpdtest  # noqa: E402  (Server, LineClient, config writing)

OUT = HERE / "out"
RESULTS = HERE / "RESULTS.md"
PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable


# ---------------------------------------------------------------------------
# Helpers

class Skip(Exception):
    """A figure that cannot be measured (reason in the message)."""


class Failed(Skip):
    """A figure whose command failed: no reply in time, or an error reply."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


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


def read_reply(sock: socket.socket) -> bytes:
    """One whole reply (through its final `OK` or `ACK` line), read in large chunks."""
    chunks = []
    tail = b""
    while True:
        data = sock.recv(1 << 20)
        if not data:
            raise ConnectionError("connection closed before the end of the reply")
        chunks.append(data)
        tail = (tail + data)[-512:]
        if tail.endswith(b"\n"):
            last = tail[:-1].rsplit(b"\n", 1)[-1]
            if last == b"OK" or last.startswith(b"ACK "):
                return b"".join(chunks)


def timed(server: mpdtest.Server, line: str, runs: int, timeout: float) -> tuple[float, int]:
    """Median seconds for `line`, and the reply size in bytes.

    One warm-up run, then `runs` timed ones, each on a fresh connection (the
    connect is not timed), so that one stuck reply cannot poison the others.
    The reply is read in large chunks up to its final line, not parsed line by
    line: a Python line reader costs about 0.3 µs a line, the same for both
    servers, which would hide the servers' own times on replies of 20k lines.
    """
    times = []
    reply = b""
    for i in range(runs + 1):
        try:
            with socket.create_connection((mpdtest.HOST, server.port), timeout=timeout) as sock:
                greeting = b""
                while not greeting.endswith(b"\n"):
                    data = sock.recv(256)
                    if not data:
                        raise ConnectionError("no greeting")
                    greeting += data
                t0 = time.perf_counter()
                sock.sendall(line.encode() + b"\n")
                reply = read_reply(sock)
                elapsed = time.perf_counter() - t0
        except (TimeoutError, socket.timeout):
            raise Failed(f"no reply within {timeout:.0f} s") from None
        if i:
            times.append(elapsed)
    if reply.startswith(b"ACK ") or b"\nACK " in reply:
        raise Failed(f"error reply: {reply.splitlines()[-1].decode(errors='replace')}")
    return statistics.median(times), len(reply)


def arg(value: str) -> str:
    return mpdtest.arg(value)


def values(reply: bytes, key: str) -> list[str]:
    prefix = key + ": "
    return [line[len(prefix):] for line in reply.decode("utf-8", "replace").splitlines()
            if line.startswith(prefix)]


# ---------------------------------------------------------------------------
# One server

def measure(kind: str, binary: Path, music: Path, workdir: Path, runs: int,
            queries: list[tuple[str, str, str]], scan_timeout: float,
            query_timeout: float) -> dict:
    """Run every figure on one server; returns {figure: value or Skip}."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    server = mpdtest.Server(kind, binary, music, workdir)
    out: dict[str, object] = {}
    try:
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
        out["rss after scan"] = rss_mib(server.proc.pid)
        log(f"  {kind}: full scan {out['scan']:.2f} s, {out['songs']} songs, RSS {out['rss after scan']:.1f} MiB")

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
        out["rss"] = rss_mib(server.proc.pid)
        log(f"  {kind}: restart {out['restart'] * 1000:.0f} ms, RSS {out['rss']:.1f} MiB")

        for name, command, needs in queries:
            if needs not in cmds:
                out[name] = Skip(f"`{needs}` not in `commands`")
                continue
            try:
                out[name] = timed(server, command, runs, query_timeout)
                log(f"  {kind}: {name}: {out[name][0] * 1000:.1f} ms, {out[name][1]} bytes")
            except Skip as exc:
                out[name] = exc
            except (OSError, ConnectionError) as exc:
                out[name] = Failed(f"{type(exc).__name__}: {exc}")
            if isinstance(out[name], Skip):
                log(f"  {kind}: {name}: {out[name]}")
    except Skip as exc:
        out.setdefault("scan", exc)
    finally:
        server.stop()
    return out


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
    if isinstance(value, tuple):
        value = value[0]
    if unit == "ms":
        return f"{value * 1000:.1f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MiB":
        return f"{value:.1f} MiB"
    return str(value)


def ratio(a, b) -> str:
    if isinstance(a, tuple):
        a = a[0]
    if isinstance(b, tuple):
        b = b[0]
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or a == 0:
        return "–"
    return f"{b / a:.2f}"


def table(figures, ref: dict, sut: dict) -> tuple[list[str], list[str]]:
    rows = ["| figure | mpd | Fermata | Fermata/mpd |", "|---|---:|---:|---:|"]
    notes = []
    for key, label, unit in figures:
        a, b = ref.get(key), sut.get(key)
        rows.append(f"| {label} | {fmt(a, unit)} | {fmt(b, unit)} | {ratio(a, b)} |")
        for who, v in (("mpd", a), ("Fermata", b)):
            if isinstance(v, Skip):
                what = "failed" if isinstance(v, Failed) else "skipped"
                notes.append(f"* {label}: {what} on {who}: {v}")
        if isinstance(a, tuple) and isinstance(b, tuple) and a[1] != b[1]:
            notes.append(f"* {label}: reply sizes differ (mpd {a[1]} bytes, "
                         f"Fermata {b[1]} bytes)")
    return rows, notes


def write_results(songs: int, header: list[str], rows: list[str], notes: list[str], mixed: bool = False) -> None:
    title = f"## {songs} songs" + (", mixed formats" if mixed else "")
    section = "\n".join([title, "", *header, "", *rows, "", *notes]).rstrip() + "\n"
    intro = ("# Benchmarks\n\nWritten by `benchmarks/run.py` (one section per library "
             "size; a new run replaces its section).\nTimes are wall-clock on 127.0.0.1; "
             "query times are the median of several runs (fresh connection each, connect not timed, from "
             "sending the command to the reply's last line, read in large chunks).\n")
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

    # Query arguments, chosen from the library's generated part (its directories are
    # Generated/ARTIST/ALBUM (YEAR)/): an artist and an album from the middle, and a
    # title word about 1 song in 60 contains.
    generated = sorted(p.name for p in (music / "Generated").iterdir())
    artists = [a for a in generated if a.endswith(tuple("0123456789"))]
    mid = music / "Generated" / artists[len(artists) // 2]
    albums = sorted(re.sub(r" \(\d+\)$", "", p.name) for p in mid.iterdir())
    artist = mid.name
    album = albums[0]
    substring = "zenwy"
    queries = [
        ("list albumartist", "list albumartist", "list"),
        ("list album group albumartist", "list album group albumartist", "list"),
        ("find (Artist == A)", f"find {mpdtest.fx('Artist', '==', artist)}", "find"),
        ("find (Album == B)", f"find {mpdtest.fx('Album', '==', album)}", "find"),
        ("count (Genre == 'Jazz')", f"count {mpdtest.fx('Genre', '==', 'Jazz')}", "count"),
        ("count group albumartist", "count group albumartist", "count"),
        (f"search title {substring}", f"search title {arg(substring)}", "search"),
    ]
    log(f"bench: find artist {artist!r}, album {album!r}; search {substring!r}")

    results = {}
    for kind, binary in (("mpd", mpd), ("fermata", fermata)):
        log(f"bench: {kind} ({binary})")
        results[kind] = measure(kind, binary, music, OUT / f"run-{kind}", args.runs,
                                queries, args.scan_timeout, args.query_timeout)

    figures = [
        ("scan", "full scan (empty db → `updating_db` gone)", "s"),
        ("restart", "restart with saved db → first reply", "ms"),
        ("rss after scan", "resident memory after the full scan (VmRSS)", "MiB"),
        ("rss", "resident memory after a restart with saved db (VmRSS)", "MiB"),
        ("db size", "database file", "MiB"),
        *[(name, f"`{name}`", "ms") for name, _, _ in queries],
    ]
    rows, notes = table(figures, results["mpd"], results["fermata"])
    n_ref, n_sut = results["mpd"].get("songs"), results["fermata"].get("songs")
    if n_ref != n_sut:
        notes.append(f"* song counts differ: mpd {n_ref}, Fermata {n_sut}")
    header = [
        f"* date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"* machine: {machine()}",
        f"* mpd: {mpd} ({version_of(mpd)}); Fermata: {shown_path(fermata)} ({version_of(fermata)})",
        f"* library: `tools/{generator} --songs {args.songs}` ({n_ref} songs in mpd's "
        f"database); queries: median of {args.runs} runs",
        f"* query arguments: artist {artist!r}, album {album!r}, title substring "
        f"{substring!r}",
    ] + ([f"* note: {args.note}"] if args.note else [])
    print("\n".join(header + [""] + rows + [""] + notes))
    if not args.no_write:
        write_results(args.songs, header, rows, notes, args.mixed)
        log(f"bench: wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
