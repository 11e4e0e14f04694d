"""Test audio made at test time, and the reference decodes to compare with.

Tones come from `sox`, MP3s from `lame` (each file with its LAME/Info header, which
carries the encoder delay and padding that gapless playback trims), reference PCM from
`mpg123` (the command-line player on the same libmpg123 Fermata decodes with).

Fermata (like mpd) decodes MP3 to 24-bit samples in 32-bit words, rounding
libmpg123's 32-bit output to 24 bits.  `mpg123 -s` writes 16-bit samples made by
its own 16-bit synthesis, which rounds differently: about 0.2 % of the samples differ
by one step from a 24-bit decode converted to 16 bits.  So the exact comparison is
`mpg123 -s -e s32` rounded to 24 bits like the decoder does, against what the ALSA
device received as S24_LE; the 16-bit path is checked against plain `mpg123 -s`
within one step.
"""

from __future__ import annotations

import array
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

RATE = 44100


def require_tools(*names: str) -> None:
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (scripts/install-deps.sh test)")


def outside_and_inside(root: Path) -> tuple[Path, Path]:
    """For a local client's files outside the music directory: `root/outside` holding `one.mp3` (title "Outside
    MP3"), `two.m4a` (AAC, only FFmpeg reads it; title "Outside M4A") and `notes.txt` (no song), and a music
    directory `root/music` holding `inside.mp3` (a copy of `one.mp3`). Needs sox, lame and ffmpeg."""
    require_tools("sox", "lame", "ffmpeg")
    outside = root / "outside"
    outside.mkdir()
    wav = tone_wav(outside / "tone.wav", 1.5)
    subprocess.run(["lame", "--quiet", "--tt", "Outside MP3", str(wav), str(outside / "one.mp3")], check=True,
                   timeout=60)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-i", str(wav), "-c:a", "aac", "-b:a", "96k",
                    "-metadata", "title=Outside M4A", str(outside / "two.m4a")], check=True, timeout=60)
    (outside / "notes.txt").write_text("not a song\n")
    music = root / "music"
    music.mkdir()
    shutil.copyfile(outside / "one.mp3", music / "inside.mp3")
    return outside, music


def tone_wav(path: Path, seconds: float, synth: str = "sine 440 sine 660", gain: float = -6) -> Path:
    """A stereo 16-bit tone (`synth` as sox's effect arguments: one generator per channel)."""
    subprocess.run(["sox", "-n", "-r", str(RATE), "-c", "2", "-b", "16", str(path),
                    "synth", str(seconds), *synth.split(), "gain", str(gain)], check=True, timeout=60)
    return path


def encode(wav: Path, mp3: Path, tags: dict[str, str] | None = None, bitrate: int = 128) -> Path:
    """`lame` at a constant bit rate, with ID3 tags (`--tt --ta --tl --tn`)."""
    flags = {"title": "--tt", "artist": "--ta", "album": "--tl", "track": "--tn"}
    args = []
    for key, value in (tags or {}).items():
        args += [flags[key], value]
    mp3.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["lame", "--quiet", "-b", str(bitrate), *args, str(wav), str(mp3)], check=True, timeout=120)
    return mp3


def split_wav(wav: Path, at_frame: int, first: Path, second: Path) -> None:
    """Cut `wav` into two files at frame `at_frame` (sox `trim` in samples)."""
    subprocess.run(["sox", str(wav), str(first), "trim", "0", f"{at_frame}s"], check=True, timeout=60)
    subprocess.run(["sox", str(wav), str(second), "trim", f"{at_frame}s"], check=True, timeout=60)


def mpg123_s32(mp3: Path) -> array.array:
    """`mpg123 -s -e s32` (gapless trimming is on by default), rounded to 24 bits as Fermata's decoder does."""
    raw = subprocess.run(["mpg123", "-q", "-s", "-e", "s32", str(mp3)], check=True, capture_output=True,
                         timeout=120).stdout
    words = array.array("i", raw)
    top = (1 << 23) - 1
    return array.array("i", (min((w + 128) >> 8, top) for w in words))


def mpg123_s16(mp3: Path) -> array.array:
    """`mpg123 -s`: 16-bit native-endian samples."""
    raw = subprocess.run(["mpg123", "-q", "-s", str(mp3)], check=True, capture_output=True, timeout=120).stdout
    return array.array("h", raw)


