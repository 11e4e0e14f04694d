#!/usr/bin/env python3
"""Writes the seed files of the `ogg` fuzz target (each at most 16 kB) into fuzz/corpus/ogg.

Usage: fuzz/make-ogg-seeds.py   (needs sox, oggenc, opusenc and python3-mutagen; the results are checked in,
so the fuzz target does not need these tools)

Seeds: short Vorbis streams (8 kHz mono, 11 kHz stereo) and Opus streams (mono, stereo), with comments, a
METADATA_BLOCK_PICTURE, R128 gains, and a two-stream chain.
"""

import base64
import os
import subprocess
import tempfile

import mutagen.oggopus
import mutagen.oggvorbis
from mutagen.flac import Picture

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "ogg")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def run(*cmd):
    subprocess.run(cmd, check=True, capture_output=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        def wav(name, rate, channels, seconds):
            path = os.path.join(work, name)
            run("sox", "-D", "-n", "-r", str(rate), "-c", str(channels), "-b", "16", path, "synth", str(seconds),
                "sine", "440", "vol", "0.5")
            return path

        seeds = {}
        v1 = os.path.join(work, "v1.ogg")
        run("oggenc", "-Q", "-q", "-1", "-s", "1", "-t", "T", "-a", "A", "-o", v1, wav("a.wav", 8000, 1, 0.3))
        seeds["vorbis-mono.ogg"] = v1
        v2 = os.path.join(work, "v2.ogg")
        run("oggenc", "-Q", "-q", "0", "-s", "2", "-o", v2, wav("b.wav", 11025, 2, 0.3))
        f = mutagen.oggvorbis.OggVorbis(v2)
        p = Picture()
        p.type, p.mime, p.data = 3, "image/png", PNG
        f["METADATA_BLOCK_PICTURE"] = [base64.b64encode(p.write()).decode()]
        f["TRACKNUMBER"] = ["03/12"]
        f["REPLAYGAIN_TRACK_GAIN"] = ["-3 dB"]
        f.save()
        seeds["vorbis-picture.ogg"] = v2
        o1 = os.path.join(work, "o1.opus")
        run("opusenc", "--quiet", "--serial", "3", "--bitrate", "6", wav("c.wav", 48000, 1, 0.2), o1)
        f = mutagen.oggopus.OggOpus(o1)
        f["R128_TRACK_GAIN"] = ["-512"]
        f["MOVEMENT"] = ["2"]
        f.save()
        seeds["opus-mono.opus"] = o1
        o2 = os.path.join(work, "o2.opus")
        run("opusenc", "--quiet", "--serial", "4", "--bitrate", "8", wav("d.wav", 48000, 2, 0.2), o2)
        seeds["opus-stereo.opus"] = o2
        for name, path in seeds.items():
            with open(path, "rb") as src, open(os.path.join(OUT, name), "wb") as dst:
                dst.write(src.read())
        with open(os.path.join(OUT, "vorbis-chain.ogg"), "wb") as dst:
            dst.write(open(v1, "rb").read() + open(v2, "rb").read())


if __name__ == "__main__":
    main()
