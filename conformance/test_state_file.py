"""The state file (`state_file`): round trips with mpd, SIGKILL, failed writes.

Round trips: one server builds a state (a queue with priorities and a range, modes with
single oneshot, crossfade, MixRamp, a software volume, a disabled output, a paused position)
and is stopped with SIGTERM; the other reads the file and must show the same queue, status
and outputs.  mpd 0.23 writes oneshot as `single: 2`, which it cannot read back itself;
Fermata reads it.  Where mpd can read a file, both servers restore the same file and must
agree byte for byte (ids and the queue version included).

The songs here last several seconds (a library of its own), so a paused position is real.
"""

from __future__ import annotations

import os
import random
import re
import signal
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

import mpdtest
from mpdtest import arg

#: (path, title, seconds)
SONGS = [("a/one.mp3", "One", 6), ("a/two.mp3", "Two", 7), ("b/three.mp3", "Three", 6),
         ("b/four [x] ü.mp3", "Four", 8), ("five.mp3", "Five", 6)]
#: Status lines that depend on how far playback got (elapsed is compared with a tolerance).
PROGRESS = ("elapsed", "time", "bitrate", "audio")
#: How far apart two elapsed times may be: a restored pause may play a few milliseconds first.
ELAPSED_TOLERANCE = 0.3
#: Fermata's bound: the file never lags an acknowledged change by more than this (seconds).
MAXIMUM_LAG = 1.0


@pytest.fixture(scope="module")
def library() -> Path:
    # Outside pytest's private temporary tree, so that a server running as nobody can read it.
    root = Path(tempfile.mkdtemp(prefix="fermata-state-library-"))
    root.chmod(0o755)
    for index, (path, title, seconds) in enumerate(SONGS):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        wav = root / "tmp.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", str(wav), "synth", str(seconds), "sine",
                        str(300 + 60 * index), "vol", "0.3"], check=True)
        subprocess.run(["lame", "--quiet", "-b", "128", "--tt", title, "--ta", "State Test", "--tl", "Album",
                        "--tn", str(index + 1), str(wav), str(target)], check=True)
        wav.unlink()
        os.utime(target, (1_600_000_000 + index, 1_600_000_000 + index))
    yield root
    shutil.rmtree(root, ignore_errors=True)


#: The servers' outputs: two null outputs (with the software mixer set for the whole server).
OUTPUTS = [{"type": "null", "name": "Null Output"}, {"type": "null", "name": "Second Output"}]


def _binary(kind: str) -> Path:
    binary = mpdtest.sut_binary() if kind == "sut" else mpdtest.ref_binary()
    if kind == "sut" and not binary.exists():
        pytest.skip(f"system under test not found: {binary}")
    return binary


def _server(kind: str, music: Path, workdir: Path, state_file: Path | None, **settings) -> mpdtest.Server:
    """A server whose database file already exists (both servers restore the state file before any
    update they start would finish)."""
    base = {"mixer_type": "software", "db_file": str(workdir / "database")}
    base.update(settings)
    server = mpdtest.Server(kind, _binary(kind), music, workdir, base)
    server.outputs = OUTPUTS
    if not (workdir / "database").exists():
        server.start(songs_hint=len(SONGS))
        server.stop()
    if state_file is not None:
        server.overrides["state_file"] = str(state_file)
    return server


def _send(server: mpdtest.Server, lines: list[str]) -> None:
    with server.connect() as c:
        for line in lines:
            reply = c.command(line)
            assert reply.endswith(b"OK\n"), (line, reply, server.log_tail())


def _build(server: mpdtest.Server, single: str = "oneshot", state: str = "pause") -> None:
    """The state every round trip saves."""
    with server.connect() as c:
        ids = []
        for path, _, _ in SONGS:
            reply = c.command(f"addid {arg(path)}")
            ids.append(int(re.search(rb"Id: (\d+)", reply).group(1)))
    lines = ["prio 7 2", "prio 200 4", f"rangeid {ids[1]} 1.5:4", "repeat 1", "consume 0",
             f"single {single}", "crossfade 3", "mixrampdb -12.5", "mixrampdelay 2", "setvol 42",
             "disableoutput 1"]
    if state == "stop":
        lines += ["play 3", "stop"]
    else:
        lines += ["seek 3 2.25", "pause 1"]
    _send(server, lines)


