"""The `oss` output and its mixer, against mpd's: what each server writes to the DSP device, `outputs`, a device that
does not exist, an output without `device` when no default device node exists, output detection picking oss, and
the OSS mixer's volume (`setvol`, `getvol`, `status`) and its failures.

No sound card and no /dev/dsp here: both servers run under alsa-oss's libaoss (LD_PRELOAD), which takes the
open, ioctl and write calls on /dev/dsp and /dev/mixer and serves them through alsa-lib, with an ALSA configuration
of the test's own ($ALSA_CONFIG_PATH): the DSP device is alsa-lib's `file` PCM over `null` (raw bytes into
rec.raw, taken as fast as they come), the mixer PulseAudio's ALSA control plugin on a PulseAudio daemon of the
test's own (libaoss maps OSS's `Vol` control to its `Master` element; it has no `PCM`). mpd 0.23.12 built for Linux
writes only 8- and 16-bit samples to OSS (the kernel header has no other native format): the songs are 16-bit stereo,
16-bit mono and 24-bit stereo (converted to 16 bits by both servers), and each recording must be the same in both;
the 16-bit ones must be the song itself. libaoss does not take stat(2), so the default device (no `device`) is
never found, as on a machine without OSS. About 20 s.
"""

from __future__ import annotations

import array
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import audiofiles
import mpdtest
from test_ao import _startup_error

KINDS = ("ref", "sut")
SONGS = {
    "s16.wav": ["-r", "44100", "-c", "2", "-b", "16", "synth", "1.5", "sine", "440", "sine", "660"],
    "mono.wav": ["-r", "48000", "-c", "1", "-b", "16", "synth", "1", "sine", "300-900"],
    "s24.flac": ["-r", "44100", "-c", "2", "-b", "24", "synth", "1.2", "sine", "500", "sine", "200"],
}


def _libaoss() -> str:
    """libaoss's path, from Debian's alsa-oss package (scripts/install-deps.sh test installs it)."""
    listing = subprocess.run(["dpkg", "-L", "alsa-oss"], capture_output=True, text=True)
    found = [line for line in listing.stdout.splitlines() if line.endswith("/libaoss.so")]
    if not found:
        raise AssertionError("alsa-oss is not installed (scripts/install-deps.sh test installs it)")
    return found[0]


@pytest.fixture(scope="module")
def music(tmp_path_factory) -> Path:
    audiofiles.require_tools("sox")
    music = tmp_path_factory.mktemp("oss-music")
    audiofiles.synthesize(music, SONGS, ["gain", "-10", "dcshift", "0.4"])
    return music


def _environment(directory: Path, extra: str = "", dsp: str = "default") -> dict[str, str]:
    """libaoss preloaded, and an ALSA configuration whose PCM `dsp` (libaoss's /dev/dsp: `dsp0` if defined, else
    `default`) writes directory/rec.raw."""
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "alsa.conf"
    audiofiles.write_alsa_config(config, f'pcm.{"!" if dsp == "default" else ""}{dsp} {{\n    type file\n'
                                         f'    slave {{ pcm {{ type null }} }}\n    file "{directory / "rec.raw"}"\n'
                                         f'    format "raw"\n}}\n' + extra)
    return {"ALSA_CONFIG_PATH": str(config), "LD_PRELOAD": _libaoss()}


def _oss(**keys: str) -> dict[str, str]:
    return {"type": "oss", "name": "Speakers", "device": "/dev/dsp", "mixer_type": "none", **keys}


def _status(server) -> dict[str, str]:
    return mpdtest.parse_pairs(server.query("status"))


def _play_to_the_end(server, song: str) -> None:
    audiofiles.commands(server, f'add "{song}"', "play")
    assert mpdtest.wait_until(lambda: _status(server).get("state") == "stop", mpdtest.scaled(20)), server.log_tail()


def _settled(path: Path) -> bool:
    """Whether `path` exists and does not grow for 0.3 s."""
    if not path.exists():
        return False
    size = path.stat().st_size
    time.sleep(0.3)
    return path.stat().st_size == size


def _samples(song: Path) -> array.array:
    raw = subprocess.run(["sox", str(song), "-t", "raw", "-e", "signed", "-b", "16", "-"], check=True,
                         capture_output=True, timeout=60).stdout
    return array.array("h", raw)


