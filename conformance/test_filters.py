"""The filter chain against mpd's, sample for sample: `volume_normalization "yes"` (mpd's `normalize` filter, its
AudioCompress compressor, first in every output's chain) and `filter { … }` templates named by an output's
`filters` list (`route`, `null`, `normalize`), recorded through alsa-lib's `file` PCM.

The songs are made here: FLAC files whose level jumps between quiet and loud passages (the compressor raises
the quiet ones over a few of mpd's chunks, holds back before a loud one, and carries its history from one song
to the next), at 16 bits and at 24 bits (mpd's conversion to 16 bits, dithered, in front of the compressor).
mpd's chain order is checked through the software mixer (after the chain) and ReplayGain's widening of 16-bit
samples (before it). A template that fails (a bad `routes`) is logged with mpd's message, and both servers play
through the filters set up before it; a key a used template's plugin does not read is warned about.

mpd's order around the chain: `audio_output_format` converts in the decoder, before everything (so the chain,
and the compressor's blocks, work on the converted samples); an output's own `format` (and its resampling)
converts after the chain. Resampled cases use libsamplerate's `Fastest Sinc Interpolator` (both servers'
default, no `resampler` block) or, where named, soxr's `very high` recipe (a `resampler` block for both). DSD
goes through the chain too: a `normalize` makes it PCM first (24 bits at 352800 Hz, dithered to 16 bits), a
`route` moves its bytes (a silent channel gets DSD's silence). 12 cases, about 3 s each.
"""

from __future__ import annotations

import array
import math
import subprocess
import wave
from pathlib import Path

import pytest

import audiofiles
import formatcases
import mpdtest


