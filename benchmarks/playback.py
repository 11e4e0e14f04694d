#!/usr/bin/python3
"""Playback: CPU time of Fermata vs mpd for one minute of MP3 and of each other format, and allocations.

Usage (from the repository root, with Debian's Python):

    /usr/bin/python3 benchmarks/playback.py [--runs 5] [--fermata .build/release/fermata] [--mpd /usr/bin/mpd]

1. makes (once, in benchmarks/out/playback/) a 60 s stereo 44.1 kHz MP3 (sox tone, lame 128 kbit/s);
2. CPU: each server in turn plays it to a `null` output with `sync "no"` (as fast as it decodes) and
   `mixer_type "none"`: user+system CPU time from /proc/PID/stat (all threads) before `play` and once
   `status` says the queue ended, with the minute queued REPEAT times, divided by REPEAT; the median
   of --runs plays.  Each server runs twice: with its default MP3 decoder (libmad, first in both lists)
   and with libmad disabled (`decoder { plugin "mad" enabled "no" }`), so that it decodes with libmpg123;
   each figure compares the same decoder;
3. allocations: Fermata under an LD_PRELOAD counter (benchmarks/malloccount.c, built here with `cc`)
   plays the MP3 to a paced null output (`sync "yes"`) with a software mixer at 50 % (so the volume is
   applied to every sample); the per-thread count of malloc/calloc/realloc/memalign calls is read
   over 10 s of steady playback, and over 10 s idle for comparison;
   Then the same minute in every other format Fermata's `decoders` lists (FLAC, Ogg Vorbis, Opus, AAC in
   M4A, WAV, WavPack), each played by mpd and by Fermata the same way; and the MP3 as a stream: served
   over HTTP on 127.0.0.1 by tools/streamserver.py (`/file/`, with a length), queued by URL, so the
   input plugin (libcurl) runs too;
4. prints the figures and writes them into the "Playback" section of benchmarks/RESULTS.md.

Not part of `make test`; `make bench` runs it after run.py.
"""

from __future__ import annotations

import argparse
import datetime
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "conformance"))
sys.path.insert(0, str(HERE))

import mpdtest  # noqa: E402
import run as library_bench  # noqa: E402  (machine(), shown_path(), version_of())

OUT = HERE / "out" / "playback"
RESULTS = HERE / "RESULTS.md"
SECONDS = 60
#: Times the minute is queued per play (CPU time is read in clock ticks of 10 ms: more audio, finer figures).
REPEAT = 5
CLOCK_TICKS = __import__("os").sysconf("SC_CLK_TCK")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


#: The other formats, encoded from the same minute: (file, encoder command after the input and output).
FORMATS = [
    ("minute.flac", lambda src, dst: ["flac", "-s", "-f", "-o", dst, src]),
    ("minute.ogg", lambda src, dst: ["oggenc", "-Q", "-q", "5", "-o", dst, src]),
    ("minute.opus", lambda src, dst: ["opusenc", "--quiet", "--bitrate", "128", src, dst]),
    ("minute.m4a", lambda src, dst: ["ffmpeg", "-v", "error", "-y", "-i", src, "-c:a", "aac", "-b:a", "128k", dst]),
    ("minute.wav", None),
    ("minute.wv", lambda src, dst: ["wavpack", "-q", "-y", src, "-o", dst]),
]


def make_music() -> Path:
    music = OUT / "music"
    mp3 = music / "minute.mp3"
    wav = music / "minute.wav"
    if not mp3.exists() or not all((music / name).exists() for name, _ in FORMATS):
        music.mkdir(parents=True, exist_ok=True)
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wav), "synth", str(SECONDS),
                        "sine", "200-2000", "sine", "300-3000", "gain", "-6"], check=True)
        subprocess.run(["lame", "--quiet", "-b", "128", str(wav), str(mp3)], check=True)
        for name, encode in FORMATS:
            if encode is not None:
                subprocess.run(encode(str(wav), str(music / name)), check=True)
    return music