def mp3_frame_offsets(data: bytes) -> list[int]:
    """Where each frame of an MPEG-1 layer III stream at 44.1 kHz starts, from its first byte (no leading tag) to
    the first bytes that are not a frame header (the ID3v1 tag, if any)."""
    rates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0]
    offsets: list[int] = []
    offset = 0
    while offset + 4 <= len(data) and data[offset] == 0xFF and data[offset + 1] & 0xE0 == 0xE0:
        length = 144 * rates[data[offset + 2] >> 4] * 1000 // RATE + ((data[offset + 2] >> 1) & 1)
        if length == 0:
            break
        offsets.append(offset)
        offset += length
    return offsets


def id3v24_txxx(pairs: dict[str, str]) -> bytes:
    """An ID3v2.4 tag of `TXXX` frames (UTF-8), one per description and value."""
    def syncsafe(size: int) -> bytes:
        return bytes((size >> shift) & 0x7F for shift in (21, 14, 7, 0))
    frames = b""
    for name, value in pairs.items():
        body = b"\x03" + name.encode() + b"\x00" + value.encode()
        frames += b"TXXX" + syncsafe(len(body)) + b"\x00\x00" + body
    return b"ID3\x04\x00\x00" + syncsafe(len(frames)) + frames


def wav_samples(wav: Path) -> array.array:
    """A 16-bit WAV's samples (sox to raw)."""
    raw = subprocess.run(["sox", str(wav), "-t", "raw", "-e", "signed", "-b", "16", "-"], check=True,
                         capture_output=True, timeout=60).stdout
    return array.array("h", raw)


def synthesize(directory: Path, songs: dict[str, list[str]], effects: list[str]) -> None:
    """Makes each song of `songs` in `directory` with sox: its arguments up to `synth` are the output's (rate,
    channels, bits), the rest the synthesis, followed by `effects` (such as `gain -10`)."""
    for name, args in songs.items():
        at = args.index("synth")
        subprocess.run(["sox", "-n", *args[:at], str(directory / name), *args[at:], *effects], check=True,
                       timeout=60)


def file_pcm(name: str, path_pattern: str) -> str:
    """An ALSA PCM `name` that writes raw PCM to `path_pattern` (`%f` becomes the sample format's name,
    `%r` the rate, `%c` the channels) over the `null` plugin, which takes samples as fast as they come."""
    return (f'pcm.{name} {{\n    type file\n    slave {{ pcm {{ type null }} }}\n'
            f'    file "{path_pattern}"\n    format "raw"\n}}\n')


def write_alsa_config(path: Path, text: str) -> None:
    """Replace the file (a new inode, so that alsa-lib's `snd_config_update` sees the change)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def first_difference(got: array.array, want: array.array) -> str:
    for index, (a, b) in enumerate(zip(got, want)):
        if a != b:
            frame, channel = divmod(index, 2)
            return f"first difference at frame {frame} channel {channel}: got {a}, want {b}"
    return f"lengths differ: got {len(got)} samples, want {len(want)}"


#: Where the two gapless tracks are cut from their common tone (not on an MP3 frame boundary).
GAPLESS_CUT = 77_777
#: Seconds of each generated file.
LENGTHS = {"tone.mp3": 3, "Gapless": 4, "long.mp3": 20, "Session": 30}


def build_library(root: Path) -> Path:
    """`root/music`: tone.mp3 (3 s, 440 Hz left, 660 Hz right); Gapless/1 first.mp3 and
    Gapless/2 second.mp3, one 4 s sweep cut at frame GAPLESS_CUT, each encoded on its own;
    long.mp3 (20 s); Session/1…3 (30 s each, tagged).  `root/wav` keeps the sources."""
    music = root / "music"
    wav = root / "wav"
    music.mkdir()
    wav.mkdir()
    encode(tone_wav(wav / "tone.wav", LENGTHS["tone.mp3"]), music / "tone.mp3")
    sweep = tone_wav(wav / "sweep.wav", LENGTHS["Gapless"], "sine 200-2000 sine 300-3000")
    split_wav(sweep, GAPLESS_CUT, wav / "first.wav", wav / "second.wav")
    encode(wav / "first.wav", music / "Gapless" / "1 first.mp3")
    encode(wav / "second.wav", music / "Gapless" / "2 second.mp3")
    encode(tone_wav(wav / "long.wav", LENGTHS["long.mp3"], "sine 330 sine 440"), music / "long.mp3", bitrate=64)
    for number, (title, pitch) in enumerate([("Alpha", 262), ("Bravo", 294), ("Charlie", 330)], start=1):
        source = tone_wav(wav / f"s{number}.wav", LENGTHS["Session"], f"sine {pitch} sine {pitch}")
        encode(source, music / "Session" / f"{number} {title}.mp3", bitrate=64,
               tags={"title": title, "artist": "Fermata Test", "album": "Session", "track": str(number)})
    return music


# ---------------------------------------------------------------------------
# Recording what a server's ALSA output writes (alsa-lib's `file` plugin)

def status_of(server) -> dict[str, str]:
    """The server's `status` as a dict."""
    import mpdtest
    return mpdtest.parse_pairs(server.query("status"))


