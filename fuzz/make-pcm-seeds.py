#!/usr/bin/env python3
"""Writes the seeds of the `pcmfiles` fuzz target into fuzz/corpus/pcmfiles (checked in: fuzzing needs none
of the tools). Each seed is one selector byte (0 wav, 1 aiff, 2 au, 3 wv) then a tiny file made with sox,
wavpack and mutagen: WAV 8/16/24-bit and float, with RIFF INFO and with an ID3 chunk, AIFF with an ID3
chunk, AU, WavPack lossless and with an APEv2 tag. All under 4 kB."""

import struct
import subprocess
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "corpus" / "pcmfiles"
SELECTOR = {"wav": 0, "aiff": 1, "au": 2, "wv": 3}


def sox(path, bits=16, channels=1, encoding="signed-integer", samples=200):
    subprocess.run(["sox", "-R", "-D", "-r", "8000", "-c", str(channels), "-n", "-b", str(bits), "-e", encoding,
                    str(path), "synth", f"{samples}s", "sine", "440"], check=True)
    return path


def id3(path, module):
    from mutagen import aiff, wave
    from mutagen.id3 import APIC, TIT2, TXXX
    f = (wave.WAVE if module == "wave" else aiff.AIFF)(str(path))
    f.add_tags()
    f.tags.add(TIT2(encoding=3, text=["t"]))
    f.tags.add(TXXX(encoding=3, desc="replaygain_track_gain", text=["-1 dB"]))
    f.tags.add(APIC(encoding=3, mime="image/png", type=3, desc="", data=b"\x89PNG"))
    f.save()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        seeds = {
            "u8.wav": sox(t / "u8.wav", bits=8, encoding="unsigned-integer"),
            "s16-stereo.wav": sox(t / "s16.wav", channels=2),
            "s24.wav": sox(t / "s24.wav", bits=24),
            "float.wav": sox(t / "f.wav", bits=32, encoding="floating-point"),
            "s16.au": sox(t / "s16.au"),
        }
        info = sox(t / "info.wav")
        data = bytearray(info.read_bytes())
        body = b"INFO" + b"INAM" + struct.pack("<I", 2) + b"t\0" + b"ITRK" + struct.pack("<I", 6) + b"03/12\0"
        data += b"LIST" + struct.pack("<I", len(body)) + body
        data[4:8] = struct.pack("<I", len(data) - 8)
        info.write_bytes(bytes(data))
        seeds["info.wav"] = info
        seeds["id3.wav"] = sox(t / "id3.wav")
        id3(seeds["id3.wav"], "wave")
        seeds["id3.aiff"] = sox(t / "id3.aiff")
        id3(seeds["id3.aiff"], "aiff")
        subprocess.run(["wavpack", "-q", "-y", str(sox(t / "w.wav", channels=2, samples=400)), "-o",
                        str(t / "plain.wv")], check=True)
        seeds["plain.wv"] = t / "plain.wv"
        subprocess.run(["cp", str(t / "plain.wv"), str(t / "ape.wv")], check=True)
        from mutagen.apev2 import APEv2
        tag = APEv2()
        tag["Title"] = "t"
        tag["Artist"] = "a\0b"
        tag["REPLAYGAIN_TRACK_GAIN"] = "-1 dB"
        tag.save(str(t / "ape.wv"))
        seeds["ape.wv"] = t / "ape.wv"
        for name, path in seeds.items():
            suffix = name.rsplit(".", 1)[1]
            blob = bytes([SELECTOR[suffix]]) + path.read_bytes()
            assert len(blob) <= 4096, (name, len(blob))
            (OUT / name).write_bytes(blob)


if __name__ == "__main__":
    main()