def decoded_suffixes(binary: Path, music: Path) -> set[str]:
    """The suffixes the server's `decoders` reply lists."""
    server = start("decoders", binary, music, [{"type": "null", "name": "Bench"}])
    try:
        reply = server.query("decoders")
    finally:
        stop(server)
    return {line.split(b": ", 1)[1].decode() for line in reply.splitlines() if line.startswith(b"suffix: ")}


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (all threads)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def start(label: str, binary: Path, music: Path, outputs: list[dict], extra: list[str] | None = None,
          env: dict | None = None) -> mpdtest.Server:
    server = mpdtest.Server(label, binary, music, Path(tempfile.mkdtemp(prefix=f"fermata-bench-{label}-")))
    server.outputs = outputs
    server.env = dict(env or {})
    if extra:
        # Extra raw config lines (mpd's decoder block), appended after the generated ones.
        original = server.write_config

        def write_config():
            original()
            with open(server.conf_path, "a") as f:
                f.write("\n".join(extra) + "\n")
        server.write_config = write_config
    server.start()
    return server


def stop(server: mpdtest.Server) -> None:
    server.stop()
    shutil.rmtree(server.workdir, ignore_errors=True)


def play_to_end(server: mpdtest.Server, timeout: float = 120) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one play of the queue from the start to its end."""
    with server.connect() as c:
        c.command("stop")
        time.sleep(0.3)
        cpu0 = cpu_seconds(server.proc.pid)
        t0 = time.monotonic()
        assert c.command("play 0") == b"OK\n"
        while True:
            state = mpdtest.parse_pairs(c.command("status")).get("state")
            if state == "stop":
                break
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"{server.label}: still {state} after {timeout} s")
            time.sleep(0.01)
        wall = time.monotonic() - t0
        cpu1 = cpu_seconds(server.proc.pid)
    return cpu1 - cpu0, wall


def cpu_figure(label: str, binary: Path, music: Path, runs: int, extra: list[str] | None = None,
               song: str = "minute.mp3") -> dict:
    server = start(label, binary, music, [{"type": "null", "name": "Bench", "sync": "no", "mixer_type": "none"}],
                   extra)
    try:
        with server.connect() as c:
            for _ in range(REPEAT):
                assert c.command(f'add "{song}"') == b"OK\n"
        samples = [tuple(x / REPEAT for x in play_to_end(server)) for _ in range(runs)]
    finally:
        stop(server)
    cpu = statistics.median(s[0] for s in samples)
    wall = statistics.median(s[1] for s in samples)
    log(f"{label}: CPU {cpu:.3f} s, wall {wall:.3f} s (runs: {', '.join(f'{s[0]:.2f}' for s in samples)})")
    return {"cpu": cpu, "wall": wall, "runs": [s[0] for s in samples]}


#: The decoder block that leaves MP3 to the mpg123 plugin.
NO_MAD = ['decoder {', '    plugin "mad"', '    enabled "no"', '}']


def stream_figures(args, music: Path) -> tuple[dict, dict, dict]:
    """mpd (libmad), mpd (libmpg123) and Fermata (libmad) playing the minute from the test HTTP server."""
    port_file = Path(tempfile.mkdtemp(prefix="fermata-bench-http-")) / "port"
    proc = subprocess.Popen([sys.executable, str(REPO / "tools" / "streamserver.py"), "--root", str(music),
                             "--port-file", str(port_file), "--lifetime", "3600"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not mpdtest.wait_until(port_file.exists, 10):
            raise RuntimeError("streamserver did not start")
        url = f"http://127.0.0.1:{port_file.read_text().strip()}/file/minute.mp3"
        mad = cpu_figure("mpd stream", args.mpd, music, args.runs, song=url)
        mpg123 = cpu_figure("mpd-mpg123 stream", args.mpd, music, args.runs, NO_MAD, song=url)
        ours = cpu_figure("fermata stream", args.fermata, music, args.runs, song=url)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(port_file.parent, ignore_errors=True)
    return mad, mpg123, ours


# ---------------------------------------------------------------------------
# Allocations

def build_counter() -> Path:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise RuntimeError("no C compiler (cc) to build benchmarks/malloccount.c")
    OUT.mkdir(parents=True, exist_ok=True)
    lib = OUT / "malloccount.so"
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-ftls-model=initial-exec", "-o", str(lib),
                    str(HERE / "malloccount.c"), "-ldl"], check=True)
    return lib


def allocations(path: Path, pid: int) -> dict[tuple[int, str], int]:
    """{(thread id, thread name): allocation calls so far} from the counter's table."""
    data = path.read_bytes()
    used = min(struct.unpack_from("q", data, 0)[0], 4096)
    out = {}
    for index in range(used):
        tid, count = struct.unpack_from("qq", data, 16 + 16 * index)
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            name = "(exited)"
        out[(tid, name)] = count
    return out


