#!/usr/bin/python3
"""What a `mount` costs Fermata on a large library: memory, and the wait of the other clients.

Usage (from the repository root):

    /usr/bin/python3 benchmarks/mountmemory.py FERMATA [FERMATA ...] [--songs 100000]

For each binary given (e.g. one built before a change and one after), one after the other: the server starts on
an empty music directory with a `database` block whose `path` holds a generated database of `--songs` songs in
mpd's format (1000 artists, 10 albums each, the rest per album; title, artist, album artist, album, track, date,
genre, a MusicBrainz track id, the audio format) and whose `cache_directory` holds the database of a 3-song storage
at `smb://127.0.0.1:1/share` (so that `mount` reads it and scans nothing: no traffic). Figures, each taken after
`malloc_trim(0)` in the server (through gdb, so that freed memory that glibc keeps does not count), from
/proc/PID/status (VmRSS) and /proc/PID/smaps_rollup (Anonymous):
  * loaded, 4 s after the first `ping` answered;
  * mounted (`mount m smb://127.0.0.1:1/share`), 4 s later; then unmounted, 4 s later;
  * `mount` and `unmount` again while another client sends `ping` every 10 ms: the command's time and the longest
    `ping`.
Needs gdb. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "conformance"))

import mpdtest  # noqa: E402

URI = "smb://127.0.0.1:1/share"


def memory(pid: int) -> tuple[float, float]:
    subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "call (int)malloc_trim(0)"], capture_output=True)
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
    with open(f"/proc/{pid}/smaps_rollup") as f:
        anon = next(int(line.split()[1]) for line in f if line.startswith("Anonymous:")) / 1024
    return rss, anon


def query(port: int, command: str) -> bytes:
    with mpdtest.LineClient(port, timeout=60) as client:
        return client.command(command)


def timed_with_pings(port: int, command: str) -> tuple[float, float, int]:
    """`command`'s time, and the longest of the pings another client sent meanwhile, and how many."""
    times: list[float] = []
    stop = threading.Event()

    def pinger() -> None:
        with mpdtest.LineClient(port, timeout=60) as client:
            while not stop.is_set():
                start = time.monotonic()
                client.command("ping")
                times.append(time.monotonic() - start)
                time.sleep(0.01)

    thread = threading.Thread(target=pinger)
    thread.start()
    time.sleep(0.2)
    start = time.monotonic()
    query(port, command)
    took = time.monotonic() - start
    time.sleep(0.2)
    stop.set()
    thread.join()
    return took, max(times), len(times)


def measure(binary: str, big: bytes, small: bytes, work: Path) -> None:
    name = "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "-_%") else "_"
                   for b in URI.encode())
    (work / "cache").mkdir()
    (work / "db").write_bytes(big)
    (work / "cache" / name).write_bytes(small)
    port = mpdtest.free_port()
    conf = work / "fermata.conf"
    conf.write_text(f'music_directory "{work.parent / "empty"}"\nbind_to_address "127.0.0.1"\nport "{port}"\n'
                    f'log_file "{work}/log"\ndatabase {{\n  plugin "simple"\n  path "{work}/db"\n'
                    f'  cache_directory "{work}/cache"\n}}\naudio_output {{\n  type "null"\n  name "null"\n}}\n')
    proc = subprocess.Popen([binary, "--no-daemon", str(conf)])

    def ready() -> bool:
        try:
            return query(port, "ping") == b"OK\n"
        except OSError:
            return False

    try:
        assert mpdtest.wait_until(ready, timeout=120)
        time.sleep(4)
        show = lambda what, m: print(f"{binary}: {what:10} VmRSS {m[0]:6.1f} MiB  anonymous {m[1]:6.1f} MiB",
                                     flush=True)
        loaded = memory(proc.pid)
        show("loaded", loaded)
        assert query(port, f"mount m {URI}") == b"OK\n"
        time.sleep(4)
        mounted = memory(proc.pid)
        show("mounted", mounted)
        assert query(port, "unmount m") == b"OK\n"
        time.sleep(4)
        unmounted = memory(proc.pid)
        show("unmounted", unmounted)
        print(f"{binary}: the mount held {mounted[1] - unmounted[1]:.1f} MiB of anonymous memory", flush=True)
        for command in (f"mount m {URI}", "unmount m"):
            took, longest, count = timed_with_pings(port, command)
            print(f"{binary}: {command.split()[0]:8} {took * 1000:5.0f} ms; longest of {count} pings meanwhile "
                  f"{longest * 1000:5.0f} ms", flush=True)
    finally:
        proc.terminate()
        proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("fermata", nargs="+")
    ap.add_argument("--songs", type=int, default=100000)
    args = ap.parse_args()
    if shutil.which("gdb") is None:
        sys.exit("mountmemory: gdb is needed (to call malloc_trim in the server)")
    work = Path(tempfile.mkdtemp(prefix="fermata-mountmemory-"))
    try:
        head = mpdtest.database_header(args.fermata[0], work)
        big = mpdtest.generated_database(head, 1000, 10, max(1, args.songs // 10000))
        small = mpdtest.generated_database(head, 1, 1, 3)
        for index, binary in enumerate(args.fermata):
            run = work / f"run-{index}"
            run.mkdir()
            measure(binary, big, small, run)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
