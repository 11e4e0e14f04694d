"""Real clients while music plays: an mpc session, ncmpcpp in tmux, and ncmpc's Outputs screen (partitions).

The mpc session runs against mpd and against Fermata (each with two paced null outputs and a
software mixer, on the generated Session album of three 30 s songs); the transcripts must
be the same once the playing position is masked, and the test also checks what mpc shows
on its own, so that it fails if both servers went wrong the same way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

import pytest

import mpdtest
from mpdtest import HOST, scaled

MPC = shutil.which("mpc")
OUTPUTS = [{"type": "null", "name": "Speakers", "sync": "yes", "mixer_type": "software"},
           {"type": "null", "name": "Headphones", "sync": "yes", "mixer_type": "software"}]

#: What the session does: (mpc arguments, seconds to wait afterwards).
SESSION = [
    (["add", "Session"], 0), (["playlist"], 0),
    (["play"], 0.5), (["current"], 0),
    (["pause"], 0.2), (["status"], 0),
    (["play"], 0.2), (["next"], 0.5), (["current"], 0),
    (["seek", "0:10"], 0.3), (["status"], 0),
    (["seek", "+5"], 0.3), (["status"], 0),
    (["volume", "40"], 0), (["volume", "-10"], 0), (["volume"], 0),
    (["random", "on"], 0), (["repeat", "on"], 0), (["status"], 0),
    (["outputs"], 0), (["disable", "2"], 0.2), (["outputs"], 0), (["status"], 0),
    (["enable", "2"], 0.2), (["toggleoutput", "1"], 0.2), (["outputs"], 0), (["enable", "1"], 0.2),
    (["random", "off"], 0), (["prev"], 0.3), (["current"], 0),
    (["stop"], 0.2), (["status"], 0),
]

POSITION = re.compile(r"\d+:\d\d/(\d+:\d\d) \(\d+%\)")


def mpc(server, *args, timeout=10):
    r = subprocess.run([MPC, "-h", HOST, "-p", str(server.port), *args], capture_output=True, text=True,
                       timeout=scaled(timeout))
    return f"$ mpc {' '.join(args)} -> {r.returncode}\n{r.stdout}{r.stderr}"


def run_session(server) -> list[str]:
    out = []
    for args, wait in SESSION:
        out.append(mpc(server, *args))
        time.sleep(scaled(wait))
    return out


def masked(transcript: list[str]) -> list[str]:
    return [POSITION.sub(r"?:??/\1 (?%)", step) for step in transcript]


def test_mpc_session(server_factory, audio_music):
    if MPC is None:
        pytest.skip("mpc is not installed")
    ref = server_factory("ref", music=audio_music, outputs=OUTPUTS)
    sut = server_factory("sut", music=audio_music, outputs=OUTPUTS)
    want = run_session(ref)
    got = run_session(sut)
    assert masked(got) == masked(want), "\n".join(
        f"--- mpd:\n{w}+++ fermata:\n{g}" for w, g in zip(want, got) if POSITION.sub("", w) != POSITION.sub("", g))

    # What a user sees, checked on Fermata's own words.
    assert got[1].endswith("\nFermata Test - Alpha\nFermata Test - Bravo\nFermata Test - Charlie\n"), got[1]
    assert got[2].splitlines()[1:3] == ["Fermata Test - Alpha", "[playing] #1/3   0:00/0:30 (0%)"], got[2]
    assert "[paused]  #1/3" in got[5], got[5]
    assert got[8].endswith("\nFermata Test - Bravo\n"), got[8]
    seek_abs = POSITION.search(got[10]).group(0)
    assert seek_abs.startswith(("0:10/0:30", "0:11/0:30")), got[10]
    seek_rel = POSITION.search(got[12]).group(0)
    assert seek_rel.startswith(("0:15/0:30", "0:16/0:30")), got[12]
    assert "volume: 30%" in got[15], got[15]
    assert "repeat: on    random: on" in got[18], got[18]
    assert "Output 1 (Speakers) is enabled\nOutput 2 (Headphones) is enabled\n" in got[19], got[19]
    assert "Output 2 (Headphones) is disabled\n" in got[21], got[21]
    assert "[playing]" in got[22], "playback stopped when one of two outputs was disabled"
    assert "Output 1 (Speakers) is disabled\nOutput 2 (Headphones) is enabled\n" in got[25], got[25]
    assert got[29].endswith("\nFermata Test - Alpha\n"), got[29]
    assert "[playing]" not in got[31] and "[paused]" not in got[31], got[31]
    assert all(step.split("\n", 1)[0].endswith("-> 0") for step in got), "an mpc command failed"


# --- ncmpcpp ------------------------------------------------------------------------

def tmux(socket, *args, check=True):
    return subprocess.run(["tmux", "-S", str(socket), *args], capture_output=True, text=True, timeout=10,
                          check=check)


def test_ncmpcpp_shows_the_playing_song_and_the_queue(server_factory, audio_music, tmp_path):
    for tool in ("tmux", "ncmpcpp"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    server = server_factory("sut", music=audio_music, outputs=OUTPUTS[:1])
    with server.connect() as c:
        for line in ("clear", 'add "Session"', "play 1"):
            assert c.command(line) == b"OK\n", line
    home = tmp_path / "home"
    (home / ".config" / "ncmpcpp").mkdir(parents=True)
    socket = tmp_path / "tmux.sock"
    env = {**os.environ, "HOME": str(home), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    subprocess.run(["tmux", "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "-x", "150", "-y", "40",
                    f"ncmpcpp -h {HOST} -p {server.port}"], env=env, check=True, timeout=10)
    try:
        def screen():
            return tmux(socket, "capture-pane", "-p").stdout

        captured = []

        def shown():
            # The status line names the playing song (the second): once ncmpcpp's "Connected to …" message,
            # which takes that line for a few seconds, has gone.
            text = screen()
            captured[:] = [text]
            return all(t in text for t in ("Alpha", "Bravo", "Charlie")) and any(
                "Playing" in line and "Bravo" in line for line in text.splitlines())

        assert mpdtest.wait_until(shown, 15), f"ncmpcpp never showed the queue and the playing song:\n{captured}"
        text = captured[0]
        lines = text.splitlines()
        for title in ("Alpha", "Bravo", "Charlie"):
            assert any(title in line and "Fermata Test" in line for line in lines), (title, text)
        # It follows the server: pause shows in the status line.
        with server.connect() as c:
            assert c.command("pause 1") == b"OK\n"
        assert mpdtest.wait_until(lambda: "Paused" in screen(), 5), screen()
    finally:
        tmux(socket, "kill-server", check=False)


# --- ncmpc --------------------------------------------------------------------------

def _ncmpc_outputs_screens(server, tmp_path) -> list[str]:
    """ncmpc's Outputs screen (key 8) on `server`: first in the default partition, then after choosing the
    last partition in its list (Enter)."""
    home = tmp_path / "home"
    home.mkdir(parents=True)
    socket = tmp_path / "tmux.sock"
    env = {**os.environ, "HOME": str(home), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    subprocess.run(["tmux", "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "-x", "110", "-y", "16",
                    f"ncmpc --host={HOST} --port={server.port}"], env=env, check=True, timeout=10)
    try:
        def screen():
            return tmux(socket, "capture-pane", "-p").stdout

        screens = []
        assert mpdtest.wait_until(lambda: "8:Outputs" in screen(), 15), screen()
        tmux(socket, "send-keys", "8")
        assert mpdtest.wait_until(lambda: "[Create new partition]" in screen(), 10), screen()
        time.sleep(scaled(0.5))
        screens.append(screen())
        # The cursor starts on the first line: down to the last partition, then choose it.
        lines = screens[0].splitlines()
        last = max(i for i, line in enumerate(lines) if line.startswith("Partition: "))
        tmux(socket, "send-keys", *(["Down"] * (last - 2)), "Enter")
        assert mpdtest.wait_until(lambda: screen() != screens[0], 10), screen()
        time.sleep(scaled(0.5))
        screens.append(screen())
        return screens
    finally:
        tmux(socket, "kill-server", check=False)


def test_ncmpc_outputs_screen_shows_the_partitions_as_with_mpd(server_factory, audio_music, tmp_path):
    """ncmpc's Outputs screen lists the partition's outputs, then every partition, and switches partition on
    Enter: the same screens with Fermata as with mpd (two outputs, one moved to a second partition)."""
    for tool in ("tmux", "ncmpc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    got = {}
    for kind in ("ref", "sut"):
        server = server_factory(kind, music=audio_music, outputs=OUTPUTS)
        with server.connect() as c:
            for line in ("newpartition room2", "newpartition room3", "partition room3", 'moveoutput "Headphones"'):
                assert c.command(line) == b"OK\n", line
        got[kind] = _ncmpc_outputs_screens(server, tmp_path / kind)
    assert "Partition: room3" in got["ref"][0], got["ref"][0]
    # In room3 (chosen last), its own output.
    assert "] Headphones" in got["ref"][1] and "Speakers" not in got["ref"][1], got["ref"][1]
    assert got["sut"] == got["ref"]
