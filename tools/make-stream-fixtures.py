#!/usr/bin/env python3
"""Generate the files the stream tests serve over HTTP (conformance/test_streams.py), with Debian's tools.

Usage:
    make-stream-fixtures.py OUTDIR

- `plain.mp3`: 8 s of a stereo sine, LAME CBR 128 kbit/s, no tags (what a radio station sends);
- `tagged.mp3`: the same with an ID3v2 tag (artist, title);
- `tone.ogg`: 8 s, Vorbis quality 2, with comments; `tone.opus`: the same in Opus at 48 kbit/s;
  `tone.flac`: 4 s, 16-bit, with comments;
- `pictured.flac`, `pictured.mp3`, `pictured.ogg`: 4 s with tags and a 1×1 PNG as an embedded picture (a
  PICTURE block, an ID3v2 APIC frame with a TXXX frame, a METADATA_BLOCK_PICTURE comment): `readpicture` and
  `readcomments` of URLs;
- `noise.bin`: bytes no decoder takes; `cover.jpg`: 20000 bytes standing for a cover (`albumart` of a URL sends
  the bytes of the cover file beside it, whatever they are);
- `hls/tone.hls`: an HLS playlist of 4 s of AAC in MPEG-TS segments of 1 s (`hls/seg*.bin`; suffixes no plugin
  takes, so the library stays as it was), for `hls+http://` (mpd's ffmpeg input plugin);
- `radio.m3u`, `radio.pls`, `ext.m3u8`, `list.xspf`, `list.asx`, `feed.rss`, `sheet.cue`: playlists of the files
  above (relative entries), a URL on a closed loopback port and local files (refused over TCP); `mime-only`: `radio.m3u`'s text under a name without a
  suffix (found by its MIME type only).

Idempotent: OUTDIR/.stamp holds the hash of this script; when it matches, nothing is done.
"""

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))
from common import run, set_mtimes, sine_wav  # noqa: E402

#: A 1×1 PNG for the embedded pictures.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def add_pictures(out: Path):
    """The `pictured.*` files: tags and the PNG, written with mutagen."""
    import base64
    from mutagen.flac import FLAC, Picture
    from mutagen.id3 import APIC, ID3, TIT2, TPE1, TXXX
    from mutagen.oggvorbis import OggVorbis

    picture = Picture()
    picture.type, picture.mime, picture.desc, picture.width, picture.height, picture.depth = \
        3, "image/png", "cover", 1, 1, 32
    picture.data = PNG
    flac = FLAC(out / "pictured.flac")
    flac.add_picture(picture)
    flac.save()
    ogg = OggVorbis(out / "pictured.ogg")
    ogg["metadata_block_picture"] = [base64.b64encode(picture.write()).decode("ascii")]
    ogg.save()
    id3 = ID3()
    id3.add(TIT2(encoding=3, text="Pictured Title"))
    id3.add(TPE1(encoding=3, text="Pictured Artist"))
    id3.add(TXXX(encoding=3, desc="MOOD", text="calm"))
    id3.add(APIC(encoding=3, mime="image/png", type=3, desc="cover", data=PNG))
    id3.save(out / "pictured.mp3", v2_version=4)


