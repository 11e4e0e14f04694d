#!/usr/bin/env python3
"""Generate a large mixed-format library for `make bench`: the formats in realistic proportions.

Usage:
    make-mixed-library.py OUTDIR [--songs N] [--quiet]

The songs and their tags are tools/make-fixtures.py's generated filler songs (the same artists, albums,
titles, dates, multi-valued and sort tags); each album is given one format, so that about 45 % of the
songs are FLAC, 35 % MP3, 6 % Ogg Vorbis, 4 % Opus, 6 % M4A (AAC), 2 % WAV and 2 % WavPack.  Each format's
audio is one short clip encoded once with Debian's tools (sox, flac, lame, oggenc, opusenc, ffmpeg,
wavpack); every song is a copy of its format's clip with its own tags, written with mutagen in memory
(FLAC's comment block by hand: it is a length-prefixed list), so 100000 songs stay cheap.

Idempotent: OUTDIR/.make-mixed-library.json records the parameters and the hashes of this script and
make-fixtures.py; the library is built in a temporary sibling directory and renamed into place.
"""

import argparse
import hashlib
import importlib.util
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAMP = ".make-mixed-library.json"
BASE_MTIME = 1_600_000_000

#: (format, share of albums in per mille, suffix)
FORMATS = [("flac", 450, "flac"), ("mp3", 350, "mp3"), ("vorbis", 60, "ogg"), ("opus", 40, "opus"),
           ("m4a", 60, "m4a"), ("wav", 20, "wav"), ("wavpack", 20, "wv")]


def load_fixtures():
    spec = importlib.util.spec_from_file_location("make_fixtures", HERE / "make-fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(*cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: {r.stderr.decode(errors='replace')[-1500:]}")


def encode_clips(work: Path) -> dict[str, bytes]:
    """One 0.5 s 22.05 kHz mono clip per format (the size of make-fixtures' filler clips)."""
    wav = work / "clip.wav"
    run("sox", "-D", "-n", "-r", "22050", "-c", "1", "-b", "16", wav, "synth", "0.5", "sine", "330", "vol", "0.5")
    out = {}
    run("flac", "-s", "-f", "--no-padding", "-o", work / "c.flac", wav)
    run("lame", "--quiet", "-b", "32", wav, work / "c.mp3")
    run("oggenc", "-Q", "-q", "0", "-o", work / "c.ogg", wav)
    run("opusenc", "--quiet", "--bitrate", "24", wav, work / "c.opus")
    run("ffmpeg", "-v", "error", "-y", "-i", wav, "-c:a", "aac", "-b:a", "32k", "-map_metadata", "-1",
        "-fflags", "+bitexact", "-flags:a", "+bitexact", work / "c.m4a")
    run("wavpack", "-q", "-y", wav, "-o", work / "c.wv")
    for name, path in (("flac", "c.flac"), ("mp3", "c.mp3"), ("vorbis", "c.ogg"), ("opus", "c.opus"),
                       ("m4a", "c.m4a"), ("wav", "clip.wav"), ("wavpack", "c.wv")):
        out[name] = (work / path).read_bytes()
    return out


def vorbis_pairs(tags: dict) -> list[tuple[str, str]]:
    names = {"title": "TITLE", "artist": "ARTIST", "album": "ALBUM", "albumartist": "ALBUMARTIST",
             "date": "DATE", "track": "TRACKNUMBER", "genre": "GENRE", "disc": "DISCNUMBER",
             "artistsort": "ARTISTSORT", "mb_albumid": "MUSICBRAINZ_ALBUMID",
             "mb_trackid": "MUSICBRAINZ_TRACKID", "composer": "COMPOSER", "comment": "COMMENT"}
    pairs = []
    for key, value in tags.items():
        if key in names:
            for v in (value if isinstance(value, list) else [value]):
                pairs.append((names[key], str(v)))
    return pairs


def flac_with_tags(clip: bytes, tags: dict) -> bytes:
    """The clip with its STREAMINFO and a new VORBIS_COMMENT block (the clip has no other blocks)."""
    assert clip[:4] == b"fLaC"
    header = clip[4:8]
    length = int.from_bytes(header[1:4], "big")
    streaminfo = clip[8:8 + length]
    rest = clip[8 + length:]
    while not header[0] & 0x80:        # skip any further blocks of the clip
        header = rest[:4]
        length = int.from_bytes(header[1:4], "big")
        rest = rest[4 + length:]
    body = struct.pack("<I", 7) + b"Fermata"
    entries = [f"{k}={v}".encode() for k, v in vorbis_pairs(tags)]
    body += struct.pack("<I", len(entries)) + b"".join(struct.pack("<I", len(e)) + e for e in entries)
    return (b"fLaC" + bytes([0]) + len(streaminfo).to_bytes(3, "big") + streaminfo
            + bytes([0x84]) + len(body).to_bytes(3, "big") + body + rest)


