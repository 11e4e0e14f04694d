"""Differential cases shared by the per-format tests (test_format_*.py) on the multi-format library.

Each format has a directory of its own in the library (tools/fixtures/<name>.py makes it); these
helpers compare mpd and the system under test on one directory: browsing, searching, listing,
counting, readcomments, readpicture, the queue, and status after play and seek.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

import audiofiles
import mpdtest
from mpdtest import arg, make_case

AUDIO_SUFFIXES = {".flac", ".oga", ".ogg", ".opus", ".wav", ".aif", ".aiff", ".au", ".m4a", ".mp4",
                  ".wv", ".wma", ".ape", ".mka", ".mp3", ".aac", ".caf", ".w64", ".voc", ".snd"}


def format_library(name: str, only: str = "") -> Path:
    """Builds (once, under a lock: parallel sessions share the cache) the multi-format library of
    tools/make-format-fixtures.py into the cache directory `name`, only the modules `only` names if given."""
    mpdtest.CACHE_DIR.mkdir(parents=True, exist_ok=True)
    out = mpdtest.CACHE_DIR / name
    with open(mpdtest.CACHE_DIR / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, str(mpdtest.REPO_ROOT / "tools" / "make-format-fixtures.py"), str(out),
                        "--quiet"] + (["--only", only] if only else []), check=True, timeout=900)
    return out


def run(pair, spec, name, **options):
    """Compares one case on the pair (skipped when the SUT lacks a command it uses)."""
    c = make_case(spec, replies="auto", **options)
    missing = mpdtest.missing_commands(c, pair.mpd_commands, pair.sut_commands)
    if missing and not os.environ.get("CONFORMANCE_NO_SKIP"):
        pytest.skip(f"the system under test does not list {', '.join(missing)} in `commands`")
    try:
        mpdtest.compare(c, pair.ref, pair.sut, name)
    except mpdtest.DifferentialMismatch as exc:
        pytest.fail(str(exc), pytrace=False)


def files(music: Path, directory: str) -> list[str]:
    """Every file under music/directory (URIs), audio or not, sorted by bytes."""
    root = Path(music) / directory
    return sorted((str(p.relative_to(music)) for p in root.rglob("*") if p.is_file()),
                  key=lambda s: s.encode())


def browse(pair, directory: str):
    """lsinfo, listall, listallinfo and listfiles of the directory."""
    d = arg(directory)
    run(pair, f"lsinfo {d}\nlistall {d}\nlistallinfo {d}\nlistfiles {d}\n", f"browse {directory}")


def search(pair, directory: str):
    """find/search by base, list of each tag and count grouped, all within the directory."""
    b = arg(directory)
    run(pair, f"find base {b}\nsearch base {b}\n", f"find base {directory}")
    run(pair, "".join(f"list {tag} base {b}\n" for tag in LISTED_TAGS), f"list in {directory}")
    run(pair, f"count base {b}\ncount group artist base {b}\n", f"count in {directory}")


#: Tags whose `list` output the per-format cases compare.
LISTED_TAGS = ("artist", "album", "albumartist", "title", "track", "disc", "date", "genre", "composer",
               "performer", "comment", "musicbrainz_trackid", "movement", "movementnumber", "albumartistsort")


def comments_and_pictures(pair, music: Path, directory: str):
    """readcomments and readpicture (offset 0, then a second chunk) of every file in the directory."""
    names = files(music, directory)
    run(pair, "".join(f"readcomments {arg(n)}\n" for n in names), f"readcomments in {directory}")
    run(pair, "binarylimit 1048576\n" + "".join(f"readpicture {arg(n)} 0\n" for n in names),
        f"readpicture in {directory}")
    run(pair, "binarylimit 64\n" + "".join(f"readpicture {arg(n)} 64\n" for n in names),
        f"readpicture second chunk in {directory}")


def state_after_playing(server, uri: str, keys=("state", "song", "elapsed", "error"),
                        timeout: float = 3) -> dict[str, str]:
    """Plays `uri` alone; the `keys` of status once it stopped (or after `timeout` s), then clears the error
    and the queue."""
    def status():
        return mpdtest.parse_pairs(server.query("status"))

    for line in ("clear", f"add {arg(uri)}", "play"):
        server.query(line)
    mpdtest.wait_until(lambda: status().get("state") == "stop", mpdtest.scaled(timeout))
    got = status()
    server.query("clearerror")
    server.query("clear")
    return {k: got.get(k, "") for k in keys}


def queue(pair, directory: str):
    """add of the directory, then playlistinfo of it. Ids and the queue version compare relative to each
    server's own (probed with the directory's first song), so an earlier case that queued songs on one
    server only cannot shift every later queue listing."""
    b = arg(directory)
    first = next((line[len(b"file: "):].decode() for line in pair.ref.query(f"listall {b}").splitlines()
                  if line.startswith(b"file: ")), None)
    options = {"queue": True, "probe_uri": first} if first is not None else {}
    run(pair, f"clear\nadd {b}\nplaylistinfo\nclear\n", f"queue {directory}", **options)


def decoder_entries(reply: bytes) -> dict[str, list[bytes]]:
    """A `decoders` reply as each plugin's lines (its `plugin:` line first), in the reply's order."""
    entries: dict[str, list[bytes]] = {}
    current = None
    for line in reply.splitlines():
        if line == b"OK":
            break
        if line.startswith(b"plugin: "):
            current = line[len(b"plugin: "):].decode()
            entries[current] = []
        if current is not None:
            entries[current].append(line)
    return entries


def decoders_match(pair, names) -> None:
    """`decoders` lists each named plugin with mpd's suffixes and MIME types, in mpd's relative order."""
    want = decoder_entries(pair.ref.query("decoders"))
    got = decoder_entries(pair.sut.query("decoders"))
    assert set(names) <= set(want), f"mpd lists no {set(names) - set(want)}"
    for name in names:
        assert got.get(name) == want[name], name
    order = [n for n in want if n in names]
    assert [n for n in got if n in names] == order


def play_status(server, uri: str, seek: float | None, playing_fields=("audio", "bitrate", "duration")) -> dict:
    """`playing_fields` of `status` while `uri` plays; then, paused (after `seekcur seek` when given), its
    state and duration, and the elapsed time after the seek."""
    audiofiles.commands(server, "clear", f'add "{uri}"', "play")
    if not mpdtest.wait_until(lambda: float(audiofiles.status_of(server).get("elapsed", 0)) > 0.05,
                              mpdtest.scaled(5)):
        pytest.fail(f"{server.label}: {uri} does not play", pytrace=False)
    playing = audiofiles.status_of(server)
    audiofiles.commands(server, "pause 1")
    if seek is not None:
        audiofiles.commands(server, f"seekcur {seek}")
    paused = audiofiles.status_of(server)
    audiofiles.commands(server, "stop", "clear")
    got = {k: playing.get(k) for k in playing_fields}
    got.update({k: paused.get(k) for k in ("state", "duration")})
    if seek is not None:
        got["elapsed"] = paused.get("elapsed")
    return got


def playing(server, uri: str) -> dict[str, str]:
    """Queues only `uri`, plays it, and returns `status` once it has played for 0.3 s."""
    import time
    with server.connect() as c:
        for line in ("clear", f'add "{uri}"', "play"):
            reply = c.command(line)
            assert not reply.startswith(b"ACK"), f"{server.label}: {line!r} -> {reply!r}"
    deadline = time.monotonic() + mpdtest.scaled(10)
    while time.monotonic() < deadline:
        s = mpdtest.parse_pairs(server.query("status"))
        if s.get("state") == "play" and "audio" in s and float(s.get("elapsed", "0")) > 0.3:
            return s
        time.sleep(0.05)
    pytest.fail(f"{server.label} did not start playing {uri}: {server.query('status')!r}", pytrace=False)
