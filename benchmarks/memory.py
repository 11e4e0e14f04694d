#!/usr/bin/python3
"""Resident memory of mpd and Fermata on the mixed library, split into anonymous and file-backed pages.

Usage (from the repository root, after `make-mixed-library.py`, e.g. through `benchmarks/run.py --mixed`):

    /usr/bin/python3 benchmarks/memory.py [--songs 100000] [--fermata .build/release/fermata]
                                          [--mpd /usr/bin/mpd] [--runs 1] [--idle 3]

For each server, one after the other (each run alternates them), on benchmarks/out/mixed-N:
  * full scan from an empty db (`update`, until `updating_db` is gone), then /proc/PID/status VmRSS and
    /proc/PID/smaps_rollup (Anonymous; file-backed = Rss - Anonymous), at once and again --idle seconds later
    (Fermata closes FFmpeg's libraries at the end of an update);
  * a restart with the saved db (first `ping` reply), the same figures;
  * an M4A song (FFmpeg's) played for 2 s to the null output (repeated), stopped, the same figures --idle s later;
and how many libraries are mapped and whether libavformat is among them (/proc/PID/maps).
Prints one line per figure. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "conformance"))

import mpdtest  # noqa: E402
import run  # noqa: E402  (wait_greeting, wait_scan, query)


def memory(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                out["rss"] = int(line.split()[1]) / 1024
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Anonymous"):
                out[key] = int(rest.split()[0]) / 1024
    out["file"] = out["Rss"] - out["Anonymous"]
    libraries = mapped(pid)
    out["libraries"] = len(libraries)
    out["libavformat"] = float(any("libavformat" in name for name in libraries))
    return out


def mapped(pid: int) -> dict[str, int]:
    """The shared libraries mapped, with their resident KiB (/proc/PID/smaps)."""
    libraries: dict[str, int] = {}
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and len(parts) >= 5 and ":" in parts[3]:
                current = parts[5] if len(parts) >= 6 and ".so" in parts[5] else None
                if current:
                    libraries.setdefault(current, 0)
            elif current and parts[0] == "Rss:":
                libraries[current] += int(parts[1])
    return libraries


def extra(kind: str, when: str, pid: int, start: dict[str, int]) -> None:
    """The libraries mapped now that were not at start-up (stay after dlclose: NODELETE, or still in use)."""
    now = mapped(pid)
    names = sorted(set(now) - set(start))
    total = sum(now[name] for name in names) / 1024
    shown = ", ".join(f"{Path(name).name} {now[name] / 1024:.1f}" for name in names[:12])
    print(f"{kind:8} {when:28} {len(names)} libraries not mapped at start-up, {total:.1f} MiB resident"
          + (f": {shown}" if names else ""), flush=True)


def show(kind: str, when: str, m: dict[str, float]) -> None:
    print(f"{kind:8} {when:28} VmRSS {m['rss']:6.1f} MiB  anon {m['Anonymous']:5.1f}  file {m['file']:5.1f}  "
          f"libraries {int(m['libraries']):3}  libavformat {'mapped' if m['libavformat'] else 'not mapped'}",
          flush=True)


def measure(kind: str, binary: Path, music: Path, workdir: Path, idle: float) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    server = mpdtest.Server(kind, binary, music, workdir)
    try:
        server.spawn()
        run.wait_greeting(server, 120)
        start = mapped(server.proc.pid)
        cmds = run.commands_of(server)
        if b"updating_db:" not in run.query(server, "status"):
            run.query(server, "update")
        run.wait_scan(server, cmds, 3600)
        show(kind, "after the scan", memory(server.proc.pid))
        time.sleep(idle)
        show(kind, f"after the scan + {idle:g} s", memory(server.proc.pid))
        extra(kind, f"after the scan + {idle:g} s", server.proc.pid, start)
        server.stop()
        server.spawn()
        run.wait_greeting(server, 300)
        show(kind, "after a restart", memory(server.proc.pid))
        reply = run.query(server, "listall Generated").decode("utf-8", "replace")
        m4a = next(line[6:] for line in reply.splitlines() if line.startswith("file: ") and line.endswith(".m4a"))
        run.query(server, "clear")
        run.query(server, f"add {mpdtest.arg(m4a)}")
        # The library's clips are short: the song repeats until `stop`.
        run.query(server, "repeat 1")
        run.query(server, "single 1")
        run.query(server, "play 0")
        time.sleep(2)
        state = mpdtest.parse_pairs(run.query(server, "status")).get("state")
        show(kind, f"playing M4A ({state})", memory(server.proc.pid))
        run.query(server, "stop")
        time.sleep(idle)
        show(kind, f"M4A stopped + {idle:g} s", memory(server.proc.pid))
        extra(kind, f"M4A stopped + {idle:g} s", server.proc.pid, start)
    finally:
        server.stop()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--songs", type=int, default=100000)
    ap.add_argument("--fermata", default=str(HERE.parent / ".build/release/fermata"))
    ap.add_argument("--mpd", default="/usr/bin/mpd")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--idle", type=float, default=3.0)
    args = ap.parse_args()
    music = run.OUT / f"mixed-{args.songs}"
    if not music.exists():
        sys.exit(f"memory: {music} missing (tools/make-mixed-library.py {music} --songs {args.songs})")
    mpdtest.raise_nofile_limit(4096)
    for _ in range(args.runs):
        for kind, binary in (("mpd", Path(args.mpd)), ("fermata", Path(args.fermata).resolve())):
            measure(kind, binary, music, run.OUT / f"memory-{kind}", args.idle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
