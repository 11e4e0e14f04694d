#!/usr/bin/python3
"""httpd: CPU time of Fermata vs mpd playing one minute through an `httpd` output, per encoder.

Usage (from the repository root, with Debian's Python):

    /usr/bin/python3 benchmarks/httpd.py [--encoders lame,vorbis] [--fermata .build/release/fermata]
                                         [--default-decoders] [--no-write]

For each encoder (`lame` at 128 kbit/s, `vorbis` at quality 5 by default), mpd and Fermata each get an
`httpd` output on a loopback port and the minute of MP3 that benchmarks/playback.py makes; both play it at
the same time (the output is paced in real time, so this takes a minute per encoder), each with one
listener reading its stream (an httpd output encodes only while someone listens). The figure is the
user+system CPU time of each whole process from `play` to the end of the queue, as a ratio Fermata/mpd in
the same run. Both servers get the same decoder block, libmad's plugin disabled, so both decode the MP3 with
their `mpg123` plugin (libmpg123, signed 16-bit samples, which lame takes as they are). With
--default-decoders, neither gets it: mpd decodes with libmad and Fermata with libmpg123 as mpd's `mad` plugin,
both into 24-bit samples that are dithered down to 16 bits for lame (printed only). Writes the "httpd" section
of benchmarks/RESULTS.md. Not part of `make test`; `make bench` runs it.
"""

from __future__ import annotations

import argparse
import datetime
import socket
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "conformance"))
sys.path.insert(0, str(HERE))

import mpdtest  # noqa: E402
import playback  # noqa: E402  (make_music, start, stop, cpu_seconds)

ENCODERS = {
    "lame": {"encoder": "lame", "bitrate": "128"},
    "vorbis": {"encoder": "vorbis", "quality": "5"},
    "opus": {"encoder": "opus", "bitrate": "128000"},
    "flac": {"encoder": "flac"},
    "wave": {"encoder": "wave"},
}
NO_MAD = ['decoder {', '    plugin "mad"', '    enabled "no"', '}']


def listen(port: int, stop: threading.Event, received: list[int]) -> None:
    """A listener that reads and discards the stream until `stop`."""
    with socket.create_connection((mpdtest.HOST, port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
        sock.settimeout(0.5)
        while not stop.is_set():
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                break
            received[0] += len(chunk)


def measure(server: mpdtest.Server, port: int, results: dict, key: str) -> None:
    """CPU seconds of one play of the queue through the httpd output, with a listener."""
    stop = threading.Event()
    received = [0]
    with server.connect() as c:
        c.command("play 0")
        time.sleep(0.5)  # the stream is open: listeners are served
        listener = threading.Thread(target=listen, args=(port, stop, received))
        listener.start()
        cpu0 = playback.cpu_seconds(server.proc.pid)
        t0 = time.monotonic()
        while mpdtest.parse_pairs(c.command("status")).get("state") != "stop":
            time.sleep(0.05)
        wall = time.monotonic() - t0
        cpu1 = playback.cpu_seconds(server.proc.pid)
    stop.set()
    listener.join()
    results[key] = {"cpu": cpu1 - cpu0, "wall": wall, "bytes": received[0]}


def run(encoder: str, fermata: Path, mpd: Path, music: Path, decoders: list[str] | None = NO_MAD) -> dict:
    servers = {}
    ports = {}
    for key, binary, extra in (("mpd", mpd, decoders), ("fermata", fermata, decoders)):
        ports[key] = mpdtest.free_port()
        servers[key] = playback.start(
            f"httpd-{encoder}-{key}", binary, music,
            [{"type": "httpd", "name": "Bench", "bind_to_address": mpdtest.HOST, "port": str(ports[key]),
              "mixer_type": "none", **ENCODERS[encoder]}], extra)
    results: dict = {}
    try:
        for server in servers.values():
            assert server.query('add "minute.mp3"') == b"OK\n"
        threads = [threading.Thread(target=measure, args=(servers[key], ports[key], results, key))
                   for key in servers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for server in servers.values():
            playback.stop(server)
    for key, figure in results.items():
        playback.log(f"{encoder} {key}: CPU {figure['cpu']:.2f} s in {figure['wall']:.1f} s, "
                     f"{figure['bytes']} bytes to the listener")
    return results


def write_results(lines: list[str]) -> None:
    playback.write_section("httpd", lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoders", default="lame,vorbis")
    ap.add_argument("--fermata", type=Path, default=HERE.parent / ".build" / "release" / "fermata")
    ap.add_argument("--mpd", type=Path, default=Path("/usr/bin/mpd"))
    ap.add_argument("--default-decoders", action="store_true",
                    help="each server's default MP3 decoder (mpd: libmad); implies --no-write")
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = ap.parse_args(argv)
    music = playback.make_music()
    rows = []
    for encoder in args.encoders.split(","):
        results = run(encoder, args.fermata, args.mpd, music, None if args.default_decoders else NO_MAD)
        ratio = results["fermata"]["cpu"] / max(results["mpd"]["cpu"], 0.01)
        print(f"httpd {encoder}: Fermata {results['fermata']['cpu']:.2f} s, mpd {results['mpd']['cpu']:.2f} s "
              f"CPU for 60 s: ratio {ratio:.2f}")
        rows.append(f"| `{encoder}` | {results['mpd']['cpu']:.2f} s | {results['fermata']['cpu']:.2f} s | "
                    f"{ratio:.2f} |")
    if not args.no_write and not args.default_decoders:
        write_results([
            f"Measured {datetime.date.today().isoformat()} by `benchmarks/httpd.py`: CPU time (user+system, all "
            f"threads) of playing {playback.SECONDS} s of MP3 through an `httpd` output with one listener, mpd "
            "and Fermata at the same time, both decoding with their `mpg123` plugin (libmad's disabled).",
            "",
            "| encoder | mpd | Fermata | Fermata/mpd |",
            "|---|---|---|---|",
            *rows,
        ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
