"""The recorder output (`type "recorder"`): mpd and Fermata play the same songs to a recorder output each, and the
files they write are compared byte for byte: `path` with the wave and flac encoders (deterministic, unlike Ogg
streams, whose serial numbers are random), and `format_path` (a file per song, named from its tags through a tag
template with groups and alternatives); the file named only once complete; the block's errors at start-up. About 15 s.
"""

from __future__ import annotations

import subprocess
import time
import wave
from pathlib import Path

import pytest

import mpdtest

KINDS = ("ref", "sut")


def _songs(server, count: int, one_format: bool = False) -> list[str]:
    """The first `count` songs with plain ASCII names (the library has names that are not UTF-8 too) that decode
    (not the library's broken files: for a song whose decoder fails before any audio, mpd's recorder still
    gets the song's tag and writes a file of the encoder's header alone, and Fermata's writes none); with
    `one_format`, only songs of the first one's `Format:`."""
    songs: list[tuple[str, bytes]] = []
    for line in server.query("listallinfo").splitlines():
        if line.startswith(b"file: "):
            songs.append((line[6:].decode("utf-8", "replace"), b"") if line.isascii() else ("", b""))
        elif line.startswith(b"Format: ") and songs:
            songs[-1] = (songs[-1][0], line[8:])
    files = [(name, fmt) for name, fmt in songs if name and '"' not in name and "roken" not in name]
    if one_format and files:
        files = [(name, fmt) for name, fmt in files if fmt == files[0][1]]
    assert len(files) >= count, files
    return [name for name, _ in files[:count]]


def _play_all(server, songs: list[str]) -> None:
    adds = "".join(f'add "{song}"\n' for song in songs)
    assert server.query(f"command_list_begin\nclear\n{adds}play\ncommand_list_end\n") == b"OK\n", server.label
    assert mpdtest.wait_until(lambda: b"\nstate: stop\n" in server.query("status"), mpdtest.scaled(60)), \
        (server.label, server.query("status"))


@pytest.mark.parametrize("encoder", [{"encoder": "wave"}, {"encoder": "flac", "compression": "3"}])
def test_path_records_what_is_played_as_mpd(server_factory, tmp_path, encoder):
    files = {}
    outputs = {}
    for kind in KINDS:
        target = tmp_path / f"{kind}.rec"
        server = server_factory(kind, outputs=[{"type": "recorder", "name": "Tape", "path": str(target),
                                                **encoder}])
        outputs[kind] = server.query("outputs")
        _play_all(server, _songs(server, 2))
        server.stop()
        assert target.exists(), server.log_tail()
        files[kind] = target.read_bytes()
        (tmp_path / f"{kind}.keep").write_bytes(files[kind])
    assert outputs["sut"] == outputs["ref"]
    assert outputs["ref"] == b"outputid: 0\noutputname: Tape\nplugin: recorder\noutputenabled: 1\nOK\n"
    assert len(files["ref"]) > 100_000
    assert files["sut"] == files["ref"]


def _wait_closed(server, root: Path) -> None:
    """Waits (up to 5 s) until the server holds no file under `root` open: once the queue has ended, `status` says
    `stop` before the output is closed (mpd's player stops, then its main thread closes the outputs), and a
    `format_path` recording is named only when closed (mpd writes it through an unnamed O_TMPFILE). Stopping the
    server in between may be what once left mpd's last song unnamed (CI-41: Fermata had `Folding - 4 -
    istanbul.wav`, mpd did not; not reproduced in 11 runs, so a guess, which costs nothing where the servers
    have closed the output already, as they had in all of those runs)."""
    mpdtest.wait_until(
        lambda: not any(path.startswith(f"{root}/") for path in mpdtest.open_paths(server.proc.pid)), 5, interval=0.05)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_format_path_writes_a_file_per_song_named_from_its_tags_as_mpd(server_factory, tmp_path):
    trees = {}
    for kind in KINDS:
        root = tmp_path / kind
        root.mkdir()
        template = f"{root}/[%genre%|%artist%] - [%track% - ]%title%[ (%nosuchtag%)].wav"
        server = server_factory(kind, outputs=[{"type": "recorder", "name": "Tape", "format_path": template,
                                                "encoder": "wave"}])
        # Songs of one format: where the format changes between songs, mpd's recorder under load has begun the
        # next song's file with the previous format's header (seen once: a stereo song's WAV header said mono).
        _play_all(server, _songs(server, 3, one_format=True))
        _wait_closed(server, root)
        server.stop()
        trees[kind] = _tree(root)
    assert len(trees["ref"]) >= 1, trees["ref"].keys()
    assert sorted(trees["sut"]) == sorted(trees["ref"])
    for name in trees["ref"]:
        assert trees["sut"][name] == trees["ref"][name], name


