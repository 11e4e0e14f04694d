#!/usr/bin/env python3
"""Writes the seeds of the `ffmpeg` fuzz target (each under 16 kB) into fuzz/corpus/ffmpeg.

Usage: fuzz/make-ffmpeg-seeds.py   (needs ffmpeg and python3-mutagen; the results are checked in, so the fuzz
target does not need these tools)

A seed is one byte choosing the file name suffix (the index into the target's list: m4a, mp4, wma, mka, webm,
ape, tta, ac3), then the file: AAC and ALAC in M4A with MP4 tags and a cover, WMA, FLAC/Opus/PCM in Matroska,
Opus in WebM, TTA, AC3 (FFmpeg has no APE encoder).
"""

import os
import subprocess
import tempfile

from mutagen.mp4 import MP4, MP4Cover, MP4FreeForm

HERE = os.path.dirname(os.path.abspath(__file__))
SUFFIXES = ["m4a", "mp4", "wma", "mka", "webm", "ape", "tta", "ac3"]
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def encode(suffix, codec, rate=8000, channels=1, seconds=0.1, metadata=(), tags=None):
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out." + suffix)
        meta = []
        for key, value in metadata:
            meta += ["-metadata", f"{key}={value}"]
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                        f"aevalsrc=0.5*sin(2*PI*(200+900*t)*t):s={rate}:d={seconds}", "-ac", str(channels),
                        *codec, "-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1", *meta,
                        out], check=True)
        if tags:
            f = MP4(out)
            for key, value in tags.items():
                f[key] = value
            f.save()
        with open(out, "rb") as f:
            return bytes([SUFFIXES.index(suffix)]) + f.read()


def main():
    out = os.path.join(HERE, "corpus", "ffmpeg")
    os.makedirs(out, exist_ok=True)
    mp4_tags = {"\xa9nam": ["T"], "\xa9ART": ["A", "B"], "aART": ["AA"], "trkn": [(3, 12)], "disk": [(1, 2)],
                "soar": ["S"], "----:com.apple.iTunes:MusicBrainz Track Id": [MP4FreeForm(b"id")],
                "----:com.apple.iTunes:replaygain_track_gain": [MP4FreeForm(b"-6 dB")],
                "covr": [MP4Cover(PNG, imageformat=MP4Cover.FORMAT_PNG)]}
    seeds = {
        "aac.m4a": encode("m4a", ["-c:a", "aac", "-b:a", "16k"], tags=mp4_tags),
        "alac.m4a": encode("m4a", ["-c:a", "alac", "-sample_fmt", "s16p"], seconds=0.05, tags={"\xa9nam": ["x"]}),
        "alac24.mp4": encode("mp4", ["-c:a", "alac", "-sample_fmt", "s32p"], seconds=0.03, channels=2),
        "wmav2.wma": encode("wma", ["-c:a", "wmav2", "-b:a", "32k"], rate=22050, seconds=0.2,
                            metadata=[("title", "W"), ("artist", "A"), ("track", "2")]),
        "flac.mka": encode("mka", ["-c:a", "flac"], seconds=0.1, metadata=[("title", "F"), ("ARTIST", "A")]),
        "pcm.mka": encode("mka", ["-c:a", "pcm_s16le"], seconds=0.05),
        "opus.webm": encode("webm", ["-c:a", "libopus", "-b:a", "16k"], rate=48000, seconds=0.1,
                            metadata=[("title", "O")]),
        "tta.tta": encode("tta", ["-c:a", "tta"], seconds=0.1),
        "ac3.ac3": encode("ac3", ["-c:a", "ac3", "-b:a", "64k"], rate=48000, seconds=0.1),
    }
    for name, data in seeds.items():
        assert len(data) < 16384, (name, len(data))
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