def mutagen_with_tags(kind: str, clip: bytes, tags: dict) -> bytes:
    from mutagen.apev2 import APEv2
    from mutagen.mp4 import MP4
    from mutagen.oggopus import OggOpus
    from mutagen.oggvorbis import OggVorbis
    from mutagen.wave import WAVE
    from mutagen.id3 import TALB, TIT2, TPE1, TRCK
    buf = io.BytesIO(clip)
    if kind in ("vorbis", "opus"):
        f = (OggVorbis if kind == "vorbis" else OggOpus)(buf)
        for k, v in vorbis_pairs(tags):
            f.setdefault(k, []).append(v) if k in f else f.__setitem__(k, [v])
        f.save(buf)
    elif kind == "m4a":
        f = MP4(buf)
        keys = {"title": "\xa9nam", "artist": "\xa9ART", "album": "\xa9alb", "albumartist": "aART",
                "date": "\xa9day", "genre": "\xa9gen"}
        for key, atom in keys.items():
            if key in tags:
                f[atom] = tags[key] if isinstance(tags[key], list) else [tags[key]]
        track = str(tags.get("track", "")).split("/")
        if track[0].isdigit():
            f["trkn"] = [(int(track[0]), int(track[1]) if len(track) > 1 and track[1].isdigit() else 0)]
        f.save(buf)
    elif kind == "wav":
        f = WAVE(buf)
        f.add_tags()
        f.tags.add(TIT2(encoding=3, text=str(tags.get("title", ""))))
        f.tags.add(TPE1(encoding=3, text=tags.get("artist", [""]) if isinstance(tags.get("artist"), list)
                        else [str(tags.get("artist", ""))]))
        f.tags.add(TALB(encoding=3, text=str(tags.get("album", ""))))
        f.tags.add(TRCK(encoding=3, text=str(tags.get("track", ""))))
        f.save(buf)
    elif kind == "wavpack":
        f = APEv2()
        for k, v in vorbis_pairs(tags):
            name = {"TRACKNUMBER": "Track", "DATE": "Year", "DISCNUMBER": "Disc"}.get(k, k.title())
            f[name] = f[name].value + "\0" + v if name in f else v
        f.save(buf)
    return buf.getvalue()


def build(out: Path, songs_wanted: int) -> int:
    fixtures = load_fixtures()
    work = Path(tempfile.mkdtemp(prefix=out.name + ".tmp-", dir=out.parent))
    try:
        lib = work / "lib"
        lib.mkdir()
        clips = encode_clips(work)
        mp3_clips = fixtures.encode_clips(str(work))
        songs = fixtures.filler_songs(songs_wanted, 0)
        album_format = {}
        cumulative = []
        total = 0
        for name, share, suffix in FORMATS:
            total += share
            cumulative.append((total, name, suffix))
        for i, (rel, clip, tags) in enumerate(songs):
            album = rel.rsplit("/", 1)[0]
            if album not in album_format:
                slot = int(hashlib.sha1(album.encode()).hexdigest()[:8], 16) % total
                album_format[album] = next((n, s) for c, n, s in cumulative if slot < c)
            kind, suffix = album_format[album]
            tags = {k: v for k, v in tags.items() if k not in ("id3", "v23_year")}
            if kind == "mp3":
                data = fixtures.render(mp3_clips[clip], tags)
            elif kind == "flac":
                data = flac_with_tags(clips["flac"], tags)
            else:
                data = mutagen_with_tags(kind, clips[kind], tags)
            path = lib / (rel[: -len(".mp3")] + "." + suffix)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            os.utime(path, (BASE_MTIME + i, BASE_MTIME + i))
        for d in sorted((p for p in lib.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            os.utime(d, (BASE_MTIME, BASE_MTIME))
        (lib / STAMP).write_text("")
        if out.exists():
            shutil.rmtree(out)
        os.rename(lib, out)
        return len(songs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--songs", type=int, default=100000)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    out = args.outdir.resolve()
    h = hashlib.sha256()
    for p in (Path(__file__).resolve(), HERE / "make-fixtures.py"):
        h.update(p.read_bytes())
    stamp = {"songs": args.songs, "sha256": h.hexdigest()}
    try:
        if json.loads((out / STAMP).read_text()) == stamp:
            return
    except (OSError, ValueError):
        pass
    out.parent.mkdir(parents=True, exist_ok=True)
    n = build(out, args.songs)
    (out / STAMP).write_text(json.dumps(stamp))
    os.utime(out / STAMP, (BASE_MTIME, BASE_MTIME))
    os.utime(out, (BASE_MTIME, BASE_MTIME))
    if not args.quiet:
        print(f"make-mixed-library: wrote {n} songs to {out}")


if __name__ == "__main__":
    main()
