"""A hardware mixer (`mixer_type "hardware"`): alsa-lib's simple mixer on a control device, as on a sound card.

No sound card exists here, so the control is PulseAudio's ALSA control plugin (`type pulse`, from
libasound2-plugins) on a PulseAudio daemon the test starts with a null sink and only a Unix socket in its own
directory (no network module, no D-Bus, no autospawn). Both servers read and set the sink's volume through
alsa-lib exactly as they would a card's `Master` element. Compared with mpd: `status`'s `volume:`, `getvol`,
`setvol` and `volume` while the output is enabled and disabled (mpd: `All outputs are disabled`), and a control
device that does not exist (mpd: the mixer's own failure, after `Failed to set mixer for 'NAME'`). About 5 s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import audiofiles
import mpdtest


@pytest.fixture
def pulse(tmp_path):
    """A PulseAudio daemon with a null sink, reachable only through its socket; yields the socket's path."""
    with mpdtest.pulseaudio_daemon(tmp_path / "pulse") as socket:
        yield socket


def _server(server_factory, kind: str, tmp_path: Path, socket: Path, control_device: str):
    directory = tmp_path / kind
    directory.mkdir()
    config = directory / "alsa.conf"
    audiofiles.write_alsa_config(config, f'pcm.pulseout {{ type pulse server "unix:{socket}" }}\n'
                                         f'ctl.pulsemix {{ type pulse server "unix:{socket}" }}\n')
    return server_factory(kind, env={"ALSA_CONFIG_PATH": str(config)},
                          outputs=[{"type": "alsa", "name": "Card", "device": "pulseout", "mixer_type": "hardware",
                                    "mixer_device": control_device, "mixer_control": "Master"}])


def _volume_line(status: bytes) -> bytes:
    return b"".join(line for line in status.splitlines(keepends=True) if line.startswith(b"volume:"))


COMMANDS = ["setvol 40", "getvol", "volume -5", "getvol", "disableoutput 0", "getvol", "setvol 30", "volume +5",
            "getvol", "enableoutput 0", "setvol 70", "getvol", "volume 200"]


def test_setvol_and_volume_on_a_hardware_mixer_as_mpd(server_factory, tmp_path, pulse):
    answers = {}
    for kind in ("ref", "sut"):
        server = _server(server_factory, kind, tmp_path, pulse, "pulsemix")
        # The sink's volume is shared by both servers: each starts from 100.
        assert server.query("setvol 100") == b"OK\n", kind
        answers[kind] = [_volume_line(server.query("status"))]
        with server.connect() as c:
            for command in COMMANDS:
                answers[kind].append(c.command(command))
                if command.startswith(("disable", "enable")):
                    answers[kind].append(_volume_line(c.command("status")))
    assert answers["sut"] == answers["ref"]
    # What mpd answered, so that a change on both sides shows: the volume is the sink's, set through the control.
    assert answers["ref"][1:5] == [b"OK\n", b"volume: 40\nOK\n", b"OK\n", b"volume: 35\nOK\n"]
    assert b"ACK [5@0] {setvol} All outputs are disabled\n" in answers["ref"]


def test_a_control_device_that_does_not_exist_fails_as_in_mpd(server_factory, tmp_path, pulse):
    answers = {}
    for kind in ("ref", "sut"):
        server = _server(server_factory, kind, tmp_path, pulse, "nosuchmixer")
        answers[kind] = [_volume_line(server.query("status"))]
        with server.connect() as c:
            answers[kind] += [c.command(command) for command in ("setvol 40", "getvol", "volume +5", "setvol 41")]
    assert answers["sut"] == answers["ref"]
    assert answers["ref"][1] == (b"ACK [5@0] {setvol} Failed to set mixer for 'Card'; "
                                 b"failed to attach to nosuchmixer: No such file or directory\n")


def _mixer_log(server) -> list[str]:
    """mpd's mixer failures in the server's log: `mixer: Failed to read/set mixer …`, `output: Failed to open
    mixer …`."""
    return mpdtest.log_matches(
        server.log_path.read_text(errors="replace"), r"\b((?:mixer|output): Failed to (?:read|set|open) mixer .*)$")


def _first_song(server) -> str:
    for line in server.query("listall").splitlines():
        if line.startswith(b"file: ") and line.isascii() and b"roken" not in line:
            return line[6:].decode()
    raise AssertionError("no song in the library")


def test_a_control_device_defined_only_by_playback_opens_with_the_output_as_mpd(server_factory, tmp_path, pulse):
    """The control device is not defined at start-up and is by the time a song plays (alsa-lib reads the changed
    configuration at the next open), as a card's control that shows only once its PCM was opened. The mixer is
    global, as mpd's alsa mixer: its first use fails (one `Failed to read mixer` line; no `volume:`), later reads
    try no more and say nothing, each `setvol` fails with the failure kept (and logs it); the output opening opens
    it (the volume shows), and it stays open after `stop`. Fermata opened every mixer at start-up, once."""
    answers, logs = {}, {}
    for kind in ("ref", "sut"):
        directory = tmp_path / kind
        directory.mkdir()
        config = directory / "alsa.conf"
        pcm = f'pcm.pulseout {{ type pulse server "unix:{pulse}" }}\n'
        audiofiles.write_alsa_config(config, pcm)
        server = server_factory(kind, env={"ALSA_CONFIG_PATH": str(config)},
                                outputs=[{"type": "alsa", "name": "Card", "device": "pulseout",
                                          "mixer_type": "hardware", "mixer_device": "pulsemix",
                                          "mixer_control": "Master"}])
        seen = []
        with server.connect() as c:
            for command in ("status", "getvol", "setvol 40", "status", "setvol 41"):
                reply = c.command(command)
                seen.append(_volume_line(reply) if command == "status" else reply)
        audiofiles.write_alsa_config(config, pcm + f'ctl.pulsemix {{ type pulse server "unix:{pulse}" }}\n')
        seen.append(_volume_line(server.query("status")))
        audiofiles.commands(server, f'add "{_first_song(server)}"', "play")
        assert mpdtest.wait_until(lambda: _volume_line(server.query("status")) != b"", mpdtest.scaled(10)), \
            (kind, server.log_tail())
        with server.connect() as c:
            for command in ("status", "setvol 60", "getvol", "stop", "status", "setvol 100"):
                reply = c.command(command)
                seen.append(_volume_line(reply) if command == "status" else reply)
        answers[kind] = seen
        logs[kind] = _mixer_log(server)
        # Before the PulseAudio daemon goes (mpd's mixer, watching a control whose server is gone, spins on EIO).
        server.stop()
    assert answers["sut"] == answers["ref"]
    assert logs["sut"] == logs["ref"]
    failure = "failed to attach to pulsemix: No such file or directory"
    refused = f"ACK [5@0] {{setvol}} Failed to set mixer for 'Card'; {failure}\n".encode()
    assert answers["ref"][:6] == [b"", b"OK\n", refused, b"", refused, b""]
    assert answers["ref"][7:] == [b"OK\n", b"volume: 60\nOK\n", b"OK\n", b"volume: 60\n", b"OK\n"]
    assert logs["ref"] == [f"mixer: Failed to read mixer for 'Card': {failure}",
                           f"mixer: Failed to set mixer for 'Card': {failure}",
                           f"mixer: Failed to set mixer for 'Card': {failure}"]
