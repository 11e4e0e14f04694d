"""What `status` says when a song cannot be decoded, against mpd.

mpd's decoder thread tries each plugin for the suffix; a plugin either declines (returns without
decoding: the next one is tried) or throws. When one throws, the error is "Failed to decode <absolute
path>; <its message>" (the input layer's "Failed to open '<path>': <reason>" when the file is gone);
when every plugin declined, "Failed to decode <URI>". A song that decodes to nothing, or whose decoder
stops at a frame it cannot decode, ends without an error.

Two sources of broken songs: the multi-format library's broken files (in the database, as mpd scanned
them), and FLAC, MP3, Ogg Vorbis and WAV files that change after the scan (overwritten with garbage,
emptied, cut after 200 bytes, removed).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import formatcases

#: Broken files of the multi-format library that mpd adds to its database.
LIBRARY_BROKEN = ["flac/broken/streaminfo_rate0.flac", "flac/broken/streaminfo_short.flac",
                  "flac/broken/truncated_audio.flac", "mpcfaad/broken/garbage.aac",
                  "mpcfaad/broken/header-only.mpc", "mpcfaad/broken/truncated.aac",
                  "pcmfiles/broken/header-only.wav", "pcmfiles/broken/truncated.wav",
                  "ogg/damaged/corrupt-middle.ogg", "ogg/damaged/truncated-half.opus"]

#: How a file changes after the scan.
CHANGES = ["garbage", "empty", "head", "removed"]
SUFFIXES = ["flac", "mp3", "ogg", "wav"]


def play_to_the_end(server, uri: str) -> dict[str, str]:
    """Plays `uri` alone; state and error once it stopped (or after 5 s), then clears both."""
    return formatcases.state_after_playing(server, uri, ("state", "error"), timeout=5)


@pytest.mark.parametrize("uri", LIBRARY_BROKEN)
def test_broken_library_files(format_pair, uri):
    """The same state and `error:` as mpd (both servers read the same library, so the paths agree)."""
    want = play_to_the_end(format_pair.ref, uri)
    assert want["state"] == "stop"
    assert play_to_the_end(format_pair.sut, uri) == want


def make_sources(directory: Path) -> dict[str, bytes]:
    """Half a second of a stereo tone in each format, generated with sox, flac, lame and oggenc."""
    directory.mkdir(parents=True, exist_ok=True)
    wav = directory / "tone.wav"
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wav), "synth", "0.5", "sine", "440"],
                   check=True, capture_output=True)
    encoders = {"flac": ["flac", "-s", "-f", str(wav), "-o"], "mp3": ["lame", "--quiet", str(wav)],
                "ogg": ["oggenc", "-Q", str(wav), "-o"]}
    sources = {"wav": wav.read_bytes()}
    for suffix, command in encoders.items():
        target = directory / f"tone.{suffix}"
        subprocess.run([*command, str(target)], check=True, capture_output=True)
        sources[suffix] = target.read_bytes()
    shutil.rmtree(directory)
    return sources


def test_files_changed_after_the_scan(server_factory, tmp_path):
    """Songs whose files changed after the database was made: the same state and `error:` as mpd, with the
    music directory's path in it."""
    sources = make_sources(tmp_path / "sources")
    music = tmp_path / "music"
    (music / "changed").mkdir(parents=True)
    uris = []
    for suffix in SUFFIXES:
        for change in CHANGES:
            (music / "changed" / f"{change}.{suffix}").write_bytes(sources[suffix])
            uris.append(f"changed/{change}.{suffix}")
    ref = server_factory("ref", music=music)
    sut = server_factory("sut", music=music)
    for uri in uris:
        path = music / uri
        change = path.stem
        data = path.read_bytes()
        if change == "garbage":
            path.write_bytes(bytes((i * 37 + 11) & 0xFF for i in range(len(data))))
        elif change == "empty":
            path.write_bytes(b"")
        elif change == "head":
            path.write_bytes(data[:200])
        else:
            path.unlink()
    mismatches = []
    for uri in uris:
        want = play_to_the_end(ref, uri)
        got = play_to_the_end(sut, uri)
        if got != want:
            mismatches.append(f"{uri}: mpd {want}, Fermata {got}")
    assert not mismatches, "\n".join(mismatches)