def _snapshot(server: mpdtest.Server) -> dict:
    with server.connect() as c:
        queue = c.command("playlistinfo")
        status = c.command("status")
        outputs = c.command("outputs")
    pairs = mpdtest.parse_pairs(status)
    elapsed = float(pairs.get("elapsed", "0"))
    kept = b"\n".join(line for line in status.split(b"\n") if line.split(b": ")[0].decode() not in PROGRESS)
    return {"queue": queue, "status": kept, "outputs": outputs, "elapsed": elapsed}


def _without_ids(snapshot: dict) -> dict:
    """Ids and the queue version differ between a server that built the queue and one that restored it."""
    out = dict(snapshot)
    for key in ("queue", "status"):
        out[key] = re.sub(rb"(?m)^(Id|songid|nextsongid|playlist): \d+$", rb"\1: -", snapshot[key])
    return out


def _assert_same(a: dict, b: dict) -> None:
    assert abs(a["elapsed"] - b["elapsed"]) <= ELAPSED_TOLERANCE, (a["elapsed"], b["elapsed"])
    for key in ("queue", "status", "outputs"):
        assert a[key].decode() == b[key].decode(), key


def _round_trip(writer: str, reader: str, library: Path, tmp_path: Path, **build) -> tuple[dict, dict, str]:
    state = tmp_path / "state"
    first = _server(writer, library, tmp_path / writer, state)
    first.start()
    try:
        _build(first, **build)
        time.sleep(0.2)
        before = _snapshot(first)
    finally:
        assert first.stop() in (0, -signal.SIGTERM), first.log_tail()
    text = state.read_text()
    second = _server(reader, library, tmp_path / reader, state)
    second.start()
    try:
        after = _snapshot(second)
    finally:
        second.stop()
    return before, after, text


@pytest.mark.parametrize("writer,reader", [("ref", "sut"), ("sut", "ref")])
def test_round_trip(library, tmp_path, writer, reader):
    """A paused state with single oneshot, written by one server on SIGTERM, read by the other."""
    before, after, text = _round_trip(writer, reader, library, tmp_path)
    # mpd writes oneshot as a number it cannot parse; Fermata writes the name, which mpd parses.
    assert ("single: 2\n" if writer == "ref" else "single: oneshot\n") in text
    assert b"state: pause" in before["status"] and b"single: oneshot" in before["status"]
    assert abs(before["elapsed"] - 2.25) <= ELAPSED_TOLERANCE
    _assert_same(_without_ids(before), _without_ids(after))


@pytest.mark.parametrize("writer,reader", [("ref", "sut"), ("sut", "ref")])
def test_round_trip_stopped(library, tmp_path, writer, reader):
    """A stopped queue keeps its current song."""
    before, after, text = _round_trip(writer, reader, library, tmp_path, single="1", state="stop")
    assert "state: stop\ncurrent: 3\n" in text
    _assert_same(_without_ids(before), _without_ids(after))


@pytest.mark.parametrize("variant", ["paused", "stopped", "playing, restore_paused"])
def test_both_restore_the_same_file(library, tmp_path, variant):
    """mpd and Fermata restore one file (written by mpd) to the same queue, ids and version included."""
    state = tmp_path / "state"
    writer = _server("ref", library, tmp_path / "writer", state)
    writer.start()
    try:
        _build(writer, single="1", state="stop" if variant == "stopped" else "pause")
    finally:
        writer.stop()
    text = state.read_text()
    settings = {}
    if variant.startswith("playing"):
        text = text.replace("state: pause\n", "state: play\n")
        settings["restore_paused"] = "yes"
    snapshots = []
    for kind in ("ref", "sut"):
        copy = tmp_path / f"state-{kind}"
        copy.write_text(text)
        server = _server(kind, library, tmp_path / kind, copy, **settings)
        server.start()
        try:
            snapshots.append(_snapshot(server))
        finally:
            server.stop()
    _assert_same(*snapshots)
    assert (b"state: stop" if variant == "stopped" else b"state: pause") in snapshots[1]["status"]


# ---------------------------------------------------------------------------
# SIGKILL

CRASH_ROUNDS = int(os.environ.get("CONFORMANCE_CRASH_ROUNDS", "50"))
STICKER_SONGS = [path for path, _, _ in SONGS[:3]]


def _queue_state(reply: bytes) -> tuple:
    """The queue (URIs with priorities) and the modes, from `playlistinfo` and `status` replies."""
    queue = []
    for line in reply.decode().splitlines():
        if line.startswith("file: "):
            queue.append((line[6:], 0))
        elif line.startswith("Prio: "):
            queue[-1] = (queue[-1][0], int(line[6:]))
    status = mpdtest.parse_pairs(reply)
    return tuple(queue), tuple(status[k] for k in ("repeat", "random", "single", "consume"))