@pytest.fixture(scope="module")
def untagged_music(tmp_path_factory) -> Path:
    """Three FLAC songs of one format: tagged, without any tag, tagged."""
    root = tmp_path_factory.mktemp("recorder-untagged")
    for name, seconds, tags in (("1.flac", "0.5", ["--tag=ARTIST=Band", "--tag=TITLE=One"]), ("2.flac", "0.4", []),
                                ("3.flac", "0.3", ["--tag=ARTIST=Band", "--tag=TITLE=Three"])):
        wav = root / f"{name}.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wav), "synth", seconds, "sine", "440"],
                       check=True, timeout=60)
        subprocess.run(["flac", "-s", "-f", *tags, "-o", str(root / name), str(wav)], check=True, timeout=60)
        wav.unlink()
    return root


@pytest.mark.parametrize("setting", ["format_path", "path"])
def test_a_song_without_tags_gets_an_empty_tag_as_in_mpd(server_factory, tmp_path, untagged_music, setting):
    """mpd hands every output the tag of a local file as it starts, an empty one when the file has none: with
    `format_path` the untagged song gets a file of its own (`%artist%-%title%` names it `-`), and an Ogg Vorbis
    `path` chains a logical stream for each song, the untagged one too (its serial numbers are random: the pages'
    beginning-of-stream flags are compared)."""
    seen = {}
    for kind in KINDS:
        root = tmp_path / kind
        root.mkdir()
        block = ({"format_path": f"{root}/%artist%-%title%.wav", "encoder": "wave"} if setting == "format_path"
                 else {"path": f"{root}/all.ogg", "encoder": "vorbis"})
        server = server_factory(kind, music=untagged_music, outputs=[{"type": "recorder", "name": "Tape", **block}])
        _play_all(server, ["1.flac", "2.flac", "3.flac"])
        _wait_closed(server, root)
        server.stop()
        tree = _tree(root)
        seen[kind] = tree if setting == "format_path" else _ogg_streams(tree["all.ogg"])
    if setting == "format_path":
        assert sorted(seen["ref"]) == ["-.wav", "Band-One.wav", "Band-Three.wav"], sorted(seen["ref"])
    else:
        assert seen["ref"] == 4, seen["ref"]
    assert seen["sut"] == seen["ref"]


def _ogg_streams(data: bytes) -> int:
    """How many logical streams an Ogg file chains (pages with the beginning-of-stream flag)."""
    count = 0
    at = data.find(b"OggS")
    while at >= 0:
        count += data[at + 5] & 2 == 2
        at = data.find(b"OggS", at + 27)
    return count


@pytest.fixture(scope="module")
def long_music(tmp_path_factory) -> Path:
    """A 10 s song (the library's are a few seconds at most)."""
    root = tmp_path_factory.mktemp("recorder-music")
    with wave.open(str(root / "long.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(bytes(range(256)) * (44100 * 4 * 10 // 256))
    return root


def test_the_file_is_named_only_once_complete_as_mpd(server_factory, tmp_path, long_music):
    """Beside a null output that plays in real time, stopped after a second: the file shows only once it is whole
    (its size when first seen is its final size). mpd names it when the outputs close (at `stop`); Fermata's
    recorder, which is not paced, closes its stream as soon as it has written the end of the queue, so its file
    shows earlier, whole."""
    seen = {}
    for kind in KINDS:
        target = tmp_path / f"{kind}.wav"
        server = server_factory(kind, music=long_music, outputs=[{"type": "null", "name": "Clock"},
                                                                 {"type": "recorder", "name": "Tape",
                                                                  "path": str(target), "encoder": "wave"}])
        server.query('command_list_begin\nclear\nadd "long.wav"\nplay\ncommand_list_end\n')
        sizes = []

        def shows() -> bool:
            try:
                sizes.append(target.stat().st_size)
                return True
            except FileNotFoundError:
                if server.query("status").find(b"\nelapsed: 1.") >= 0:
                    server.query("stop")
                return False
        assert mpdtest.wait_until(shows, mpdtest.scaled(15), interval=0.001), (kind, server.log_tail())
        server.stop()
        seen[kind] = (sizes[0], target.stat().st_size, target.read_bytes()[:4])
    # What each holds differs: mpd's player keeps every output within 64 chunks of the slowest, so its file
    # ends about 1.5 s past the stop; Fermata's recorder reads the decoded audio as fast as it comes (README).
    for kind in KINDS:
        first, final, magic = seen[kind]
        assert first == final and first > 44 and magic == b"RIFF", (kind, seen)


@pytest.mark.parametrize("block,message", [
    ({"encoder": "wave"}, "'path' not configured"),
    ({"path": "/tmp/x.wav", "format_path": "/tmp/%title%"}, "Cannot have both 'path' and 'format_path'"),
    ({"path": "rel.wav", "encoder": "wave"}, "not an absolute path: rel.wav"),
    ({"path": "/tmp/x.wav", "encoder": "nosuch"}, "No such encoder: nosuch"),
], ids=["no-path", "both", "relative", "no-such-encoder"])
def test_a_bad_block_stops_the_start_as_in_mpd(tmp_path, block, message):
    body = ['bind_to_address "127.0.0.1"', f'port "{mpdtest.free_port()}"', 'zeroconf_enabled "no"',
            "audio_output {", '  type "recorder"', '  name "r"', *(f'  {k} "{v}"' for k, v in block.items()), "}"]
    config = tmp_path / "bad.conf"
    config.write_text("\n".join(body) + "\n")
    ours = subprocess.run([str(mpdtest.sut_binary()), str(config)], capture_output=True, text=True, timeout=20)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                            capture_output=True, text=True, timeout=20)
    assert ours.returncode == theirs.returncode == 1
    assert theirs.stderr.strip().splitlines()[-1] == f"exception: Failed to configure output in line 4; {message}"
    assert ours.stderr.strip().splitlines()[-1] == \
        f"fermata: {config}:4: Failed to configure output in line 4; {message}"


@pytest.fixture(scope="module")
def tagged_music(tmp_path_factory) -> Path:
    """Two 4 s FLAC songs titled One and Two (different tones)."""
    root = tmp_path_factory.mktemp("recorder-tagged")
    for name, title, tone in (("1.flac", "One", "440"), ("2.flac", "Two", "660")):
        wav = root / f"{name}.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wav), "synth", "4", "sine", tone],
                       check=True, timeout=60)
        subprocess.run(["flac", "-s", "-f", f"--tag=TITLE={title}", "-o", str(root / name), str(wav)], check=True,
                       timeout=60)
        wav.unlink()
    return root


