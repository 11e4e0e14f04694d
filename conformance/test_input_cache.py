"""The `input_cache` block: the song after the current one is read into memory as soon as the current one
starts, so it plays even when its file goes away (or its disk stalls) before its turn.

Fermata only, and on purpose: `mpd` 0.23.12 caches the song its decoder opens, but its prefetch of the next one
passes the song's URI relative to the music directory (`cache: Prefetch 'b.flac'` in its log), which its cache
takes for no local file, so a database song is never prefetched; here its next song is skipped as Fermata's is
without a cache (the control case). Each case takes about 5 s (songs of 3, 2 and 1 s; 127.0.0.1 only)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import audiofiles
import mpdtest


def _library(root: Path) -> Path:
    audiofiles.require_tools("sox")
    music = root / "music"
    music.mkdir()
    for name, seconds in (("a", 3), ("b", 2), ("c", 1)):
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(music / f"{name}.flac"),
                        "synth", str(seconds), "sine", "440", "gain", "-6"], check=True)
    return music


def _play_with_the_next_song_removed(server, music: Path, cached: bool) -> list[dict[str, str]]:
    """Queues a, b, c, plays a, removes b's file (once the cache has it, when `cached`), and returns every status
    until playback stops."""
    statuses: list[dict[str, str]] = []
    with server.connect() as client:
        for name in "abc":
            assert client.command(f"add {name}.flac") == b"OK\n"
        assert client.command("play 0") == b"OK\n"
        if cached:
            line = f"Cached '{music / 'b.flac'}'"
            if not mpdtest.wait_until(lambda: line in server.log_path.read_text(errors="replace"), 5):
                pytest.fail(f"no {line!r} in the log:\n{server.log_tail()}", pytrace=False)
        (music / "b.flac").unlink()

        def stopped() -> bool:
            statuses.append(mpdtest.parse_pairs(client.command("status")))
            return statuses[-1].get("state") == "stop"

        assert mpdtest.wait_until(stopped, 15, interval=0.1), statuses[-1]
    return statuses


def _heard(statuses: list[dict[str, str]], song: str) -> bool:
    """Whether a status showed `song` playing for a second or more."""
    return any(s.get("song") == song and s.get("state") == "play" and float(s.get("elapsed", "0")) >= 1
               for s in statuses)


@pytest.mark.parametrize("cached", [True, False], ids=["with-input_cache", "without"])
def test_the_next_song_plays_from_memory_once_prefetched(server_factory, tmp_path, cached):
    music = _library(tmp_path)
    extra = 'input_cache {\n    size "16 MB"\n}' if cached else ""
    server = server_factory("sut", music=music, log_level="verbose", audio_buffer_size="128", extra_config=extra)
    statuses = _play_with_the_next_song_removed(server, music, cached)
    assert _heard(statuses, "0")
    assert _heard(statuses, "1") == cached, statuses
    # c, after b, plays either way (without the cache, b fails and the player goes on).
    assert any(s.get("song") == "2" and s.get("state") == "play" for s in statuses), statuses
    log = server.log_path.read_text(errors="replace")
    assert (f"Prefetch '{music / 'b.flac'}'" in log) == cached