def commands(server, *lines: str) -> None:
    """Sends each line on one connection; none may fail."""
    with server.connect() as c:
        for line in lines:
            reply = c.command(line)
            assert not reply.startswith(b"ACK"), f"{server.label}: {line!r} -> {reply!r}"


def file_recorder(server_factory, kind: str, music: Path, directory: Path, mixer_type: str = "none",
                  output: dict[str, str] | None = None, **settings):
    """A server (`kind` "ref" or "sut") whose only output is an ALSA `file` PCM writing
    directory/rec-FORMAT-RATE-CHANNELS.raw, with `mixer_type`, the output's other keys in `output` (such as
    `format`) and the server `settings` given."""
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "alsa.conf"
    write_alsa_config(config, file_pcm("rec", str(directory / "rec-%f-%r-%c.raw")))
    return server_factory(kind, music=music, env={"ALSA_CONFIG_PATH": str(config)},
                          outputs=[{"type": "alsa", "name": "Recorder", "device": "rec", "mixer_type": mixer_type,
                                    **(output or {})}],
                          **settings)


#: mpd's ALSA output order (PcmExport's `alsa_channel_order`) for 5 to 8 channels: the source channel each
#: ALSA channel takes (FL FR FC LFE BL BR SL SR -> FL FR BL BR FC LFE SL SR; 7.0's back centre last).
ALSA_CHANNEL_SOURCES = {5: [0, 1, 3, 4, 2], 6: [0, 1, 4, 5, 2, 3], 7: [0, 1, 5, 6, 2, 3, 4],
                        8: [0, 1, 4, 5, 2, 3, 6, 7]}


def to_alsa_order(samples: array.array, channels: int) -> array.array:
    """Interleaved samples in the decoders' channel order (FLAC's, WAV's, Vorbis's) moved into the order
    mpd's ALSA output writes (unchanged below 5 channels)."""
    sources = ALSA_CHANNEL_SOURCES.get(channels)
    if sources is None:
        return samples
    out = array.array(samples.typecode, samples)
    for frame in range(0, len(samples) - channels + 1, channels):
        for channel, source in enumerate(sources):
            out[frame + channel] = samples[frame + source]
    return out


def recording_mismatch(label: str, ref: tuple[str, bytes], sut: tuple[str, bytes]) -> str | None:
    """How the system under test's recording (file name, bytes) differs from mpd's, or None when the names
    are equal and mpd's bytes are the SUT's followed by silence (what the device still took after the song;
    DSD's silence is 0x69)."""
    (ref_name, ref_data), (sut_name, sut_data) = ref, sut
    padding = ref_data[len(sut_data):]
    silence = 0x69 if ref_name.startswith("rec-DSD") else 0
    if sut_name == ref_name and ref_data[:len(sut_data)] == sut_data and padding.count(silence) == len(padding):
        return None
    index = next((i for i, (a, b) in enumerate(zip(sut_data, ref_data)) if a != b), min(len(sut_data), len(ref_data)))
    return f"{label}: {sut_name} ({len(sut_data)} bytes) / {ref_name} ({len(ref_data)} bytes): first difference at {index}"


def record_queue(server, directory: Path, lines: list[str]) -> tuple[str, bytes]:
    """Runs `lines` (which start playback) after `clear`, waits for the end of the queue and for the
    recording to stop growing; its file name and bytes."""
    import mpdtest
    for old in directory.glob("rec-*.raw"):
        old.unlink()
    commands(server, "clear", *lines)
    if not mpdtest.wait_until(lambda: status_of(server).get("state") == "stop", mpdtest.scaled(30)):
        pytest.fail(f"{server.label} did not reach the end of the queue", pytrace=False)
    return settled_recording(server, directory)


def settled_recording(server, directory: Path) -> tuple[str, bytes]:
    """The one recording in directory, once it stopped growing: its file name and bytes."""
    import mpdtest
    size = -1
    deadline = time.monotonic() + mpdtest.scaled(10)
    while time.monotonic() < deadline:       # the file plugin writes its buffer on drain/close
        files = list(directory.glob("rec-*.raw"))
        if len(files) == 1 and files[0].stat().st_size == size and size > 0:
            return files[0].name, files[0].read_bytes()
        size = files[0].stat().st_size if len(files) == 1 else -1
        time.sleep(mpdtest.scaled(0.3))
    pytest.fail(f"{server.label}: no stable recording in {directory}", pytrace=False)