@pytest.mark.parametrize("song", list(SONGS))
def test_songs_written_as_mpd(server_factory, music, tmp_path, song):
    """Each server plays the song to /dev/dsp: the same bytes reach the device (16-bit, as mpd negotiates on Linux);
    a 16-bit song's are its own samples."""
    recorded = {}
    for kind in KINDS:
        directory = tmp_path / kind
        server = server_factory(kind, music=music, outputs=[_oss()], env=_environment(directory),
                                log_level="verbose")
        _play_to_the_end(server, song)
        # Everything was written once the player stopped; the device may still be closing.
        assert mpdtest.wait_until(lambda: _settled(directory / "rec.raw"), mpdtest.scaled(5)), server.log_tail()
        recorded[kind] = (directory / "rec.raw").read_bytes()
        if kind == "ref":
            # What mpd negotiated (Fermata does not log it).
            opened = re.findall(r'opened "Speakers" \(oss\) audio_format=(\S+)', server.log_path.read_text())
            assert opened and opened[-1].split(":")[1] == "16", server.log_tail()
        assert server.query("ping") == b"OK\n"
    assert len(recorded["sut"]) == len(recorded["ref"])
    assert recorded["sut"] == recorded["ref"], audiofiles.first_difference(
        array.array("h", recorded["sut"]), array.array("h", recorded["ref"]))
    if not song.startswith("s24"):
        assert array.array("h", recorded["ref"]) == _samples(music / song)


def test_outputs_as_mpd(server_factory, music, tmp_path):
    replies = {}
    for kind in KINDS:
        server = server_factory(kind, music=music, outputs=[_oss(), _oss(name="Other", device="/dev/dsp1")],
                                env=_environment(tmp_path / kind))
        replies[kind] = server.query("outputs")
    assert replies["sut"] == replies["ref"]
    assert b"plugin: oss\n" in replies["ref"]


def test_a_device_that_does_not_exist_as_mpd(server_factory, music, tmp_path):
    """`device "/no/such/dsp"`: the same `error:` (mpd's `Error opening OSS device "PATH": REASON`), logged the
    same; the server goes on."""
    outcomes = {}
    for kind in KINDS:
        server = server_factory(kind, music=music, outputs=[_oss(device="/no/such/dsp")],
                                env=_environment(tmp_path / kind))
        audiofiles.commands(server, 'add "s16.wav"', "play")
        assert mpdtest.wait_until(lambda: "error" in _status(server), mpdtest.scaled(10)), server.log_tail()
        status = _status(server)
        log = server.log_path.read_text(errors="replace")
        outcomes[kind] = ({key: status.get(key) for key in ("state", "error", "song")},
                          server.query("outputs"), "Error opening OSS device \"/no/such/dsp\"" in log)
        assert server.query("ping") == b"OK\n"
    assert outcomes["sut"] == outcomes["ref"]
    assert outcomes["ref"][0]["error"] == ('Failed to open "Speakers" (oss); Error opening OSS device "/no/such/dsp": '
                                           'No such file or directory')


def _oss_warnings(server) -> list[str]:
    return mpdtest.log_matches(server.log_path.read_text(errors="replace"), r"\b(oss_output: .*)$")


def test_no_default_device_as_mpd(music, tmp_path):
    """An oss output without `device` and neither /dev/dsp nor /dev/sound/dsp: neither server starts, with mpd's
    reason, after mpd's warning about each device node."""
    sut = mpdtest.sut_binary()
    if not sut.exists():
        pytest.skip(f"server not found: {sut}")
    for path in ("/dev/dsp", "/dev/sound/dsp"):
        if Path(path).exists():
            pytest.skip(f"{path} exists on this machine")
    found = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", sut)):
        workdir = tmp_path / kind
        workdir.mkdir()
        found[kind] = _startup_error(binary, music, workdir, {"type": "oss", "name": "Speakers"})
        found[kind + "-log"] = [line for line in (workdir / "server.log").read_text().splitlines()
                                if "oss_output: " in line][-2:]
    assert found["sut"] == found["ref"]
    assert found["ref"][1] == "error trying to open default OSS device"
    assert [line.split("oss_output: ")[1] for line in found["sut-log"]] == \
        [line.split("oss_output: ")[1] for line in found["ref-log"]] == \
        ["/dev/dsp not found", "/dev/sound/dsp not found"]


def test_detection_picks_oss_as_mpd(server_factory, music, tmp_path):
    """No `audio_output`; no sndiod, no ALSA default device, but libaoss's /dev/dsp opens (its `dsp0` PCM): both
    servers detect oss after sndio and alsa failed, then cannot make it (the device node does not exist for
    stat(2)): neither starts, with mpd's reason."""
    sut = mpdtest.sut_binary()
    if not sut.exists():
        pytest.skip(f"server not found: {sut}")
    logs = {}
    for kind, binary in (("ref", mpdtest.ref_binary()), ("sut", sut)):
        workdir = tmp_path / kind
        server = mpdtest.Server(kind, binary, music, workdir)
        server.outputs = []
        server.env = {**_environment(workdir / "alsa", dsp="dsp0"), "AUDIODEVICE": "snd,15/0",
                      "PULSE_SERVER": f"unix:{tmp_path / 'no-pulse'}"}
        with pytest.raises(mpdtest.ServerError):
            server.start()
        server.stop()
        lines = []
        for line in server.log_path.read_text(errors="replace").splitlines():
            match = re.search(r"\b((?:output|oss_output|alsa_output|sndio_output): .*)$", line)
            if match:
                lines.append(match.group(1))
        logs[kind] = (lines, "error trying to open default OSS device" in server.log_path.read_text())
    assert logs["sut"] == logs["ref"]
    assert "output: Successfully detected a oss audio device" in logs["ref"][0]
    assert logs["ref"][1]


