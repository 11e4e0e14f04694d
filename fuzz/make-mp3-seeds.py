#!/usr/bin/env python3
"""Writes the seed MP3s of the `id3` and `mp3` fuzz targets (each a few kB) into fuzz/corpus/{id3,mp3}.

Usage: fuzz/make-mp3-seeds.py   (needs sox, lame and python3-mutagen; the results are checked in, so the fuzz
targets do not need these tools)

Seeds: CBR and VBR (Xing/LAME header) streams at MPEG-1, -2 and -2.5 rates, mono and stereo; ID3v2.4 with
several frames, an embedded picture and TXXX ReplayGain; ID3v2.3 in UTF-16 with an ID3v1 tag; an APEv2 tag;
an MP2 stream.
"""

import os
import subprocess
import tempfile

from mutagen.apev2 import APEv2
from mutagen.id3 import APIC, COMM, ID3, TALB, TCON, TDRC, TIT2, TPE1, TPOS, TRCK, TXXX

HERE = os.path.dirname(os.path.abspath(__file__))
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def encode(rate, channels, seconds, lame_args):
    """A sine sweep made with sox, encoded with lame."""
    with tempfile.TemporaryDirectory() as work:
        wav = os.path.join(work, "in.wav")
        out = os.path.join(work, "out.mp3")
        subprocess.run(["sox", "-n", "-r", str(rate), "-c", str(channels), "-b", "16", wav,
                        "synth", str(seconds), "sine", "300-3000"], check=True)
        subprocess.run(["lame", "--quiet", "--noreplaygain"] + lame_args + [wav, out], check=True)
        with open(out, "rb") as f:
            return f.read()


def tagged(audio, tag_writer):
    """`audio` with tags written by `tag_writer(path)`."""
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "x.mp3")
        with open(path, "wb") as f:
            f.write(audio)
        tag_writer(path)
        with open(path, "rb") as f:
            return f.read()


def id3v24(path):
    tags = ID3()
    tags.add(TIT2(encoding=3, text=["Straße", "Second"]))
    tags.add(TPE1(encoding=3, text=["Alpha"]))
    tags.add(TALB(encoding=3, text="One"))
    tags.add(TRCK(encoding=3, text="3/12"))
    tags.add(TPOS(encoding=3, text="1/2"))
    tags.add(TDRC(encoding=3, text="2001-02-03"))
    tags.add(TCON(encoding=3, text="(17)Rock"))
    tags.add(COMM(encoding=3, lang="eng", desc="", text="a comment"))
    tags.add(TXXX(encoding=3, desc="replaygain_track_gain", text="-6.5 dB"))
    tags.add(TXXX(encoding=3, desc="MusicBrainz Album Id", text="0f3c"))
    tags.add(APIC(encoding=3, mime="image/png", type=3, desc="cover", data=PNG))
    tags.save(path, v2_version=4)


def id3v23(path):
    tags = ID3()
    tags.add(TIT2(encoding=1, text="Ünïcödé"))
    tags.add(TPE1(encoding=1, text="İstanbul"))
    tags.add(APIC(encoding=0, mime="", type=0, desc="", data=PNG))
    tags.save(path, v2_version=3, v1=2)


def ape(path):
    tags = APEv2()
    tags["Title"] = "APE title"
    tags["Artist"] = ["One", "Two"]
    tags["REPLAYGAIN_ALBUM_GAIN"] = "-3 dB"
    tags["Custom"] = "value"
    tags.save(path)


def main():
    cbr_mono = encode(8000, 1, 0.3, ["-b", "8"])
    vbr = encode(44100, 2, 0.2, ["-V", "9"])
    seeds = {
        "cbr-8k-mono.mp3": cbr_mono,
        "vbr-44k-stereo.mp3": vbr,
        "cbr-22k.mp3": encode(22050, 2, 0.2, ["-b", "32"]),
        "cbr-32k-mpeg1.mp3": encode(32000, 1, 0.1, ["-b", "32", "--resample", "32"]),
        "id3v24.mp3": tagged(cbr_mono, id3v24),
        "id3v23-v1.mp3": tagged(vbr, id3v23),
        "ape.mp3": tagged(cbr_mono, ape),
        "tags-only.mp3": tagged(b"", id3v24),
    }
    for target in ("id3", "mp3"):
        directory = os.path.join(HERE, "corpus", target)
        os.makedirs(directory, exist_ok=True)
        for name, data in seeds.items():
            assert len(data) < 10_000, (name, len(data))
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
