"""The `sndio` output and its mixer, against mpd's: what each server plays, `outputs`, the volume (`status`,
`setvol`, `getvol`) before the first song and through pause, resume and stop, the level on sndiod and another
program's change of it (sndio-tools' sndioctl), seeking and stopping, a sndiod that is not running and a device that does not exist,
and bad `buffer_time` values.

Each server plays to a sndiod of its own (`-U UNIT`: a Unix socket /tmp/sndio/sockUNIT, no network), reached
through libsndio's default device (`AUDIODEVICE=snd,UNIT/0`). sndiod's device, `rsnd/0` (alsa-lib's `hw:0`), is
redefined by $ALSA_CONFIG_PATH as alsa-lib's `file` PCM (raw, into rec-FORMAT-RATE-CHANNELS.raw) over PulseAudio's
ALSA plugin to a null sink of a PulseAudio daemon of the test's own (mpdtest.pulseaudio_daemon), which keeps time:
sndiod mixes at 48 kHz in 16 bits, and writes silence while a client has nothing for it, so the recordings are
compared without their silent frames (the songs have none: a sine over a DC offset). sndiod drops root for its own
user, so everything it opens lives in a world-accessible directory under /tmp.

The songs: 16-bit stereo at 48 kHz, 1.5 s and 0.1 s (sndiod passes them through: the recording must be the song),
24-bit mono at 48 kHz
and 32-bit float stereo at 48 kHz (mpd's sndio output keeps 24 bits and converts float to 16; sndiod converts and
spreads the channel; both servers' recordings must be the same). About 30 s.
"""

from __future__ import annotations

import array
import fcntl
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

import audiofiles
import mpdtest
from test_ao import _startup_error

KINDS = ("ref", "sut")
RATE = 48000
SONGS = {
    "s16.wav": ["-c", "2", "-b", "16", "synth", "1.5", "sine", "440", "sine", "660"],
    "s24mono.flac": ["-c", "1", "-b", "24", "synth", "1.2", "sine", "300-900"],
    "float.wav": ["-c", "2", "-b", "32", "-e", "floating-point", "synth", "1", "sine", "500", "sine", "200"],
    # Shorter than the device's buffer (250 ms): the end of the queue must not wait for a buffer never filled.
    "short.wav": ["-c", "2", "-b", "16", "synth", "0.1", "sine", "1000"],
}


@pytest.fixture(scope="module")
def music(tmp_path_factory) -> Path:
    audiofiles.require_tools("sox")
    if shutil.which("sndiod") is None:
        raise AssertionError("sndiod is not installed (scripts/install-deps.sh test installs it)")
    music = tmp_path_factory.mktemp("sndio-music")
    for name, args in SONGS.items():
        at = args.index("synth")
        # Peaks at 0.32 over 0.4: no sample is ever 0.
        subprocess.run(["sox", "-n", "-r", str(RATE), *args[:at], str(music / name), *args[at:], "gain", "-10",
                        "dcshift", "0.4"], check=True, timeout=60)
    return music


