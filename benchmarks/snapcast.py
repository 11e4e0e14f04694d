#!/usr/bin/python3
"""snapcast: CPU time of Fermata vs mpd playing one minute through a `fifo` output into a snapserver.

Usage (from the repository root, with Debian's Python):

    /usr/bin/python3 benchmarks/snapcast.py [--fermata .build/release/fermata] [--no-write]

mpd and Fermata each get the `fifo` output of the README's "Multi-room" section (`format "48000:16:2"`,
`mixer_type "software"`) and a snapserver of their own reading it (Debian's 0.26, started here with every port on
127.0.0.1 and no zeroconf, no control script, no clients: the server's side of the chain is what is measured);
both play the minute of MP3 that benchmarks/playback.py makes at the same time (the fifo is paced in real time,
so this takes a minute). The figure is the user+system CPU time of each server process from `play` to the end
of the queue, as a ratio Fermata/mpd in the same run; snapserver's own CPU time is shown beside it. Both
servers get the same decoder block, libmad's plugin disabled: both decode the MP3 with their `mpg123` plugin
(libmpg123, signed 16-bit samples). Both resample 44.1 to 48 kHz: once with
each server's default resampler (libsamplerate's Fastest Sinc Interpolator for both), once with
`resampler { plugin "soxr" quality "high" }` for both, so two minutes in all.
Writes the "Snapcast" section of benchmarks/RESULTS.md. Not part of `make test`; `make bench` runs it.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "conformance"))
sys.path.insert(0, str(HERE))

import mpdtest  # noqa: E402
import playback  # noqa: E402  (make_music, start, stop, cpu_seconds)
import snapserver as snapserver_setup  # noqa: E402

NO_MAD = ['decoder {', '    plugin "mad"', '    enabled "no"', '}']
#: libsoxr's high recipe for both (by default both resample with libsamplerate, as Debian's mpd).
SOXR = ['resampler {', '    plugin "soxr"', '    quality "high"', '}']


def snapserver(root: Path) -> subprocess.Popen:
    """A snapserver reading `root`/snapfifo, on loopback ports, zeroconf off (no system bus)."""
    config = root / "snapserver.conf"
    config.write_text(snapserver_setup.config(root, root / "snapfifo", host=mpdtest.HOST, name="Bench",
                                              tcp=mpdtest.free_port(), stream=mpdtest.free_port(),
                                              log_filter="*:warning"))
    env = snapserver_setup.environment(root)
    with open(root / "snapserver.log", "ab") as log:
        return subprocess.Popen(["snapserver", "-c", str(config)], stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


def measure(server: mpdtest.Server, reader: subprocess.Popen, results: dict, key: str) -> None:
    """CPU seconds of the server and of its snapserver for one play of the queue."""
    with server.connect() as c:
        cpu0, read0 = playback.cpu_seconds(server.proc.pid), playback.cpu_seconds(reader.pid)
        t0 = time.monotonic()
        assert c.command("play 0") == b"OK\n"
        while mpdtest.parse_pairs(c.command("status")).get("state") != "stop":
            if time.monotonic() - t0 > 2 * playback.SECONDS + 30:
                raise RuntimeError(f"{server.label}: still playing after {time.monotonic() - t0:.0f} s")
            time.sleep(0.05)
        wall = time.monotonic() - t0
        cpu1, read1 = playback.cpu_seconds(server.proc.pid), playback.cpu_seconds(reader.pid)
    results[key] = {"cpu": cpu1 - cpu0, "wall": wall, "snapserver": read1 - read0}


def run(fermata: Path, mpd: Path, music: Path, resampler: list[str]) -> dict:
    servers, readers, roots = {}, {}, {}
    results: dict = {}
    try:
        for key, binary, extra in (("mpd", mpd, NO_MAD + resampler), ("fermata", fermata, NO_MAD + resampler)):
            root = Path(tempfile.mkdtemp(prefix=f"fermata-bench-snapcast-{key}-"))
            roots[key] = root
            servers[key] = playback.start(
                f"snapcast-{key}", binary, music,
                [{"type": "fifo", "name": "Snapcast", "path": str(root / "snapfifo"), "format": "48000:16:2",
                  "mixer_type": "software"}], extra)
            readers[key] = snapserver(root)
            assert servers[key].query('add "minute.mp3"') == b"OK\n"
        time.sleep(1)  # both snapservers reading
        for key, reader in readers.items():
            if reader.poll() is not None:
                log = (roots[key] / "snapserver.log").read_text(errors="replace")
                raise RuntimeError(f"snapserver for {key} exited: {log[-2000:]}")
        threads = [threading.Thread(target=measure, args=(servers[key], readers[key], results, key))
                   for key in servers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for reader in readers.values():
            os.killpg(reader.pid, signal.SIGTERM)
            reader.wait(timeout=10)
        for server in servers.values():
            playback.stop(server)
        for root in roots.values():
            shutil.rmtree(root, ignore_errors=True)
    for key, figure in results.items():
        playback.log(f"snapcast {key}: CPU {figure['cpu']:.2f} s in {figure['wall']:.1f} s "
                     f"(its snapserver: {figure['snapserver']:.2f} s)")
    return results


def write_results(lines: list[str]) -> None:
    playback.write_section("Snapcast", lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fermata", type=Path, default=HERE.parent / ".build" / "release" / "fermata")
    ap.add_argument("--mpd", type=Path, default=Path("/usr/bin/mpd"))
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = ap.parse_args(argv)
    if shutil.which("snapserver") is None:
        print("snapserver is not installed (scripts/install-deps.sh test)", file=sys.stderr)
        return 1
    music = playback.make_music()
    rows = []
    for label, resampler in (("each server's default resampler", []), ('both `soxr` "high"', SOXR)):
        results = run(args.fermata, args.mpd, music, resampler)
        ratio = results["fermata"]["cpu"] / max(results["mpd"]["cpu"], 0.01)
        print(f"fifo to snapserver, {label}: Fermata {results['fermata']['cpu']:.2f} s, mpd "
              f"{results['mpd']['cpu']:.2f} s CPU for {playback.SECONDS} s: ratio {ratio:.2f}")
        rows.append(f"| {label} | {results['mpd']['cpu']:.2f} s | {results['fermata']['cpu']:.2f} s | "
                    f"**{ratio:.2f}** | {results['mpd']['snapserver']:.2f} s | "
                    f"{results['fermata']['snapserver']:.2f} s |")
    if not args.no_write:
        write_results([
            f"Measured {datetime.date.today().isoformat()} by `benchmarks/snapcast.py`: CPU time (user+system, all "
            f"threads) of playing {playback.SECONDS} s of MP3 (44.1 kHz) through a `fifo` output (`48000:16:2`, "
            "software mixer) into a snapserver of its own, mpd and Fermata at the same time, both decoding with "
            "their `mpg123` plugin (libmad's disabled); first with each server's default resampler "
            "(libsamplerate's Fastest Sinc Interpolator for both), then "
            "with `resampler { plugin \"soxr\" quality \"high\" }` for both.",
            "",
            "| resampler | mpd | Fermata | Fermata/mpd | mpd's snapserver | Fermata's snapserver |",
            "|---|---|---|---|---|---|",
            *rows,
        ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