def window(path: Path, pid: int, seconds: float) -> dict[tuple[int, str], int]:
    before = allocations(path, pid)
    time.sleep(seconds)
    after = allocations(path, pid)
    return {key: after[key] - before.get(key, 0) for key in after}


def allocation_figure(binary: Path, music: Path) -> tuple[dict, dict, dict]:
    lib = build_counter()
    counts = Path(tempfile.mkdtemp(prefix="fermata-bench-malloc-")) / "counts.bin"
    server = start("alloc", binary, music,
                   [{"type": "null", "name": "Paced", "sync": "yes", "mixer_type": "software"}],
                   env={"LD_PRELOAD": str(lib), "MALLOC_COUNT_FILE": str(counts)})
    try:
        pid = server.proc.pid
        time.sleep(1)
        idle = window(counts, pid, 10)
        with server.connect() as c:
            for line in ('add "minute.mp3"', "setvol 50", "play 0"):
                assert c.command(line) == b"OK\n", line
        time.sleep(3)            # past the start of the song (decoder and device set up, pipe full)
        playing = window(counts, pid, 10)
        total = allocations(counts, pid)
        with server.connect() as c:
            status = mpdtest.parse_pairs(c.command("status"))
            c.command("stop")
        if status.get("state") != "play":
            raise RuntimeError(f"not playing at the end of the window: {status}")
    finally:
        stop(server)
        shutil.rmtree(counts.parent, ignore_errors=True)
    return idle, playing, total