def _serves(socket_path: Path) -> bool:
    """Whether a sndiod listens on the socket (sndiod, no longer root when it exits, leaves its socket behind)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(socket_path))
        except OSError:
            return False
    return True


@contextmanager
def _free_unit():
    """A sndiod unit no other test uses (a lock held while the block runs) and no sndiod serves (a socket left by
    a sndiod that is gone is removed)."""
    for unit in range(4, 16):
        lock = open(f"/tmp/fermata-sndio-unit-{unit}.lock", "w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        path = Path(f"/tmp/sndio/sock{unit}")
        if path.exists():
            if _serves(path):
                lock.close()
                continue
            path.unlink()
        try:
            yield unit
        finally:
            lock.close()
        return
    raise AssertionError("no free sndiod unit")


@contextmanager
def _sndiod(root: Path, unit: int, pulse_socket: Path):
    """sndiod unit `unit` playing to alsa-lib's file PCM in `root` (rec-*.raw) over the PulseAudio daemon."""
    config = root / "alsa.conf"
    config.write_text(
        "pcm.hw {\n    @args [ CARD DEV SUBDEV ]\n    @args.CARD { type string default \"0\" }\n"
        "    @args.DEV { type integer default 0 }\n    @args.SUBDEV { type integer default -1 }\n"
        f"    type file\n    slave {{ pcm {{ type pulse server \"unix:{pulse_socket}\" device \"null\" }} }}\n"
        f"    file \"{root}/rec-%f-%r-%c.raw\"\n    format \"raw\"\n}}\n")
    config.chmod(0o644)
    with open(root / "sndiod.log", "wb") as log:
        proc = subprocess.Popen(["sndiod", "-d", "-U", str(unit), "-f", "rsnd/0", "-m", "play", "-s", "default"],
                                env={**os.environ, "ALSA_CONFIG_PATH": str(config)}, stdout=log,
                                stderr=subprocess.STDOUT)
        path = Path(f"/tmp/sndio/sock{unit}")
        try:
            assert mpdtest.wait_until(lambda: path.exists() or proc.poll() is not None, mpdtest.scaled(10)), \
                "sndiod did not start"
            assert proc.poll() is None, (root / "sndiod.log").read_text()
            yield
        finally:
            proc.terminate()
            proc.wait()
            path.unlink(missing_ok=True)


@pytest.fixture
def rig():
    """A PulseAudio daemon and, for each kind, a sndiod unit of its own and the directory its recordings land in:
    {kind: (unit, directory)}."""
    top = Path(tempfile.mkdtemp(prefix="fermata-sndio-", dir="/tmp"))
    top.chmod(0o777)
    try:
        with ExitStack() as stack:
            (top / "pulse").mkdir(mode=0o755)
            pulse = stack.enter_context(mpdtest.pulseaudio_daemon(top / "pulse"))
            (top / "pulse").chmod(0o755)
            rig = {}
            for kind in KINDS:
                directory = top / kind
                directory.mkdir()
                directory.chmod(0o777)
                unit = stack.enter_context(_free_unit())
                stack.enter_context(_sndiod(directory, unit, pulse))
                rig[kind] = (unit, directory)
            yield rig
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _sndio_output(**settings: str) -> dict[str, str]:
    return {"type": "sndio", "name": "Speakers", **settings}


def _servers(server_factory, music: Path, rig, **settings: str) -> dict[str, object]:
    """mpd and Fermata, each with one sndio output on libsndio's default device, its own sndiod."""
    return {kind: server_factory(kind, music=music, outputs=[_sndio_output(**settings)],
                                 env={"AUDIODEVICE": f"snd,{rig[kind][0]}/0"})
            for kind in KINDS}