STATE_QUERY = "playlistinfo\nstatus\n"


def _read_queue_state(server: mpdtest.Server) -> tuple:
    with server.connect() as c:
        return _queue_state(c.command("command_list_begin\n" + STATE_QUERY + "command_list_end"))


def _applied(state: tuple, line: str) -> tuple:
    """The queue state after `line` (the player stays stopped, so consume and single change nothing)."""
    queue, modes = list(state[0]), list(state[1])
    words = line.split(" ", 1)
    if words[0] == "add":
        queue.append((words[1].strip('"').replace('\\"', '"'), 0))
    elif words[0] == "delete":
        del queue[int(words[1])]
    elif words[0] == "move":
        a, b = map(int, words[1].split())
        queue.insert(b, queue.pop(a))
    elif words[0] == "prio":
        priority, position = map(int, words[1].split())
        queue[position] = (queue[position][0], priority)
    elif words[0] in ("repeat", "random", "single", "consume"):
        modes[("repeat", "random", "single", "consume").index(words[0])] = words[1]
    return tuple(queue), tuple(modes)


def _durable_state(server: mpdtest.Server) -> tuple[dict, dict]:
    """Stored playlists and stickers."""
    playlists = {}
    with server.connect() as c:
        for line in c.command("listplaylists").decode().splitlines():
            if line.startswith("playlist: "):
                name = line[10:]
                reply = c.command(f"listplaylist {arg(name)}").decode()
                playlists[name] = [x[6:] for x in reply.splitlines() if x.startswith("file: ")]
        stickers = {}
        reply = c.command('sticker find song "" rating').decode()
        uri = None
        for line in reply.splitlines():
            if line.startswith("file: "):
                uri = line[6:]
            elif line.startswith("sticker: rating="):
                stickers[uri] = line[len("sticker: rating="):]
    return playlists, stickers


def _mutation(rng: random.Random, queue_length: int, durable: tuple[dict, dict]) -> tuple[str, object]:
    """A random change: (line, durable state after it, or None when it changes only the queue or modes)."""
    playlists, stickers = durable
    choice = rng.random()
    if choice < 0.15:
        uri = rng.choice(STICKER_SONGS)
        value = str(rng.randrange(1000))
        return f"sticker set song {arg(uri)} rating {value}", (playlists, {**stickers, uri: value})
    if choice < 0.3:
        name = rng.choice(["p", "q [1]"])
        uri = rng.choice(SONGS)[0]
        return f"playlistadd {arg(name)} {arg(uri)}", ({**playlists, name: playlists.get(name, []) + [uri]},
                                                      stickers)
    if choice < 0.35 and playlists:
        name = rng.choice(sorted(playlists))
        return f"rm {arg(name)}", ({k: v for k, v in playlists.items() if k != name}, stickers)
    if choice < 0.55 or queue_length == 0:
        return f"add {arg(rng.choice(SONGS)[0])}", None
    if choice < 0.65:
        return f"delete {rng.randrange(queue_length)}", None
    if choice < 0.72:
        return f"move {rng.randrange(queue_length)} {rng.randrange(queue_length)}", None
    if choice < 0.8:
        return f"prio {rng.randrange(256)} {rng.randrange(queue_length)}", None
    mode = rng.choice(["repeat", "random", "consume", "single"])
    return f"{mode} {rng.choice(['0', '1'] + (['oneshot'] if mode == 'single' else []))}", None


def _crash_client(port: int, rng: random.Random, record: dict) -> None:
    """Changes until the connection dies, each in a command list with the queue state after it.
    `record` gets the history of [queue state, time the next change was sent], the durable state
    acknowledged, and the change in flight (its durable and queue states)."""
    try:
        c = mpdtest.LineClient(port)
    except OSError:
        return
    try:
        queue_state = _queue_state(c.command("command_list_begin\n" + STATE_QUERY + "command_list_end"))
        record["history"].append([queue_state, None])
        while True:
            line, durable_after = _mutation(rng, len(queue_state[0]), record["durable"])
            record["in_flight"] = (durable_after, _applied(queue_state, line) if durable_after is None else None)
            record["history"][-1][1] = time.monotonic()
            reply = c.command("command_list_begin\n" + line + "\n" + STATE_QUERY + "command_list_end")
            assert reply.endswith(b"OK\n"), (line, reply)
            if durable_after is not None:
                record["durable"] = durable_after
            record["in_flight"] = None
            queue_state = _queue_state(reply)
            record["history"].append([queue_state, None])
    except (OSError, ValueError):
        return
    finally:
        c.close()