def by_name(counts: dict[tuple[int, str], int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for (_, name), n in counts.items():
        out[name] = out.get(name, 0) + n
    return out


# ---------------------------------------------------------------------------

def write_section(title: str, lines: list[str], first: bool = False) -> None:
    """Replaces the section `## {title}` of RESULTS.md with `lines` (placed first, or last when new)."""
    heading = f"## {title}"
    section = "\n".join([heading, "", *lines]).rstrip() + "\n"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmarks\n"
    parts = re.split(r"(?m)^(?=## )", text)
    head, sections = parts[0], [s for s in parts[1:] if not s.startswith(heading + "\n")]
    if first:
        sections.insert(0, section)
    else:
        sections.append(section)
    RESULTS.write_text(head.rstrip() + "\n\n" + "\n".join(s.rstrip() + "\n" for s in sections))


def write_results(lines: list[str]) -> None:
    write_section("Playback", lines, first=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fermata", type=Path, default=REPO / ".build" / "release" / "fermata")
    ap.add_argument("--mpd", type=Path, default=Path("/usr/bin/mpd"))
    ap.add_argument("--note", default="", help="a line for RESULTS.md (e.g. which build)")
    ap.add_argument("--stream-only", action="store_true",
                    help="only the stream figures, printed (RESULTS.md is left alone)")
    args = ap.parse_args(argv)
    music = make_music()
    if args.stream_only:
        mad, mpg123, ours = stream_figures(args, music)
        print(f"stream: Fermata/mpd (libmad) {ours['cpu'] / mad['cpu']:.2f}")
        return 0

    mpd_mad = cpu_figure("mpd", args.mpd, music, args.runs)
    mpd_mpg123 = cpu_figure("mpd-mpg123", args.mpd, music, args.runs, NO_MAD)
    fermata = cpu_figure("fermata", args.fermata, music, args.runs)
    fermata_mpg123 = cpu_figure("fermata-mpg123", args.fermata, music, args.runs, NO_MAD)
    suffixes = decoded_suffixes(args.fermata, music)
    per_format = []
    for name, _ in FORMATS:
        if name.rsplit(".", 1)[1] not in suffixes:
            log(f"{name}: Fermata lists no decoder for it; skipped")
            continue
        theirs = cpu_figure(f"mpd {name}", args.mpd, music, args.runs, song=name)
        ours = cpu_figure(f"fermata {name}", args.fermata, music, args.runs, song=name)
        per_format.append((name, theirs, ours))
    stream_mad, stream_mpg123, stream_ours = stream_figures(args, music)
    idle, playing, total = allocation_figure(args.fermata, music)
    idle_names, playing_names, total_names = by_name(idle), by_name(playing), by_name(total)
    log(f"allocations, 10 s idle: {idle_names}")
    log(f"allocations, 10 s playing: {playing_names}")

    audio = {name: n for name, n in playing_names.items() if name == "decoder" or name.startswith("output:")}
    lines = [
        f"* date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"* machine: {library_bench.machine()}",
        f"* mpd: {args.mpd} ({library_bench.version_of(args.mpd)}); Fermata: "
        f"{library_bench.shown_path(args.fermata)} ({library_bench.version_of(args.fermata)})",
        *([f"* note: {args.note}"] if args.note else []),
        "",
        f"### CPU time for {SECONDS} s of MP3 (128 kbit/s, 44.1 kHz stereo) to `null` with `sync \"no\"`",
        "",
        "`benchmarks/playback.py`: user+system time of the whole process from `/proc/PID/stat`, from "
        f"`play` to the end of a queue of {REPEAT} copies, divided by {REPEAT}; median of {args.runs} plays; "
        "`mixer_type \"none\"`.",
        "",
        "| decoder | mpd CPU (wall) | Fermata CPU (wall) | Fermata/mpd |",
        "|---|---:|---:|---:|",
        f"| default: libmad | {mpd_mad['cpu']:.3f} s ({mpd_mad['wall']:.3f} s) | "
        f"{fermata['cpu']:.3f} s ({fermata['wall']:.3f} s) | **{fermata['cpu'] / mpd_mad['cpu']:.2f}** |",
        f"| libmpg123 (mad disabled) | {mpd_mpg123['cpu']:.3f} s ({mpd_mpg123['wall']:.3f} s) | "
        f"{fermata_mpg123['cpu']:.3f} s ({fermata_mpg123['wall']:.3f} s) | "
        f"**{fermata_mpg123['cpu'] / mpd_mpg123['cpu']:.2f}** |",
        "",
        "Target: Fermata/mpd ≤ 1.0 with each decoder.",
        "",
        f"### CPU time for {SECONDS} s of each other format (same signal and method)",
        "",
        "Only formats Fermata lists in `decoders`; each encoded from the same WAV (FLAC `flac`, Vorbis "
        "`oggenc -q 5`, Opus `opusenc --bitrate 128`, AAC `ffmpeg -c:a aac -b:a 128k`, WavPack `wavpack`).",
        "",
        "| file | mpd CPU | Fermata CPU | Fermata/mpd |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {theirs['cpu']:.3f} s | {ours['cpu']:.3f} s | "
          f"{ours['cpu'] / theirs['cpu'] if theirs['cpu'] else float('nan'):.2f} |"
          for name, theirs, ours in per_format],
        "",
        f"### CPU time for {SECONDS} s of the MP3 as an HTTP stream",
        "",
        "The same minute served by `tools/streamserver.py` on 127.0.0.1 (`/file/minute.mp3`: with a length) and "
        "queued by URL, so each server's curl input runs as well; same method.",
        "",
        "| server | CPU time | wall time | Fermata/this |",
        "|---|---:|---:|---:|",
        f"| mpd, default decoder (libmad) | {stream_mad['cpu']:.3f} s | {stream_mad['wall']:.3f} s | "
        f"{stream_ours['cpu'] / stream_mad['cpu']:.2f} |",
        f"| mpd, libmpg123 (mad disabled) | {stream_mpg123['cpu']:.3f} s | {stream_mpg123['wall']:.3f} s | "
        f"{stream_ours['cpu'] / stream_mpg123['cpu']:.2f} |",
        f"| Fermata, default decoder (libmad) | {stream_ours['cpu']:.3f} s | {stream_ours['wall']:.3f} s | 1.00 |",
        "",
        "### Allocations on the audio path",
        "",
        "`benchmarks/playback.py` with `benchmarks/malloccount.c` (LD_PRELOAD; counts malloc, calloc, "
        "realloc and the memalign family per thread, read by thread name from `/proc/PID/task/*/comm`). "
        "Fermata plays to a paced null output with a software mixer at 50 %; counts over 10 s idle "
        "before the first `play`, over 10 s of playing (from 3 s after `play`), and since start-up "
        "(which shows the counter sees each thread: opening the song and the device allocate):",
        "",
        "| thread | 10 s idle | 10 s playing | since start-up |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {idle_names.get(name, 0)} | {playing_names.get(name, 0)} | {total_names.get(name, 0)} |"
          for name in sorted(set(idle_names) | set(playing_names) | set(total_names))],
        "",
        f"Audio threads (decoder, output:*) while playing: "
        f"{', '.join(f'{k} {v}' for k, v in sorted(audio.items())) or 'none found by name'}.",
    ]
    write_results(lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