def _sounding(data: bytes) -> array.array:
    """The recording's 16-bit stereo frames that are not silent, as samples."""
    samples = array.array("h", data[:len(data) // 4 * 4])
    return array.array("h", (x for i in range(0, len(samples), 2) if samples[i] or samples[i + 1]
                             for x in samples[i:i + 2]))


def _status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def test_samples_as_mpd(server_factory, music, rig):
    """Each song on its own: sndiod's device in the same format, the same sounding samples from both servers, and
    the 16-bit song exactly as it is."""
    servers = _servers(server_factory, music, rig)
    for song in SONGS:
        recordings = {kind: audiofiles.record_queue(server, rig[kind][1], [f'add "{song}"', "play"])
                      for kind, server in servers.items()}
        assert recordings["sut"][0] == recordings["ref"][0] == f"rec-S16_LE-{RATE}-2.raw", song
        sounding = {kind: _sounding(data) for kind, (_, data) in recordings.items()}
        assert len(sounding["ref"]) > 0, song
        assert sounding["sut"] == sounding["ref"], (song, audiofiles.first_difference(sounding["sut"],
                                                                                      sounding["ref"]))
        if song in ("s16.wav", "short.wav"):
            want = audiofiles.wav_samples(music / song)
            assert sounding["sut"] == want, audiofiles.first_difference(sounding["sut"], want)


def _volume_lines(server, *commands: str) -> list[str]:
    """Each command's reply, `status` reduced to its `volume:`, `state:` and `error:` lines."""
    replies = []
    for command in commands:
        reply = server.query(command).decode()
        if command == "status":
            reply = "".join(line + "\n" for line in reply.splitlines()
                            if line.startswith(("volume:", "state:", "error:")))
        replies.append(reply)
    return replies


def _playing(server) -> bool:
    status = _status(server)
    return status.get("state") == "play" and "volume" in status


def test_outputs_and_volume_through_pause_and_stop_as_mpd(server_factory, music, rig):
    """`outputs` (plugin `sndio`); no volume until a stream is open, and `setvol` refused before the output first
    played (`All outputs are disabled`: mpd enables it then), 100 once playing, `setvol 50` reads 49 (sndio's
    0..127), none while paused (mpd's sndio output has no pause: its mixer closes before `pause` is answered), the
    same volume again once the resume is answered (the level set just before the pause reached sndiod), none after
    `stop`.

    mpd shows the volume it read last for up to a second (its mixer memento) unless a volume is set in between, and
    its sndio mixer closes on `pause` and `stop` without a word: the volume right after either is the old one or
    none, by the clock. So each `status` compared there follows a `setvol`, which makes both servers read the
    mixers."""
    servers = _servers(server_factory, music, rig)
    steps = {}
    for kind, server in servers.items():
        audiofiles.commands(server, 'add "s16.wav"', "repeat 1")
        replies = _volume_lines(server, "outputs", "status", "setvol 20", "status", "play")
        assert mpdtest.wait_until(lambda: _playing(server), mpdtest.scaled(10)), server.log_tail()
        replies += _volume_lines(server, "status", "setvol 50", "status", "getvol", "volume +5", "status",
                                 "setvol 101", "pause", "setvol 30", "status", "getvol", "pause", "status")
        assert "volume" in _status(server), (kind, "no volume once the resume was answered")
        replies += _volume_lines(server, "stop", "setvol 10", "status", "outputs")
        steps[kind] = replies
    # The `status` after `volume +5` (the 11th reply): mpd once answered 100 here (CI, under load), the level before
    # `setvol 50`. Its sndio output reports the level sndiod last called it back with (`raw_volume`, 100 % until a
    # call-back), and under load the call-backs lag behind the levels set. Fermata's 53 is checked below either way.
    after_volume = 10
    if steps["ref"][after_volume] == "volume: 100\nstate: play\n":
        steps["ref"][after_volume] = steps["sut"][after_volume]
    assert steps["sut"] == steps["ref"]
    assert "plugin: sndio\noutputenabled: 1\n" in steps["sut"][0]
    assert steps["sut"][after_volume] == "volume: 53\nstate: play\n"


def _app_level(device: str) -> tuple[str, str]:
    """The server's own level control on sndiod (`app/PROGRAM0.level`) and its value, as sndioctl lists it."""
    listing = subprocess.run(["sndioctl", "-f", device], capture_output=True, text=True, check=True,
                             timeout=30).stdout
    found = [line.split("=") for line in listing.splitlines() if line.startswith("app/")]
    assert len(found) == 1, listing
    return found[0][0], found[0][1]


def test_volume_on_sndiod_and_another_programs_change_as_mpd(server_factory, music, rig):
    """`setvol` reaches the server's level on sndiod (sndio's 0..127 in sndioctl's 0..1); another program changing
    it (sndioctl) is a `mixer` event, and `status` reads the new volume."""
    if shutil.which("sndioctl") is None:
        raise AssertionError("sndioctl is not installed (scripts/install-deps.sh test installs sndio-tools)")
    servers = _servers(server_factory, music, rig)
    logs = {}
    for kind, server in servers.items():
        device = f"snd,{rig[kind][0]}/0"
        audiofiles.commands(server, 'add "s16.wav"', "repeat 1", "play")
        assert mpdtest.wait_until(lambda: _playing(server), mpdtest.scaled(10)), server.log_tail()
        control, level = _app_level(device)
        log = [level, server.query("setvol 20")]
        # 20 % is 25 of 127.
        assert mpdtest.wait_until(lambda: _app_level(device)[1] == "0.197", mpdtest.scaled(10)), \
            (kind, _app_level(device))
        log.append(server.query("getvol"))
        with server.connect() as idle:
            idle.send("idle mixer\n")
            time.sleep(mpdtest.scaled(0.3))
            subprocess.run(["sndioctl", "-q", "-f", device, f"{control}=0.5"], check=True, timeout=30)
            log.append(idle.read_reply())
        log += [server.query("getvol"), _app_level(device)[1]]
        logs[kind] = log
    assert logs["sut"] == logs["ref"]
    assert logs["sut"][-2:] == [b"volume: 50\nOK\n", "0.504"]


def test_seek_and_stop_while_playing(server_factory, music, rig):
    """`seekcur` and `stop` while a song plays, then `play` again: no error, playing on from where it was sent, as
    mpd's (whose sndio output plays out its buffer where Fermata drops it)."""
    servers = _servers(server_factory, music, rig)
    for kind, server in servers.items():
        audiofiles.commands(server, 'add "s16.wav"', "repeat 1", "play")
        assert mpdtest.wait_until(lambda: _playing(server), mpdtest.scaled(10)), server.log_tail()
        audiofiles.commands(server, "seekcur 1")
        status = _status(server)
        assert status["state"] == "play" and "error" not in status, (kind, status)
        assert float(status["elapsed"]) >= 1.0, (kind, status)
        audiofiles.commands(server, "stop", "play")
        assert mpdtest.wait_until(lambda: _playing(server), mpdtest.scaled(10)), server.log_tail()
        # Time moves on (the device takes samples), with no error.
        first = float(_status(server)["elapsed"])
        assert mpdtest.wait_until(lambda: float(_status(server)["elapsed"]) > first + 0.2, mpdtest.scaled(10))
        assert "error" not in _status(server), kind


def test_detected_when_no_output_is_configured_as_mpd(server_factory, music, rig):
    """No `audio_output`: mpd tries sndio's default device first ($AUDIODEVICE here), and uses it when it opens (the
    output `default detected output`, plugin `sndio`); both servers then play through their sndiod."""
    servers = {kind: server_factory(kind, music=music, outputs=[], env={"AUDIODEVICE": f"snd,{rig[kind][0]}/0"})
               for kind in KINDS}
    replies = {kind: server.query("outputs") for kind, server in servers.items()}
    assert replies["sut"] == replies["ref"]
    assert replies["sut"] == (b"outputid: 0\noutputname: default detected output\nplugin: sndio\n"
                              b"outputenabled: 1\nOK\n")
    for kind, server in servers.items():
        name, data = audiofiles.record_queue(server, rig[kind][1], ['add "short.wav"', "play"])
        assert _sounding(data) == audiofiles.wav_samples(music / "short.wav"), kind


def _detection_log(server) -> list[str]:
    """The lines a server logs about the output it detects, from their domain on (Fermata writes its time and level
    before it)."""
    found = []
    for line in server.log_path.read_text(errors="replace").splitlines():
        match = re.search(r"\b((?:output|sndio_output|alsa_output|oss_output): .*)$", line)
        if match and ("detect" in line or "Error opening default" in line or "Error opening OSS device" in line
                      or "No 'audio_output'" in line):
            found.append(match.group(1))
    return found


@pytest.mark.parametrize("pulse", [False, True], ids=["jack", "pulse"])
def test_without_sndiod_or_alsa_detection_goes_on_as_mpd(server_factory, music, tmp_path, pulse):
    """No `audio_output`, no sndiod and no ALSA default device (an empty $ALSA_CONFIG_PATH): mpd tries the next
    plugins with a default-device test, in its order: OSS (/dev/dsp, then /dev/sound/dsp: the machine is expected
    to have neither), pulse (its server answers: here, a PulseAudio daemon of the test's own named by
    $PULSE_SERVER, or a socket nobody serves), then jack, whose test always passes. Both servers pick the same
    plugin, and log the same lines about it."""
    (tmp_path / "alsa.conf").write_text("")
    with ExitStack() as stack, _free_unit() as unit:
        socket_path = (stack.enter_context(mpdtest.pulseaudio_daemon(tmp_path / "pulse")) if pulse
                       else tmp_path / "no-pulse")
        env = {"AUDIODEVICE": f"snd,{unit}/0", "ALSA_CONFIG_PATH": str(tmp_path / "alsa.conf"),
               "PULSE_SERVER": f"unix:{socket_path}"}
        servers = {kind: server_factory(kind, music=music, outputs=[], env=env) for kind in KINDS}
        replies = {kind: server.query("outputs") for kind, server in servers.items()}
        logs = {kind: _detection_log(server) for kind, server in servers.items()}
    plugin = "pulse" if pulse else "jack"
    assert replies["ref"] == (b"outputid: 0\noutputname: default detected output\nplugin: " + plugin.encode()
                              + b"\noutputenabled: 1\nOK\n"), (replies["ref"], logs["ref"])
    assert replies["sut"] == replies["ref"]
    assert "sndio_output: Error opening default sndio device" in logs["ref"], logs["ref"]
    assert f"output: Successfully detected a {plugin} audio device" in logs["ref"], logs["ref"]
    assert 'oss_output: Error opening OSS device "/dev/dsp": No such file or directory' in logs["ref"], logs["ref"]
    assert logs["sut"] == logs["ref"]


def test_no_sndiod_as_mpd(server_factory, music):
    """A sndiod unit nobody serves: the same `error:` (mpd's words for any device), the player paused on the song,
    `setvol` taken (the output was enabled) though there is no volume; the server goes on."""
    with _free_unit() as unit:
        servers = {kind: server_factory(kind, music=music, outputs=[_sndio_output(device=f"snd,{unit}/0")])
                   for kind in KINDS}
        outcomes = {}
        for kind, server in servers.items():
            audiofiles.commands(server, 'add "s16.wav"', "play")
            assert mpdtest.wait_until(lambda: "error" in _status(server), mpdtest.scaled(10)), server.log_tail()
            status = _status(server)
            outcomes[kind] = ({key: status.get(key) for key in ("state", "error", "song", "volume")},
                              server.query("outputs"), server.query("setvol 50"), server.query("getvol"))
            assert server.query("ping") == b"OK\n"
    assert outcomes["sut"] == outcomes["ref"]
    assert outcomes["sut"][0]["error"] == 'Failed to open "Speakers" (sndio); Failed to open default sndio device'


@pytest.mark.parametrize("device", ["nosuch/0", "rsnd/fermata-no-card", ""])
def test_a_device_that_does_not_exist_as_mpd(server_factory, music, rig, device):
    """An unknown device type, a raw device alsa-lib does not know, an empty name: the same `error:`."""
    servers = {kind: server_factory(kind, music=music, outputs=[_sndio_output(device=device)],
                                    env={"AUDIODEVICE": f"snd,{rig[kind][0]}/0"})
               for kind in KINDS}
    errors = {}
    for kind, server in servers.items():
        audiofiles.commands(server, 'add "s16.wav"', "play")
        assert mpdtest.wait_until(lambda: "error" in _status(server), mpdtest.scaled(10)), server.log_tail()
        errors[kind] = _status(server)["error"]
    assert errors["sut"] == errors["ref"]


@pytest.mark.parametrize("value,reason", [
    ("-1", "Value must not be negative"),
    ("abc", "Failed to parse number"),
    ("", "Failed to parse number"),
])
def test_bad_buffer_time_as_mpd(music, tmp_path, value, reason):
    """mpd does not start, and says why; neither does Fermata, with the same reason (naming the parameter's line)."""
    sut = mpdtest.sut_binary()
    if not sut.exists():
        pytest.skip(f"server not found: {sut}")
    output = _sndio_output(buffer_time=value)
    ours = _startup_error(sut, music, tmp_path / "sut", output)
    theirs = _startup_error(mpdtest.ref_binary(), music, tmp_path / "ref", output)
    assert re.fullmatch(rf'Error in setting "buffer_time" on line \d+; {reason}', theirs[1]), theirs
    assert ours == theirs
