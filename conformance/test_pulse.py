"""The pulse output (`type "pulse"`) and its mixer, on a PulseAudio daemon the test starts itself (mpdtest's
`pulseaudio_daemon`: a Unix socket in a temporary directory, no network, no D-Bus, no autospawn).

Compared with mpd, each server on its own turn:
- the samples each server plays, recorded by a pipe sink (`module-pipe-sink`, 32-bit, so no sample is rounded)
  for 16-bit, 24-bit, mono and 5.1 songs, and the stream the server makes (`pactl`: its sample spec, its channel
  map, its name, client name and role);
- the `outputs` stanza, `status`'s `volume:` (the sink input's), `setvol`/`getvol` and the volume the server
  sets on the sink input, the `mixer` idle event when `pactl set-sink-input-volume` changes it, pause (the stream
  corked) and resume;
- a `sink` that does not exist and a dead `server` (what `status` and `outputs` say, the reason in the log).
About 30 s.
"""

from __future__ import annotations

import math
import re
import struct
import subprocess
import threading
import time
import wave
from pathlib import Path

import pytest

import mpdtest

KINDS = ("ref", "sut")


@pytest.fixture
def pulse(tmp_path):
    with mpdtest.pulseaudio_daemon(tmp_path / "pulse") as socket:
        yield socket


