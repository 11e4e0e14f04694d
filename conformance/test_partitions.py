"""Partitions against mpd: `newpartition`, `partition`, `listpartitions`, `delpartition`, `moveoutput` with
mpd's names, limits and errors; each partition's own queue, player, modes, mixer and outputs (an output that
moved away shows as `plugin: dummy`); which idle events reach the clients of other partitions (mpd 0.23 raises
the player's state, crossfade/MixRamp, output switching, `moveoutput` and `partition` for every client, the
queue, its modes, `setvol`, `outputset`, `replay_gain_mode` and `subscription` for the partition's own);
messages stay within a partition; both partitions play at once.

Two null outputs, `One` with a software mixer and `Two` without; a small generated library. Each test starts
its own pair of servers (partitions live until a restart)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import mpdtest

#: (path, seconds)
SONGS = [("long one.mp3", 30), ("long two.mp3", 30), ("short.mp3", 2)]
OUTPUTS = [{"type": "null", "name": "One", "mixer_type": "software"}, {"type": "null", "name": "Two"}]


@pytest.fixture(scope="module")
def library() -> Path:
    root = Path(tempfile.mkdtemp(prefix="fermata-partitions-"))
    root.chmod(0o755)
    for index, (path, seconds) in enumerate(SONGS):
        wav = root / "tmp.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", str(wav), "synth", str(seconds), "sine",
                        str(400 + 50 * index), "vol", "0.2"], check=True)
        subprocess.run(["lame", "--quiet", "-b", "64", "--tt", Path(path).stem, str(wav), str(root / path)],
                       check=True)
        wav.unlink()
        os.utime(root / path, (1_600_000_000 + index, 1_600_000_000 + index))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pair(server_factory, library):
    return (server_factory("ref", music=library, outputs=OUTPUTS),
            server_factory("sut", music=library, outputs=OUTPUTS))


def _drop_progress(line: bytes):
    """What depends on how far playback got."""
    if re.match(rb"(bitrate|audio): ", line):
        return None
    return line


def _compare(pair, spec, case_id: str) -> None:
    ref, sut = pair
    case = mpdtest.make_case(spec, normalize=_drop_progress)
    mpdtest.compare(case, ref, sut, case_id)


def test_names_limits_and_errors(pair):
    _compare(pair, [("a", "listpartitions\nnewpartition p1\nnewpartition p1\nnewpartition bad/name\n"
                          "newpartition \"\"\nnewpartition a.b\nnewpartition Ok-_9\nlistpartitions\n"
                          "partition nope\npartition p1\nstatus\noutputs\ngetvol\nsetvol 50\nvolume +5\n"
                          "enableoutput 0\noutputset 0 x y\nplay\nstatus\npartition default\nstatus\n"
                          "delpartition default\ndelpartition zz\ndelpartition bad/name\ndelpartition p1\n"
                          "delpartition Ok-_9\nlistpartitions\nmoveoutput Nope\nmoveoutput One\n"
                          "newpartition\npartition\n")],
             "partition names, limits and errors")


def test_too_many_partitions(pair):
    lines = "".join(f"newpartition p{i}\n" for i in range(17))
    _compare(pair, [("a", lines + "listpartitions\n")], "at most 16 partitions")


#: mpd keeps a partition's mixer volume for a second (`MixerMemento`'s throttle of hardware mixers), even when
#: the outputs changed under it: the volume is read only after that.
SETTLE = 1.1


def _script(server, lines: list[str]) -> list[str]:
    """The replies to `lines` on one connection; `None` waits out mpd's volume cache."""
    out = []
    with server.connect() as c:
        for line in lines:
            if line is None:
                time.sleep(SETTLE)
                continue
            out.append(f"> {line}")
            out += c.command(line).decode().splitlines()
    return out


def test_moveoutput_both_ways(pair):
    ref, sut = pair
    lines = ["newpartition p1", "partition p1", "moveoutput One", "outputs", None, "status", "getvol",
             "setvol 40", "getvol", "moveoutput One", "partition default", "outputs", None, "status",
             "enableoutput 0", "outputs", "outputset 0 foo bar", "outputset 0 x/y bar", "disableoutput 0",
             "moveoutput One", "outputs", None, "status", "getvol", "partition p1", "outputs", None, "status",
             "enableoutput 0", "outputs", "moveoutput Two", "outputs", "partition default", "outputs", None,
             "status", "delpartition p1", "partition p1", "moveoutput One", "moveoutput Two",
             "partition default", "delpartition p1", "moveoutput Two", "outputs", "partition p1",
             "delpartition p1", "status"]
    assert _script(sut, lines) == _script(ref, lines)


