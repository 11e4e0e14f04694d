#!/usr/bin/env python3
"""Writes the seed FLAC files of the `flac` fuzz target (each a few kB) into fuzz/corpus/flac.

Usage: fuzz/make-flac-seeds.py   (needs sox, flac and python3-mutagen; the results are checked in, so the fuzz
target does not need these tools)

Seeds: 8-, 16- and 24-bit streams, mono, stereo and 6 channels, small and variable block sizes; Vorbis comments
with ReplayGain and MixRamp, a PICTURE block (and a "-->" URL picture), an ID3v2 tag in front; Ogg FLAC.
"""

import os
import subprocess
import tempfile

from mutagen.flac import FLAC, Picture

HERE = os.path.dirname(os.path.abspath(__file__))
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def encode(rate, channels, bits, seconds, flac_args):
    """A sine sweep made with sox, encoded with flac."""
    with tempfile.TemporaryDirectory() as work:
        wav = os.path.join(work, "in.wav")
        out = os.path.join(work, "out.flac")
        encoding = "unsigned-integer" if bits == 8 else "signed-integer"
        subprocess.run(["sox", "-D", "-n", "-r", str(rate), "-c", str(channels), "-b", str(bits), "-e", encoding,
                        wav, "synth", str(seconds), "sine", "300-3000", "vol", "0.5"], check=True)
        subprocess.run(["flac", "--silent", "--force", "--no-padding"] + flac_args + ["-o", out, wav], check=True)
        with open(out, "rb") as f:
            return f.read()


def tagged(audio, entries, pictures=()):
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "t.flac")
        with open(path, "wb") as f:
            f.write(audio)
        f = FLAC(path)
        f.tags.clear()
        for name, value in entries:
            f.tags.append((name, value))
        for mime, data in pictures:
            p = Picture()
            p.type = 3
            p.mime = mime
            p.data = data
            f.add_picture(p)
        f.save(padding=lambda info: 0)
        with open(path, "rb") as f:
            return f.read()


def main():
    out = os.path.join(HERE, "corpus", "flac")
    os.makedirs(out, exist_ok=True)
    small = ["--blocksize=192", "--lax"]
    seeds = {
        "s16-stereo.flac": encode(8000, 2, 16, 0.1, small),
        "s8-mono.flac": encode(8000, 1, 8, 0.1, small),
        "s24-stereo.flac": encode(8000, 2, 24, 0.05, small),
        "s16-6ch.flac": encode(8000, 6, 16, 0.03, small),
        "verbatim.flac": encode(8000, 1, 16, 0.05, small + ["-0", "--disable-constant-subframes",
                                                             "--disable-fixed-subframes"]),
        "ogg.oga": encode(8000, 2, 16, 0.1, small + ["--ogg", "--serial-number=1", "-T", "TITLE=Ogg"]),
    }
    seeds["tags.flac"] = tagged(encode(8000, 1, 16, 0.05, small), [
        ("TITLE", "Title"), ("ARTIST", "A"), ("ARTIST", "B"), ("TRACKNUMBER", "03/12"),
        ("REPLAYGAIN_TRACK_GAIN", "-7.5 dB"), ("REPLAYGAIN_ALBUM_PEAK", "0.9"), ("MIXRAMP_START", "-17 0;"),
        ("MIXRAMP_END", "-20 0.5;")])
    seeds["picture.flac"] = tagged(encode(8000, 1, 16, 0.03, small), [("TITLE", "Cover")],
                                   [("-->", b"http://example.com/x.png"), ("image/png", PNG)])
    # An ID3v2.4 tag (one TIT2 frame) in front of fLaC.
    frame = b"TIT2" + bytes([0, 0, 0, 4, 0, 0]) + b"\x03ID3"
    seeds["id3-front.flac"] = b"ID3\x04\x00\x00" + bytes([0, 0, 0, len(frame)]) + frame + seeds["s16-stereo.flac"]
    for name, data in seeds.items():
        assert len(data) < 16384, (name, len(data))
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