def _wav(path: Path, seconds: float, channels: int, width: int, rate: int = 44100) -> None:
    """A song with no silent frame (so that the silence a sink plays between writes can be told apart)."""
    top = (1 << (8 * width - 1)) - 1
    frames = bytearray()
    for i in range(int(seconds * rate)):
        for c in range(channels):
            value = int(top * 0.4 * math.sin((i + 1) * (0.013 + 0.007 * c))) or (c + 1)
            frames += value.to_bytes(width, "little", signed=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(bytes(frames))


@pytest.fixture(scope="module")
def pulse_music(tmp_path_factory):
    root = tmp_path_factory.mktemp("pulse-music")
    _wav(root / "s16.wav", 1.5, 2, 2)
    _wav(root / "s24.wav", 1.5, 2, 3, 48000)
    _wav(root / "mono.wav", 1.5, 1, 2)
    _wav(root / "surround.wav", 1, 6, 2, 48000)
    _wav(root / "long.wav", 30, 2, 2)
    return root


def _pactl(socket: Path, *arguments: str) -> str:
    return subprocess.run(["pactl", "-s", f"unix:{socket}", *arguments], check=True, capture_output=True,
                          text=True, timeout=mpdtest.scaled(10)).stdout


def _sink_inputs(socket: Path) -> list[dict[str, str]]:
    """`pactl list sink-inputs`, one dictionary per stream (the fields and properties that do not name the
    process)."""
    found = []
    for block in _pactl(socket, "list", "sink-inputs").split("Sink Input #")[1:]:
        fields = {"index": block.split("\n", 1)[0].strip()}
        for line in block.splitlines()[1:]:
            match = re.match(r"\s+([\w .]+?)(?: = |: )(.*)$", line)
            if match:
                fields.setdefault(match.group(1).strip(), match.group(2).strip())
        found.append(fields)
    return found


def _stream(socket: Path) -> dict[str, str]:
    """The one stream, once it shows."""
    found: list[dict[str, str]] = []

    def one() -> bool:
        found[:] = _sink_inputs(socket)
        return len(found) == 1
    assert mpdtest.wait_until(one, mpdtest.scaled(10)), found
    return found[0]


def _created_streams(socket: Path) -> list[dict[str, str]]:
    """The streams the daemon created, from its log: the sink, `spec`, `map` and the properties not naming the
    process."""
    streams: list[dict[str, str]] = []
    for line in (socket.parent / "log").read_text(errors="replace").splitlines():
        created = re.search(r'Created input \d+ ".*" on (\S+) with sample spec (.+) and channel map (\S+)$', line)
        if created:
            streams.append({"sink": created.group(1), "spec": created.group(2), "map": created.group(3)})
            continue
        prop = re.search(r"sink-input\.c:\s+([\w.]+) = (.*)$", line)
        if prop and streams and not prop.group(1).startswith(("application.process", "application.language")):
            streams[-1][prop.group(1)] = prop.group(2)
    return streams


def _server(server_factory, kind: str, music: Path, socket: Path, **block: str):
    output = {"type": "pulse", "name": "Desk", "server": f"unix:{socket}", **block}
    return server_factory(kind, music=music, outputs=[output])


def _wait_state(server, state: str) -> None:
    assert mpdtest.wait_until(lambda: f"\nstate: {state}\n".encode() in b"\n" + server.query("status"),
                              mpdtest.scaled(15)), (server.label, server.query("status"))


def _frames(data: bytes, size: int) -> bytes:
    """The frames of a recording that are not silence (what the sink played between writes)."""
    silent = bytes(size)
    return b"".join(data[i:i + size] for i in range(0, len(data) - size + 1, size) if data[i:i + size] != silent)


class _PipeSink:
    """A `module-pipe-sink` writing to a FIFO that a thread reads into memory."""

    def __init__(self, socket: Path, fifo: Path, name: str, channels: int, rate: int):
        self.socket = socket
        self.data = bytearray()
        self.module = _pactl(socket, "load-module", "module-pipe-sink", f"file={fifo}", f"sink_name={name}",
                             "format=s32le", f"rate={rate}", f"channels={channels}").strip()
        self.reader = threading.Thread(target=self._read, args=(fifo,), daemon=True)
        self.reader.start()

    def _read(self, fifo: Path) -> None:
        with open(fifo, "rb") as f:
            while chunk := f.read(65536):
                self.data += chunk

    def close(self) -> bytes:
        _pactl(self.socket, "unload-module", self.module)
        self.reader.join(mpdtest.scaled(10))
        return bytes(self.data)


@pytest.mark.parametrize("song,channels,rate", [("s16.wav", 2, 44100), ("s24.wav", 2, 48000), ("mono.wav", 1, 44100),
                                                ("surround.wav", 6, 48000)])
def test_the_samples_and_the_stream_are_mpds(server_factory, pulse, pulse_music, tmp_path, song, channels, rate):
    recorded = {}
    streams = {}
    for kind in KINDS:
        sink = _PipeSink(pulse, tmp_path / f"{kind}.fifo", f"rec_{kind}", channels, rate)
        try:
            server = _server(server_factory, kind, pulse_music, pulse, sink=f"rec_{kind}")
            assert server.query(f"command_list_begin\nadd {song}\nplay\ncommand_list_end\n") == b"OK\n"
            _wait_state(server, "stop")
            streams[kind] = [s for s in _created_streams(pulse) if s["sink"] == f"rec_{kind}"]
            server.stop()
        finally:
            recorded[kind] = _frames(sink.close(), 4 * channels)
    assert len(streams["ref"]) == 1, streams
    assert [dict(s, sink="") for s in streams["sut"]] == [dict(s, sink="") for s in streams["ref"]]
    assert streams["ref"][0]["media.name"] == '"Desk"'
    assert streams["ref"][0]["application.name"] == '"Music Player Daemon"'
    assert streams["ref"][0]["media.role"] == '"music"'
    assert streams["ref"][0]["application.icon_name"] == '"mpd"'
    with wave.open(str(pulse_music / song)) as w:
        frames = w.getnframes()
    assert len(recorded["ref"]) == frames * 4 * channels, (len(recorded["ref"]), frames)
    assert recorded["sut"] == recorded["ref"]


def test_media_role_names_the_stream_role(server_factory, pulse, pulse_music):
    roles = {}
    for kind in KINDS:
        server = _server(server_factory, kind, pulse_music, pulse, sink="null", media_role="video")
        server.query("command_list_begin\nadd long.wav\nplay\ncommand_list_end\n")
        _stream(pulse)
        server.stop()
        assert mpdtest.wait_until(lambda: not _sink_inputs(pulse), mpdtest.scaled(10))
        roles[kind] = _created_streams(pulse)[-1].get("media.role")
    assert roles == {"ref": '"video"', "sut": '"video"'}


def _volume_line(status: bytes) -> bytes:
    return b"".join(line for line in status.splitlines(keepends=True) if line.startswith(b"volume:"))


def _stream_volume(socket: Path) -> str:
    return _stream(socket)["Volume"].split("/")[0].strip()


def _client_names(socket: Path) -> list[str]:
    """The application names of the clients of the daemon, but pactl's own."""
    names = re.findall(r'application\.name = "([^"]*)"', _pactl(socket, "list", "clients"))
    return sorted(name for name in names if name != "pactl")


def test_the_mixer_is_the_sink_inputs_volume(server_factory, pulse, pulse_music):
    seen = {}
    idle_clients = {}
    for kind in KINDS:
        server = _server(server_factory, kind, pulse_music, pulse, sink="null")
        log = seen[kind] = []
        log.append(server.query("outputs"))
        # The output connects to the daemon when it is enabled: at the first play, not at start-up.
        idle_clients[kind] = _client_names(pulse)
        # Closed (nothing playing): no volume, and setting one is no error.
        log.append(_volume_line(server.query("status")))
        log.append(server.query("setvol 30"))
        log.append(server.query("command_list_begin\nadd long.wav\nplay\ncommand_list_end\n"))
        assert mpdtest.wait_until(lambda: _volume_line(server.query("status")) != b"", mpdtest.scaled(10)), kind
        log.append(_volume_line(server.query("status")))
        log.append(server.query("setvol 40"))
        assert mpdtest.wait_until(lambda: _stream_volume(pulse).startswith("front-left: 26214"),
                                  mpdtest.scaled(10)), (kind, _stream(pulse))
        log.append(_stream_volume(pulse))
        log.append(server.query("getvol"))
        # Another program changes the stream's volume: the mixer event, and the new volume.
        with server.connect() as idle:
            idle.send("idle mixer\n")
            time.sleep(mpdtest.scaled(0.3))
            _pactl(pulse, "set-sink-input-volume", _stream(pulse)["index"], "25%")
            log.append(idle.read_reply())
        log.append(server.query("getvol"))
        log.append(server.query("volume +10"))
        assert mpdtest.wait_until(lambda: server.query("getvol") == b"volume: 35\nOK\n", mpdtest.scaled(10)), kind
        # Pause corks the stream, play uncorks it.
        log.append(server.query("pause 1"))
        assert mpdtest.wait_until(lambda: _stream(pulse).get("Corked") == "yes", mpdtest.scaled(10)), kind
        log.append(_volume_line(server.query("status")))
        log.append(server.query("pause 0"))
        assert mpdtest.wait_until(lambda: _stream(pulse).get("Corked") == "no", mpdtest.scaled(10)), kind
        log.append(server.query("stop"))
        assert mpdtest.wait_until(lambda: not _sink_inputs(pulse), mpdtest.scaled(10)), kind
        log.append(_volume_line(server.query("status")))
        # Once it has played, the mixer takes setvol while stopped (it sets nothing), even after the output was
        # disabled and enabled again; while disabled: All outputs are disabled.
        with server.connect() as c:
            for command in ("setvol 20", "disableoutput 0", "setvol 20", "enableoutput 0"):
                log.append(c.command(command))
        time.sleep(mpdtest.scaled(0.5))
        log.append(server.query("setvol 20"))
        log.append(_volume_line(server.query("status")))
        server.stop()
    assert seen["sut"] == seen["ref"]
    assert idle_clients == {"ref": [], "sut": []}
    assert seen["ref"][0] == b"outputid: 0\noutputname: Desk\nplugin: pulse\noutputenabled: 1\nOK\n"
    assert seen["ref"][1] == b"" and seen["ref"][-1] == b""
    assert seen["ref"][2] == b"ACK [5@0] {setvol} All outputs are disabled\n"
    assert seen["ref"][-7:-1] == [b"", b"OK\n", b"OK\n", b"ACK [5@0] {setvol} All outputs are disabled\n", b"OK\n",
                                  b"OK\n"]
    assert seen["ref"][4:10] == [b"volume: 100\n", b"OK\n", "front-left: 26214", b"volume: 40\nOK\n",
                                 b"changed: mixer\nOK\n", b"volume: 25\nOK\n"]


def test_scale_volume_scales_what_the_mixer_sets(server_factory, pulse, pulse_music):
    seen = {}
    for kind in KINDS:
        server = _server(server_factory, kind, pulse_music, pulse, sink="null", scale_volume="0.5")
        server.query("command_list_begin\nadd long.wav\nplay\ncommand_list_end\n")
        assert mpdtest.wait_until(lambda: _volume_line(server.query("status")) != b"", mpdtest.scaled(10)), kind
        seen[kind] = [_volume_line(server.query("status")), server.query("setvol 60")]
        assert mpdtest.wait_until(lambda: _stream_volume(pulse).startswith("front-left: 19661"),
                                  mpdtest.scaled(10)), (kind, _stream(pulse))
        seen[kind].append(server.query("getvol"))
        server.stop()
        assert mpdtest.wait_until(lambda: not _sink_inputs(pulse), mpdtest.scaled(10))
    assert seen["sut"] == seen["ref"]
    assert seen["ref"][0] == b"volume: 200\n"


def _failed_play(server) -> list[bytes]:
    played = server.query("command_list_begin\nadd long.wav\nplay\ncommand_list_end\n")
    assert mpdtest.wait_until(lambda: b"\nerror: " in server.query("status"), mpdtest.scaled(15)), \
        (server.label, server.query("status"))
    status = server.query("status")
    kept = [line for line in status.splitlines(keepends=True)
            if line.split(b":")[0] in (b"state", b"error", b"volume", b"song")]
    return [played, b"".join(kept), server.query("outputs")]


@pytest.mark.parametrize("block,reason", [
    ({"sink": "nosuchsink"}, "failed to connect the stream: No such entity"),
    ({"server": "unix:/nonexistent/fermata-pulse-test"},
     'Failed to enable output "Desk" (pulse); pa_context_connect() has failed: Connection refused'),
])
def test_a_missing_sink_or_a_dead_server_fails_as_in_mpd(server_factory, pulse, pulse_music, block, reason):
    seen = {}
    for kind in KINDS:
        server = _server(server_factory, kind, pulse_music, pulse, **block)
        seen[kind] = _failed_play(server)
        assert mpdtest.wait_until(lambda: reason in server.log_tail(200), mpdtest.scaled(5)), \
            (kind, server.log_tail())
        server.stop()
    assert seen["sut"] == seen["ref"]