def make(out: Path):
    with tempfile.TemporaryDirectory() as scratch:
        wav = sine_wav(Path(scratch) / "tone.wav", seconds=8)
        short = sine_wav(Path(scratch) / "short.wav", seconds=4, freq=330)
        run("lame", "--quiet", "-b", "128", "--cbr", wav, out / "plain.mp3")
        run("lame", "--quiet", "-b", "128", "--cbr", "--id3v2-only", "--ta", "Stream Artist", "--tt",
            "Stream Title", wav, out / "tagged.mp3")
        run("oggenc", "--quiet", "-q", "2", "-a", "Ogg Artist", "-t", "Ogg Title", "-o", out / "tone.ogg", wav)
        run("opusenc", "--quiet", "--bitrate", "48", "--artist", "Opus Artist", "--title", "Opus Title", wav,
            out / "tone.opus")
        run("flac", "--silent", "-T", "ARTIST=Flac Artist", "-T", "TITLE=Flac Title", "-o", out / "tone.flac",
            short)
        run("flac", "--silent", "-T", "ARTIST=Pictured Artist", "-T", "TITLE=Pictured Title", "-o",
            out / "pictured.flac", short)
        run("oggenc", "--quiet", "-q", "2", "-c", "artist=Pictured Artist", "-c", "title=Pictured Title", "-o",
            out / "pictured.ogg", short)
        run("lame", "--quiet", "-b", "128", "--cbr", short, out / "pictured.mp3")
        add_pictures(out)
        (out / "hls").mkdir()
        run("ffmpeg", "-nostdin", "-loglevel", "error", "-i", short, "-c:a", "aac", "-b:a", "64k", "-f", "hls",
            "-hls_time", "1", "-hls_playlist_type", "vod", "-hls_segment_filename", out / "hls" / "seg%d.bin",
            out / "hls" / "tone.hls")
    (out / "noise.bin").write_bytes(bytes((i * 37 + 11) % 256 for i in range(64 * 1024)))
    (out / "cover.jpg").write_bytes(bytes((i * 53 + 7) % 256 for i in range(20000)))
    # Remote playlists (`load URL`): entries relative to the playlist's URL, and a URL on a closed loopback port
    # (queued, never opened).
    # Local files it names are refused over TCP, as mpd's song loader refuses them.
    m3u = ("plain.mp3\n#a comment\ntagged.mp3\n\nhttp://127.0.0.1:9/other.mp3\n/etc/passwd\nfile:///etc/passwd\n"
           "../../etc/passwd\n")
    (out / "radio.m3u").write_text(m3u)
    (out / "mime-only").write_text(m3u)
    (out / "radio.pls").write_text("[playlist]\nFile1=tone.ogg\nTitle1=Ogg Stream\nLength1=8\n"
                                   "File2=http://127.0.0.1:9/x.mp3\nTitle2=Elsewhere\nLength2=-1\n"
                                   "NumberOfEntries=2\nVersion=2\n")
    (out / "ext.m3u8").write_text("#EXTM3U\n#EXTINF:8,Plain Stream\nplain.mp3\n#EXTINF:4,Flac Stream\ntone.flac\n")
    # The XML plugins' and the cue sheet's: entries relative and absolute, their titles and a refused local file.
    (out / "list.xspf").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<playlist version="1" xmlns="http://xspf.org/ns/0/">\n'
        "<trackList>\n<track><location>tone.ogg</location><title>Xspf Ogg</title><creator>Someone</creator>"
        "<album>An Album</album><duration>8000</duration></track>\n"
        "<track><location>http://127.0.0.1:9/x.mp3</location><title>Away</title></track>\n"
        "<track><location>/etc/passwd</location></track>\n</trackList>\n</playlist>\n")
    (out / "list.asx").write_text(
        '<asx version="3.0">\n<title>Asx List</title>\n<entry><title>Asx Plain</title><author>Somebody</author>'
        '<ref href="plain.mp3"/></entry>\n<entry><ref href="http://127.0.0.1:9/y.mp3"/></entry>\n</asx>\n')
    (out / "feed.rss").write_text(
        '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>A Feed</title>\n'
        '<item><title>Episode One</title><enclosure url="tagged.mp3" type="audio/mpeg" length="1"/></item>\n'
        '<item><title>Episode Two</title><enclosure url="http://127.0.0.1:9/z.mp3" type="audio/mpeg"/></item>\n'
        "</channel></rss>\n")
    (out / "sheet.cue").write_text(
        'PERFORMER "Cue Artist"\nTITLE "Cue Album"\nFILE "tone.flac" WAVE\n  TRACK 01 AUDIO\n'
        '    TITLE "First"\n    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    TITLE "Second"\n'
        "    PERFORMER \"Other\"\n    INDEX 01 00:02:00\n")
    set_mtimes(out)


def main():
    outdir = Path(sys.argv[1])
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    stamp = outdir / ".stamp"
    if stamp.exists() and stamp.read_text() == digest:
        return
    outdir.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=outdir.name + ".", dir=outdir.parent))
    make(build)
    (build / ".stamp").write_text(digest)
    shutil.rmtree(outdir, ignore_errors=True)
    os.rename(build, outdir)


if __name__ == "__main__":
    main()