def _pause_and_resume(server) -> float:
    """Plays 1.flac and 2.flac, pauses after a second and a half heard, resumes, waits for the end; returns the
    elapsed time the pause showed."""
    assert server.query('command_list_begin\nclear\nadd "1.flac"\nadd "2.flac"\nplay\ncommand_list_end\n') == b"OK\n"

    def elapsed() -> float:
        for line in server.query("status").splitlines():
            if line.startswith(b"elapsed: "):
                return float(line[9:])
        return 0.0
    assert mpdtest.wait_until(lambda: elapsed() >= 1.5, mpdtest.scaled(10)), server.log_tail()
    assert server.query("pause 1") == b"OK\n"
    paused = elapsed()
    time.sleep(0.3)
    assert server.query("pause 0") == b"OK\n"
    assert mpdtest.wait_until(lambda: b"\nstate: stop\n" in server.query("status"), mpdtest.scaled(20)), \
        server.log_tail()
    return paused


def test_a_pause_closes_the_recorder_and_the_resume_writes_path_anew_as_mpd(server_factory, tmp_path, tagged_music):
    """Beside a null output that plays in real time, with a buffer of 256 KiB (1.5 s: Fermata's recorder, unpaced,
    writes all that is decoded, where mpd's keeps within 64 chunks of the slowest output; README), as mpd's recorder
    (no pause mode): the pause closes the output
    (its file is complete), the resume opens it again, which replaces `path` with a file recorded from where the
    pause was heard (the head of mpd's pipe: where the slowest output stood) to the end. The two servers pause at
    slightly different places: each file is as long as what was left to hear, and the shorter is the end of the
    longer."""
    audio = {}
    for kind in KINDS:
        target = tmp_path / f"{kind}.wav"
        server = server_factory(kind, music=tagged_music, audio_buffer_size="256", outputs=[
            {"type": "null", "name": "Clock"},
            {"type": "recorder", "name": "Tape", "path": str(target), "encoder": "wave"}])
        paused = _pause_and_resume(server)
        _wait_closed(server, tmp_path)
        server.stop()
        data = target.read_bytes()
        assert data[:4] == b"RIFF", kind
        audio[kind] = data[44:]
        recorded = len(audio[kind]) / (44100 * 4)
        assert abs(recorded - (8 - paused)) < 0.2, (kind, recorded, paused)
    shorter, longer = sorted(audio.values(), key=len)
    assert longer.endswith(shorter)


def test_a_pause_closes_a_format_path_recording_until_the_next_song_as_mpd(server_factory, tmp_path,
                                                                           tagged_music):
    """`format_path` beside a null output, with a buffer of 256 KiB: the pause closes the song's file, and the
    resume records nothing more of that song (mpd hands an output a tag only with the chunk that starts a song or
    title): One.wav is what was written up to the pause, from the song's start; Two.wav is the whole next song."""
    trees = {}
    for kind in KINDS:
        root = tmp_path / kind
        root.mkdir()
        server = server_factory(kind, music=tagged_music, audio_buffer_size="256", outputs=[
            {"type": "null", "name": "Clock"},
            {"type": "recorder", "name": "Tape", "format_path": f"{root}/%title%.wav", "encoder": "wave"}])
        _pause_and_resume(server)
        _wait_closed(server, root)
        server.stop()
        trees[kind] = _tree(root)
    assert sorted(trees["ref"]) == sorted(trees["sut"]) == ["One.wav", "Two.wav"]
    assert trees["sut"]["Two.wav"] == trees["ref"]["Two.wav"]
    assert len(trees["ref"]["Two.wav"]) == 44 + 4 * 44100 * 4
    ones = sorted((trees[kind]["One.wav"] for kind in KINDS), key=len)
    from_the_start = ones[1].startswith(ones[0])
    assert len(ones[0]) > 44 + 44100 * 4 and from_the_start, ([len(one) for one in ones], from_the_start)