def test_each_partition_has_its_own_queue_and_modes(pair):
    _compare(pair, [("a", "newpartition p1\npartition p1\nadd \"short.mp3\"\nrepeat 1\nrandom 1\n"
                          "single 1\nconsume 1\nreplay_gain_mode track\nplaylistinfo\nstatus\n"
                          "replay_gain_status\n"),
                    ("b", "add \"long one.mp3\"\nadd \"long two.mp3\"\nplaylistinfo\nstatus\n"
                          "replay_gain_status\ncrossfade 3\nstatus\n"),
                    ("a", "status\npartition default\nplaylistinfo\npartition p1\nclear\nstatus\n"),
                    ("b", "status\nplaylistinfo\n")],
             "queues and modes per partition")


def test_delpartition_in_each_state(pair):
    _compare(pair, [("a", "newpartition p1\nnewpartition p2\npartition p1\n"),
                    ("b", "delpartition p1\ndelpartition p2\nlistpartitions\nnewpartition p2\n"
                          "partition p2\nmoveoutput Two\n"),
                    ("a", "delpartition p2\npartition p2\n"),
                    ("b", "partition default\ndelpartition p2\nmoveoutput Two\ndelpartition p2\n"),
                    ("a", "partition default\ndelpartition p1\nlistpartitions\nstatus\n")],
             "delpartition with clients, with outputs, empty")


#: What one client of each partition does while the other waits in `idle`, one step at a time. (`play` itself
#: comes before: whether mpd's decoder start-up wakes a client a second time after `play` is a race in mpd.)
IDLE_STEPS = ["repeat 1", "add \"short.mp3\"", "replay_gain_mode album", "subscribe chan", "setvol 30",
              "crossfade 2", "mixrampdb -10", "mixrampdelay 1", "outputset 0 x y", "disableoutput 0",
              "enableoutput 0", "toggleoutput 0", "toggleoutput 0", "pause 1", "seekcur 3", "stop", "save pl",
              "newpartition p3", "moveoutput Two", "partition default", "partition p1"]


@pytest.mark.parametrize("who", ["other partition", "same partition"])
def test_idle_events_reach_the_clients_mpd_reaches(pair, who):
    """Each step on connection `a` (in p1, which has output One and plays), then `b` (idle in default, or in
    p1) says what reached it."""
    spec = [("a", "newpartition p1\npartition p1\nmoveoutput One\nadd \"long one.mp3\"\nplay\n")]
    if who == "same partition":
        spec.append(("b", "partition p1\n"))
    for step in IDLE_STEPS:
        spec += [("b", "idle\n"), ("a", step + "\n"), ("b", "noidle\n")]
    _compare(pair, spec, f"idle events, {who}")


def test_messages_stay_in_their_partition(pair):
    _compare(pair, [("a", "newpartition p1\nsubscribe c\n"),
                    ("b", "partition p1\nsubscribe c\nsubscribe d\nchannels\nsendmessage c hello\n"),
                    ("a", "channels\nreadmessages\nsendmessage d hi\nsendmessage c here\nreadmessages\n"),
                    ("b", "readmessages\n")],
             "channels and messages per partition")


def test_switching_marks_the_partition_events(pair):
    """`partition` marks playlist, player, mixer, output and options for the client's next `idle`."""
    _compare(pair, [("a", "newpartition p1\npartition p1\nidle\n"), ("a", "noidle\n"),
                    ("a", "partition p1\nidle\n"), ("a", "noidle\n")],
             "switching partitions marks its events")


def _status(connection) -> dict[str, str]:
    return mpdtest.parse_pairs(connection.command("status"))