def test_crash_keeps_what_was_acknowledged(library, tmp_path):
    """50 rounds of random changes and a SIGKILL at a random moment: stored playlists and stickers are
    exactly what was acknowledged (or with the change in flight); the queue and modes are a state that
    was current within the last second before the kill (or the change in flight)."""
    rng = random.Random(int(os.environ.get("CONFORMANCE_SEED", "11")))
    server = _server("sut", library, tmp_path / "sut", tmp_path / "state")
    durable: list = [({}, {})]
    allowed_queues = None
    writes_seen = 0
    for number in range(CRASH_ROUNDS + 1):
        server.start()
        restored = _read_queue_state(server)
        assert allowed_queues is None or restored in allowed_queues, f"round {number}: queue {restored}"
        on_disk = _durable_state(server)
        assert on_disk in durable, f"round {number}: playlists and stickers {on_disk}"
        if number == CRASH_ROUNDS:
            server.stop()
            break
        writes_seen += restored != (tuple(), ("0", "0", "0", "0"))
        record = {"history": [], "durable": on_disk, "in_flight": None}
        worker = threading.Thread(target=_crash_client, args=(server.port, rng, record))
        worker.start()
        time.sleep(rng.uniform(0.1, 1.6))
        killed = time.monotonic()
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait()
        worker.join(timeout=10)
        assert not worker.is_alive(), "the client did not notice the kill"
        server.proc = None
        durable = [record["durable"]]
        in_flight = record["in_flight"]
        if in_flight is not None and in_flight[0] is not None:
            durable.append(in_flight[0])
        # Each state lasted from its acknowledgement until the next change was sent (or the kill).
        allowed_queues = {state for state, next_sent in record["history"]
                          if next_sent is None or next_sent >= killed - MAXIMUM_LAG}
        if in_flight is not None and in_flight[1] is not None:
            allowed_queues.add(in_flight[1])
        if not record["history"]:
            allowed_queues = {restored}
    # The rounds did reach the disk (not only an empty queue every time).
    assert writes_seen > CRASH_ROUNDS // 3


# ---------------------------------------------------------------------------
# Failed writes

def _failed_write(server: mpdtest.Server, state: Path, break_it, repair) -> None:
    server.start()
    try:
        _send(server, [f"add {arg(SONGS[0][0])}", "repeat 1"])
        assert mpdtest.wait_until(lambda: state.exists() and "repeat: 1" in state.read_text(), 5)
        previous = state.read_bytes()
        break_it()
        try:
            _send(server, [f"add {arg(SONGS[1][0])}", "random 1"])
            assert mpdtest.wait_until(lambda: b"cannot write state file" in server.log_path.read_bytes(), 5), \
                server.log_tail()
            assert state.read_bytes() == previous
            assert server.query("ping") == b"OK\n"
        finally:
            repair()
        # The next change is written again.
        _send(server, ["consume 1"])
        assert mpdtest.wait_until(lambda: "consume: 1" in state.read_text(), 5)
        assert "random: 1" in state.read_text()
    finally:
        server.stop()


def test_read_only_directory_keeps_the_previous_file(library):
    """A directory the server may not write to: the write fails, is logged, the old file stays."""
    work = Path(tempfile.mkdtemp(prefix="fermata-state-readonly-"))
    try:
        work.chmod(0o755)
        directory = work / "statedir"
        directory.mkdir()
        state = directory / "state"
        server = _server("sut", library, work / "sut", state)
        if os.geteuid() == 0:
            # Root writes anywhere: run as nobody so the directory's mode counts.
            import pwd
            nobody = pwd.getpwnam("nobody")
            server.run_as = (nobody.pw_uid, nobody.pw_gid)
            os.chown(directory, *server.run_as)
        _failed_write(server, state, lambda: directory.chmod(0o555), lambda: directory.chmod(0o755))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_full_disk_keeps_the_previous_file(library, tmp_path):
    """A full file system (a small tmpfs): the write fails, is logged, the old file stays."""
    directory = tmp_path / "tmpfs"
    directory.mkdir()
    mounted = subprocess.run(["mount", "-n", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(directory)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        state = directory / "state"
        server = _server("sut", library, tmp_path / "sut", state)
        filler = directory / "filler"

        def fill():
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                while True:
                    os.write(fd, b"\0" * 512)
            except OSError:
                pass
            finally:
                os.close(fd)

        _failed_write(server, state, fill, lambda: filler.unlink())
    finally:
        subprocess.run(["umount", "-n", str(directory)], check=True)
