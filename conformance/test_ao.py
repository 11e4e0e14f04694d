"""The `ao` output (libao), against mpd's: what it writes, `outputs`, its configuration errors, a device that does
not open, and enable/disable.

The samples go through libao's `alsa` driver (`options "dev=rec"`) to a PCM of alsa-lib's `file` plugin (raw,
over `null`; the configuration from $ALSA_CONFIG_PATH, as conformance/test_audio.py records the ALSA output), so
each stream lands in rec-FORMAT-RATE-CHANNELS.raw: mpd and Fermata play the same songs and must write the same
bytes in the same formats (8- and 16-bit kept, every other sample format converted to 16 bits).

The songs are made here with sox: 16-bit stereo at 44.1 kHz (written as it is), 24-bit mono at 48 kHz (dithered
to 16 bits, mpd's dither), 32-bit float stereo at 22.05 kHz.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import audiofiles
import mpdtest

SONGS = {
    "s16.wav": ["-r", "44100", "-c", "2", "-b", "16", "synth", "1.5", "sine", "440", "sine", "660"],
    "s24mono.flac": ["-r", "48000", "-c", "1", "-b", "24", "synth", "1.2", "sine", "300-900"],
    "float.wav": ["-r", "22050", "-c", "2", "-b", "32", "-e", "floating-point", "synth", "1", "sine", "500",
                  "square", "200"],
}


@pytest.fixture(scope="module")
def music(tmp_path_factory) -> Path:
    audiofiles.require_tools("sox")
    music = tmp_path_factory.mktemp("ao-music")
    for name, args in SONGS.items():
        subprocess.run(["sox", "-n", *_format(args), str(music / name), *_effects(args), "gain", "-6"], check=True,
                       timeout=60)
    return music


def _format(args: list[str]) -> list[str]:
    return args[:args.index("synth")]


def _effects(args: list[str]) -> list[str]:
    return args[args.index("synth"):]


def _ao_output(**settings: str) -> dict[str, str]:
    return {"type": "ao", "name": "Speakers", "mixer_type": "none", **settings}


def _servers(server_factory, music: Path, tmp_path: Path, output: dict[str, str]) -> dict[str, object]:
    """mpd and Fermata, each with one ao output (in place of audiofiles.file_recorder's ALSA output: its `device`
    key is left unused) beside alsa-lib's file PCM `rec` writing into tmp_path/KIND."""
    return {kind: audiofiles.file_recorder(server_factory, kind, music, tmp_path / kind, output=output)
            for kind in ("ref", "sut")}


def test_samples_as_mpd(server_factory, music, tmp_path):
    """Each song on its own: the same file name (the format libao opened the device in) and the same bytes, as
    long as the song (mpd's may go on with silence)."""
    servers = _servers(server_factory, music, tmp_path, _ao_output(driver="alsa", options="dev=rec"))
    want_names = {"s16.wav": "rec-S16_LE-44100-2.raw", "s24mono.flac": "rec-S16_LE-48000-1.raw",
                  "float.wav": "rec-S16_LE-22050-2.raw"}
    for song, name in want_names.items():
        recordings = {kind: audiofiles.record_queue(server, tmp_path / kind, [f'add "{song}"', "play"])
                      for kind, server in servers.items()}
        assert recordings["ref"][0] == name, (song, recordings["ref"][0])
        mismatch = audiofiles.recording_mismatch(song, recordings["ref"], recordings["sut"])
        assert mismatch is None, mismatch
        frames = len(recordings["sut"][1]) // (2 * int(name.rsplit("-", 1)[1].split(".")[0]))
        rate = int(name.split("-")[2])
        assert abs(frames - rate * float(SONGS[song][SONGS[song].index("synth") + 1])) <= 1, (song, frames)