def test_both_partitions_play_at_once(server_factory, library):
    """One in p1, Two in default: each plays its own song, and pausing one leaves the other playing."""
    sut = server_factory("sut", music=library, outputs=OUTPUTS)
    with sut.connect() as a, sut.connect() as b:
        for line in ("newpartition p1", "partition p1", "moveoutput One", 'add "long one.mp3"', "play"):
            assert a.command(line).endswith(b"OK\n"), line
        for line in ('add "long two.mp3"', "play"):
            assert b.command(line).endswith(b"OK\n"), line
        time.sleep(1.5)
        first = (_status(a), _status(b))
        assert [s["state"] for s in first] == ["play", "play"], first
        assert [s["partition"] for s in first] == ["p1", "default"]
        assert a.command("currentsong").count(b"file: long one.mp3") == 1
        assert b.command("currentsong").count(b"file: long two.mp3") == 1
        assert b.command("pause 1").endswith(b"OK\n")
        time.sleep(1.0)
        second = (_status(a), _status(b))
        assert second[0]["state"] == "play" and second[1]["state"] == "pause", second
        # p1 kept playing (its clock advanced), default stood still while paused.
        assert float(second[0]["elapsed"]) > float(first[0]["elapsed"]) + 0.5, (first, second)
        paused_at = float(second[1]["elapsed"])
        time.sleep(0.5)
        assert float(_status(b)["elapsed"]) == paused_at
        assert "error" not in second[0] and "error" not in second[1], second


def _outputs(connection) -> list[tuple[str, str, str]]:
    pairs = re.findall(rb"outputname: (.*)\nplugin: (.*)\noutputenabled: (.)", connection.command("outputs"))
    return [tuple(part.decode() for part in pair) for pair in pairs]


def test_partitions_survive_a_kill(server_factory, library, tmp_path):
    """SIGKILL while two partitions play: after the restart both play again with their queue, modes and
    outputs, each within a second of where it was (Fermata keeps the partitions beside the state file; the
    elapsed time alone is saved every `state_file_interval`, here 1 s); `mpd` still reads the state file,
    which holds the default partition alone."""
    import signal

    state = tmp_path / "state"
    sut = server_factory("sut", music=library, outputs=OUTPUTS, state_file=str(state), state_file_interval="1")
    with sut.connect() as a, sut.connect() as b:
        for line in ("newpartition p1", "newpartition p2", "partition p1", "moveoutput One",
                     'add "long one.mp3"', 'add "short.mp3"', "repeat 1", "play 0", "seekcur 10"):
            assert a.command(line).endswith(b"OK\n"), line
        for line in ('add "long two.mp3"', "play", "seekcur 4", "disableoutput 0"):
            assert b.command(line).endswith(b"OK\n"), line
        time.sleep(1.5)
        before = {"p1": (_status(a), a.command("playlistinfo"), _outputs(a)),
                  "default": (_status(b), b.command("playlistinfo"), _outputs(b))}
    os.killpg(sut.proc.pid, signal.SIGKILL)
    sut.proc.wait()
    killed = time.monotonic()
    sut.proc = None
    sut.start()
    restarted = time.monotonic()
    with sut.connect() as c:
        assert c.command("listpartitions") == b"partition: default\npartition: p1\npartition: p2\nOK\n"
        for name in ("p1", "default"):
            assert c.command(f"partition {name}").endswith(b"OK\n")
            status, queue, outputs = _status(c), c.command("playlistinfo"), _outputs(c)
            old_status, old_queue, old_outputs = before[name]
            assert queue == old_queue, name
            assert outputs == old_outputs, name
            for key in ("state", "song", "repeat", "playlistlength"):
                assert status.get(key) == old_status.get(key), (name, key, status, old_status)
            # Where it was at the kill, within the interval (and the timer's jitter), plus what it played since
            # the restart.
            lag = float(status["elapsed"]) - float(old_status["elapsed"])
            assert -1.1 <= lag <= 0.2 + (time.monotonic() - killed), (name, status["elapsed"], old_status["elapsed"])
    sut.stop()
    # mpd reads the same state file: the default partition's queue and outputs, nothing it complains about.
    # (Its database first: mpd restores the queue before a scan it starts would finish.)
    ref = server_factory("ref", music=library, outputs=OUTPUTS)
    ref.stop()
    ref.overrides["state_file"] = str(state)
    ref.start()
    with ref.connect() as c:
        assert c.command("playlistinfo").count(b"file: ") == 1
        assert b"file: long two.mp3" in c.command("playlistinfo")
        # One left the default partition (its dummy there was disabled, as mpd writes it); Two played on.
        assert _outputs(c) == [("One", "null", "0"), ("Two", "null", "1")]
    assert "state file" not in ref.log_tail().lower() or "error" not in ref.log_tail().lower(), ref.log_tail()