def dynamic_song(path: Path, rate: int, bits: int, seed: int) -> None:
    """A 1.2 s stereo FLAC: a quiet passage, a loud one, a very quiet one (different tones per channel)."""
    frames = int(rate * 1.2)
    scale = (1 << (bits - 1)) - 1
    samples = array.array("i")
    for n in range(frames):
        t = n / rate
        level = 0.02 if t < 0.4 else (0.7 if t < 0.6 else 0.004)
        left = level * math.sin(2 * math.pi * (330 + 40 * seed) * t)
        right = level * 0.6 * math.sin(2 * math.pi * (550 + 30 * seed) * t + 0.3)
        samples.extend((int(left * scale), int(right * scale)))
    wav = path.with_suffix(".wav")
    width = bits // 8
    data = b"".join(s.to_bytes(width, "little", signed=True) for s in samples)
    with wave.open(str(wav), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(data)
    subprocess.run(["flac", "-s", "-f", "-o", str(path), str(wav)], check=True)
    wav.unlink()


@pytest.fixture(scope="module")
def dynamic_music(tmp_path_factory) -> Path:
    audiofiles.require_tools("flac")
    music = tmp_path_factory.mktemp("filters-music")
    dynamic_song(music / "a16.flac", 44100, 16, 0)
    dynamic_song(music / "b16.flac", 44100, 16, 1)
    dynamic_song(music / "c24.flac", 48000, 24, 2)
    # A DSD64 song (the DSD fixtures' tone, about 1 s).
    dsd = formatcases.format_library("dsd", only="dsd") / "dsd" / "tone-dsd64.dsf"
    (music / "tone-dsd64.dsf").write_bytes(dsd.read_bytes())
    return music


ROUTES = """
filter {
    plugin "route"
    name "swap3"
    routes "1>0, 0>1, 0 > 2"
}
filter {
    plugin "null"
    name "nothing"
    level "3"
}
filter {
    plugin "normalize"
    name "norm"
}
filter {
    plugin "route"
    name "bad"
    routes "0>1 1>0"
}
"""

SOXR = """
resampler {
    plugin "soxr"
    quality "very high"
}
"""

CASES = {
    # Two songs of one format: the compressor's history goes on from one to the next (gapless).
    "normalization": dict(settings={"volume_normalization": "yes"}, queue=["a16.flac", "b16.flac"]),
    # Software volume after the chain; ReplayGain's 16-to-24-bit widening before it, then mpd's dither to 16
    # bits.
    "normalization with software volume": dict(
        settings={"volume_normalization": "yes"}, mixer="software", volume=["setvol 60"],
        queue=["b16.flac", "a16.flac"]),
    # A 24-bit song: dithered to 16 bits in front of the compressor.
    "normalization of 24 bits": dict(settings={"volume_normalization": "yes"}, queue=["c24.flac"]),
    # A route to three channels, a null filter (whose unknown key is warned about), then a normalize template.
    "route and normalize templates": dict(output={"filters": "swap3,nothing,norm"}, queue=["a16.flac"],
                                          log="option 'level' on line"),
    # The chain stops at a bad template: logged, the filters before it kept.
    "bad template": dict(output={"filters": "swap3,bad,norm"}, queue=["a16.flac"],
                         log="Failed to initialize filter chain for 'Recorder': Malformed 'routes' specification"),
    # audio_output_format widens to 24 bits in the decoder: the compressor's input is dithered back to 16 bits,
    # and its blocks are mpd's chunks of 24-bit samples (half as many frames).
    "normalization after audio_output_format 24 bits": dict(
        settings={"volume_normalization": "yes", "audio_output_format": "*:24:*"}, queue=["a16.flac", "b16.flac"]),
    # audio_output_format resamples in the decoder (libsamplerate), then the compressor at 48000 Hz.
    "normalization after audio_output_format resampled": dict(
        settings={"volume_normalization": "yes", "audio_output_format": "48000:16:2"}, queue=["a16.flac"]),
    # The same with soxr's "very high" recipe, and a 24-bit song that becomes 16 bits in the decoder. Bit for bit
    # but at the song's end: neither decoder flushes libsoxr, and mpd asks it per call for the frames its plugin
    # submitted (a FLAC frame, 4096 here) times the ratio plus one, so where the sound stops depends on those
    # blocks; Fermata's decoder thread converts 1024 frames at a time (its sound ends within 200 frames of mpd's).
    "normalization after audio_output_format resampled by soxr": dict(
        settings={"volume_normalization": "yes", "audio_output_format": "32000:16:*"}, queue=["c24.flac"],
        config=SOXR, tail_frames=200),
    # audio_output_format makes the song mono before a route copies its one channel to three (one silent).
    "route after audio_output_format mono": dict(
        settings={"audio_output_format": "*:*:1"}, output={"filters": "swap3,norm"}, queue=["a16.flac"]),
    # The output's own format resamples after the chain: the compressor works at the song's rate.
    "normalization resampled by the output": dict(
        settings={"volume_normalization": "yes"}, output={"format": "48000:16:2"}, queue=["a16.flac", "b16.flac"]),
    # A DSD song through the normalize filter: made 16-bit PCM at 352800 Hz first.
    "DSD through normalize": dict(settings={"volume_normalization": "yes"}, queue=["tone-dsd64.dsf"]),
    # A DSD song through a route: still DSD, three channels, the silent one DSD's silence.
    "DSD through a route": dict(output={"filters": "swap3"}, queue=["tone-dsd64.dsf"]),
}


@pytest.mark.parametrize("case", CASES)
def test_filter_chain_samples_as_mpd(server_factory, dynamic_music, tmp_path, case):
    spec = CASES[case]
    got = {}
    servers = {}
    for kind in ("ref", "sut"):
        server = audiofiles.file_recorder(
            server_factory, kind, dynamic_music, tmp_path / kind, mixer_type=spec.get("mixer", "none"),
            output=spec.get("output"), extra_config=ROUTES + spec.get("config", ""), **spec.get("settings", {}))
        servers[kind] = server
        adds = [f'add "{uri}"' for uri in spec["queue"]]
        got[kind] = audiofiles.record_queue(server, tmp_path / kind, [*spec.get("volume", []), *adds, "play"])
    if "tail_frames" in spec:
        (ref_name, ref), (sut_name, sut) = got["ref"], got["sut"]
        assert sut_name == ref_name
        common = min(len(ref), len(sut))
        assert ref[:common] == sut[:common], f"first difference at {next(i for i in range(common) if ref[i] != sut[i])}"
        # 16-bit stereo frames of sound (mpd's recording ends in its last period's silence).
        assert abs(len(ref.rstrip(b"\0")) - len(sut)) <= 4 * spec["tail_frames"], (len(ref), len(sut))
    else:
        mismatch = audiofiles.recording_mismatch(case, got["ref"], got["sut"])
        assert mismatch is None, mismatch
    # The compressor changed the samples (a case that passes through unchanged would prove nothing).
    assert len(got["sut"][1]) > 40000
    if "log" in spec:
        for kind, server in servers.items():
            assert spec["log"] in server.log_path.read_text(errors="replace"), kind


@pytest.mark.parametrize("audio_output_format", ["48000:24:2", "*:*:1"])
def test_status_shows_the_converted_format_as_mpd(server_factory, dynamic_music, audio_output_format):
    """`audio:` in `status` stays the song's own format although audio_output_format converts it before the
    outputs (mpd shows its decoder's in_audio_format), once the decoder opened the song and while it plays
    (paused, so both show the same moment); the duration is the song's."""
    seen = {}
    for kind in ("ref", "sut"):
        server = server_factory(kind, music=dynamic_music, audio_output_format=audio_output_format)
        replies = mpdtest.settled_play(server, 'clear\nadd "a16.flac"\nplay\n')
        assert mpdtest.wait_until(lambda: b"\nbitrate: " in server.query("status"), 10)
        server.query("pause 1")
        paused = mpdtest.parse_pairs(server.query("status"))
        seen[kind] = (replies[1], {k: paused.get(k) for k in ("state", "audio", "duration")})
    ref_lines, sut_lines = (seen[kind][0].decode().splitlines() for kind in ("ref", "sut"))
    assert sut_lines == ref_lines, [(r, s) for r, s in zip(ref_lines, sut_lines) if r != s]
    assert seen["sut"][1] == seen["ref"][1]
    assert seen["ref"][1]["audio"] == "44100:16:2"
