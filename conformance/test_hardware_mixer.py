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