def test_outputs_and_enable_disable_as_mpd(server_factory, music, tmp_path):
    """`outputs` (plugin `ao`), then `disableoutput`, `enableoutput` and `toggleoutput` while playing (the only
    output disabled pauses the player, as in mpd): the same replies; `play` then opens the device again."""
    servers = _servers(server_factory, music, tmp_path, _ao_output(driver="alsa", options="dev=rec"))
    for server in servers.values():
        audiofiles.commands(server, 'add "s16.wav"', "repeat 1", "play")
    for command in ("outputs", "disableoutput 0", "outputs", "enableoutput 0", "outputs", "toggleoutput 0",
                    "outputs", "toggleoutput 0", "outputs"):
        replies = {kind: server.query(command) for kind, server in servers.items()}
        assert replies["sut"] == replies["ref"], command
    assert b"plugin: ao\noutputenabled: 1\n" in replies["sut"]
    for kind, server in servers.items():
        server.query("stop")
        for old in (tmp_path / kind).glob("rec-*.raw"):
            old.unlink()
        audiofiles.commands(server, "play")
        assert mpdtest.wait_until(lambda: any(f.stat().st_size > 0 for f in (tmp_path / kind).glob("rec-*.raw")),
                                  mpdtest.scaled(10)), server.log_tail()
        status = mpdtest.parse_pairs(server.query("status"))
        assert status["state"] == "play" and "error" not in status, (kind, status)
        server.query("stop")


def _open_error(server) -> str:
    """Plays s16.wav and returns `status`'s `error:` once the output failed to open."""
    audiofiles.commands(server, 'add "s16.wav"', "play")
    error = ""

    def failed() -> bool:
        nonlocal error
        error = mpdtest.parse_pairs(server.query("status")).get("error", "")
        return bool(error)
    assert mpdtest.wait_until(failed, mpdtest.scaled(10)), server.log_tail()
    return error


@pytest.mark.parametrize("output", [
    # alsa-lib has no such PCM: AO_EOPENDEVICE.
    _ao_output(driver="alsa", options="dev=nosuch"),
    # A file driver: AO_ENOTLIVE.
    _ao_output(driver="wav"),
], ids=["no-device", "file-driver"])
def test_a_device_that_does_not_open_as_mpd(server_factory, music, tmp_path, output):
    """The same `error:` (libao's errno in mpd's words), and the server goes on."""
    servers = _servers(server_factory, music, tmp_path, output)
    errors = {kind: _open_error(server) for kind, server in servers.items()}
    assert errors["sut"] == errors["ref"]
    assert errors["sut"].startswith('Failed to open "Speakers" (ao); '), errors
    assert servers["sut"].query("ping") == b"OK\n"


def _startup_error(binary: Path, music: Path, workdir: Path, output: dict[str, str]) -> tuple[int, str]:
    """Why the server did not start with `output`: the configuration line it names and the reason (mpd's
    `Failed to configure output in line N; REASON`, which Fermata prints after `fermata: PATH:N: `)."""
    server = mpdtest.Server("sut" if not mpdtest.is_mpd(binary) else "ref", binary, music, workdir)
    server.outputs = [output]
    with pytest.raises(mpdtest.ServerError):
        server.start()
    server.stop()
    log = server.log_path.read_text()
    pattern = ("" if mpdtest.is_mpd(binary) else re.escape(str(server.conf_path)) + r":\d+: ") + \
        r"Failed to configure output in line (\d+); (.*)"
    found = re.findall(pattern, log)
    assert found, log
    return int(found[-1][0]), found[-1][1]


@pytest.mark.parametrize("output,reason", [
    (_ao_output(driver="nosuch"), '"nosuch" is not a valid ao driver'),
    (_ao_output(driver=""), '"" is not a valid ao driver'),
    (_ao_output(driver="null", options="dev=x;bad"), 'problems parsing option "bad"'),
    (_ao_output(driver="null", options="dev=x;"), 'problems parsing option ""'),
    (_ao_output(driver="null", options="=x"), 'problems parsing option "=x"'),
], ids=["unknown", "empty", "no-equals", "trailing-semicolon", "no-key"])
def test_configuration_errors_as_mpd(music, tmp_path, output, reason):
    """mpd does not start, and says why; neither does Fermata, with the same reason."""
    sut = mpdtest.sut_binary()
    if not sut.exists():
        pytest.skip(f"server not found: {sut}")
    ours = _startup_error(sut, music, tmp_path / "sut", output)
    theirs = _startup_error(mpdtest.ref_binary(), music, tmp_path / "ref", output)
    assert theirs[1] == reason, theirs
    assert ours == theirs