@pytest.fixture
def pulse(tmp_path):
    with mpdtest.pulseaudio_daemon(tmp_path / "pulse") as socket:
        yield socket


def _volume_line(status: bytes) -> bytes:
    return b"".join(line for line in status.splitlines(keepends=True) if line.startswith(b"volume:"))


COMMANDS = ["setvol 40", "getvol", "volume -5", "getvol", "disableoutput 0", "getvol", "setvol 30",
            "enableoutput 0", "setvol 70", "getvol", "volume 200"]


def _mixer_answers(server_factory, music, tmp_path, pulse, **keys) -> dict[str, list[bytes]]:
    answers = {}
    for kind in KINDS:
        server = server_factory(kind, music=music, outputs=[_oss(mixer_type="hardware", **keys)],
                                env=_environment(tmp_path / kind,
                                                 f'ctl.!default {{ type pulse server "unix:{pulse}" }}\n'))
        answers[kind] = [server.query("setvol 100"), _volume_line(server.query("status"))]
        with server.connect() as c:
            for command in COMMANDS:
                answers[kind].append(c.command(command))
                if command.startswith(("disable", "enable")):
                    answers[kind].append(_volume_line(c.command("status")))
        audiofiles.commands(server, 'add "mono.wav"', "play")
        assert mpdtest.wait_until(lambda: _status(server).get("state") == "stop", mpdtest.scaled(20))
        answers[kind] += [server.query("getvol"), server.query("setvol 55"), server.query("getvol")]
        log = server.log_path.read_text(errors="replace")
        answers[kind + "-log"] = log
    return answers


def test_mixer_volume_as_mpd(server_factory, music, tmp_path, pulse):
    """`mixer_control "Vol"` (libaoss's `Master`): the volume set and read through the OSS mixer, as mpd's."""
    answers = _mixer_answers(server_factory, music, tmp_path, pulse, mixer_control="Vol")
    assert answers["sut"] == answers["ref"]
    assert answers["ref"][:2] == [b"OK\n", b"volume: 100\n"]
    assert b"volume: 55\n" in answers["ref"][-1]
    for kind in KINDS:
        assert "OSS volume" not in answers[kind + "-log"], kind


@pytest.mark.parametrize("keys,reason", [
    ({}, "failed to read OSS volume: Invalid argument"),
    ({"mixer_control": "Bass"}, 'mixer control "Bass" not usable: '),
    ({"mixer_device": "/no/such/mixer"}, "failed to open /no/such/mixer: No such file or directory"),
], ids=["pcm", "bass", "no-device"])
def test_mixer_failures_as_mpd(server_factory, music, tmp_path, pulse, keys, reason):
    """The default control (`PCM`, which libaoss's mixer does not have), a control the mixer lacks, a mixer device
    that does not exist: the same answers (mpd's reasons in `setvol`'s ACK), the reason logged by both (Fermata's
    player words the lines around it its own way)."""
    answers = _mixer_answers(server_factory, music, tmp_path, pulse, **keys)
    assert answers["sut"] == answers["ref"]
    assert any(reason.encode() in answer for answer in answers["ref"]), answers["ref"]
    for kind in KINDS:
        assert reason in answers[kind + "-log"], kind


def test_unknown_mixer_control_as_mpd(server_factory, music, tmp_path):
    """`mixer_control "Bogus"`: no mixer (mpd logs why), the same answers."""
    answers = {}
    for kind in KINDS:
        server = server_factory(kind, music=music, outputs=[_oss(mixer_type="hardware", mixer_control="Bogus")],
                                env=_environment(tmp_path / kind))
        answers[kind] = [server.query("setvol 50"), _volume_line(server.query("status")), server.query("getvol")]
        log = server.log_path.read_text(errors="replace")
        answers[kind].append("no such mixer control: Bogus" in log)
    assert answers["sut"] == answers["ref"]
    assert answers["ref"][0] == b"ACK [5@0] {setvol} No mixer\n"
    assert answers["ref"][-1]
