#!/usr/bin/env python3
"""Generate a deterministic test music library of real MP3 files.

Usage:
    make-fixtures.py OUTDIR [--songs N] [--force]

The library has a fixed set of hand-written "awkward" songs, followed by
generated filler songs until N songs exist (N below the number of hand-written
songs, about 80, still gives all of them):

* special_songs(): UTF-8 tags with accents, CJK and emoji; quotes and
  backslashes in titles and file names; multi-valued Artist; AlbumArtist present
  and absent; sort tags; several Date forms; Track "3/12"; Disc; Genre; Composer;
  Performer; Comment; MusicBrainz ids; ID3v2.3 (UTF-16, Latin-1), ID3v2.4 and
  ID3v1-only files; an embedded picture;
* awkward_songs(): values that need Unicode case folding (ß, İ/ı, final sigma,
  ligatures, fullwidth, Kelvin sign, NFD, titlecase digraphs); Track/Disc such as
  "x", "03", "3/12", "-1", "+4", huge; Dates such as "c. 1990", "20010517",
  "1985-13-45"; missing Artist/Album/AlbumArtist, sort tags only, empty values
  (also inside a multi-valued tag), padded values, every tag multi-valued;
  5000-byte title, 4100-byte artist, 255-byte file names; ' " \\ and expression
  look-alikes in values and names; APEv2 only, APEv2 + ID3v2, APEv2 + ID3v1, an
  upper-case .MP3; TXXX/COMM frames; several APICs, a 120 kB APIC, an APIC
  without MIME type; album-art directories (cover.png/.jpg/.webp, all three, a
  100 kB cover.jpg, Cover.JPG, folder.jpg); .mpdignore (root and nested,
  inherited); a hidden file; a song in the root; a Latin-1 and a newline file name;
* extra files: zero-length, garbage, truncated, tag-only, bad-ID3-size and
  PNG-named-.mp3 files, non-audio files, a playlist, covers;
* symlinks: a loop back to the root, a link to its own directory, a second path
  to a song and to a directory, a dangling link;
* empty directories, a hidden directory.

Audio: a handful of short clips are synthesised with sox and encoded with lame
once; every song is a copy of one clip with its own tags (written with
mutagen into memory, then written out once), so large N (100000) stays cheap.

Idempotent: OUTDIR/.make-fixtures.json records the parameters and this
script's hash; if it matches, nothing is done.  A library is built in a
temporary sibling directory and renamed into place, so an interrupted run
never leaves a half-built OUTDIR behind.

Needs sox, lame and the Python module mutagen (Debian: sox lame python3-mutagen).
"""

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    from mutagen.apev2 import APEv2, APEValue, BINARY
    from mutagen.id3 import (APIC, COMM, ID3, TALB, TCOM, TCON, TDOR, TDRC,
                             TIT1, TIT2, TMCL, TPE1, TPE2, TPE3, TPE4, TPOS,
                             TPUB, TRCK, TSO2, TSOA, TSOP, TXXX, TYER, UFID,
                             TextFrame)
except ImportError:  # pragma: no cover
    sys.exit("make-fixtures: the Python module 'mutagen' is missing "
             "(apt-get install python3-mutagen)")

STAMP = ".make-fixtures.json"
FORMAT_VERSION = 2
DEFAULT_SONGS = 40
BASE_MTIME = 1_600_000_000  # 2020-09-13; every file gets BASE_MTIME + its index

# Audio clips: name -> (sample rate, channels, seconds, sine Hz, lame args).
CLIPS = {
    "cbr44": (44100, 2, 1.0, 440, ["-b", "128"]),
    "vbr44": (44100, 2, 1.5, 660, ["-V", "4"]),
    "cbr48": (48000, 2, 1.0, 550, ["-b", "160"]),
    "mono22": (22050, 1, 0.5, 330, ["-b", "32"]),
    "tiny8": (8000, 1, 0.3, 220, ["-b", "8"]),
}
FILLER_CLIPS = ["mono22", "tiny8"]  # small ones, so 100000 songs stay small

MB = "http://musicbrainz.org"
#: A TDRC frame that keeps its text verbatim (mutagen's own parses it as a
#: timestamp and would turn "c. 1990" into "").
RawTDRC = type("TDRC", (TextFrame,), {})


def mbid(seed):
    """A deterministic UUID-shaped MusicBrainz id."""
    h = hashlib.sha1(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


# ---------------------------------------------------------------------------
# Tiny images, written by hand.

def png_bytes(rgb, size=8):
    """A valid size x size PNG of one colour."""
    raw = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    ihdr = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def jpeg_bytes(gray):
    """A valid 8x8 greyscale baseline JPEG of one grey level (1..254).

    One 8x8 block, quantisation 1, and Huffman tables with a single code
    each: the DC table codes the one DC size category we use, the AC table
    codes only EOB.
    """
    coef = (gray - 128) * 8                    # DC = 8 * mean level-shifted value
    cat = abs(coef).bit_length()
    extra = coef if coef >= 0 else coef + (1 << cat) - 1
    bits = "0" + (format(extra, f"0{cat}b") if cat else "") + "0"  # DC code, bits, EOB
    bits += "1" * (-len(bits) % 8)
    data = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    data = data.replace(b"\xff", b"\xff\x00")

    def seg(marker, payload):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(payload) + 2) + payload

    one_code = bytes([1] + [0] * 15)
    return (b"\xff\xd8"
            + seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
            + seg(0xDB, b"\x00" + b"\x01" * 64)
            + seg(0xC0, b"\x08\x00\x08\x00\x08\x01\x01\x11\x00")
            + seg(0xC4, b"\x00" + one_code + bytes([cat]))
            + seg(0xC4, b"\x10" + one_code + b"\x00")
            + seg(0xDA, b"\x01\x01\x00\x00\x3f\x00")
            + data + b"\xff\xd9")


def noise_png(width, height, seed):
    """A valid RGB PNG of deterministic noise: does not compress, so it stays big."""
    rng = random.Random(seed)
    raw = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def padded_jpeg(gray, size, seed):
    """A valid JPEG of about ``size`` bytes: jpeg_bytes() plus COM segments of noise."""
    small = jpeg_bytes(gray)
    rng = random.Random(seed)
    segments = b""
    left = size - len(small)
    while left > 4:
        n = min(left - 4, 65533)
        segments += b"\xff\xfe" + struct.pack(">H", n + 2) + rng.randbytes(n)
        left -= n + 4
    return small[:2] + segments + small[2:]


# A 1x1 lossless WebP (the well-known feature-detection image).
WEBP_1X1 = bytes.fromhex("524946461a000000574542505650384c0d0000002f0000001007"
                         "1011118888fe0700")


# ---------------------------------------------------------------------------
# Audio clips.

def tool_versions():
    out = {}
    for tool, args in (("sox", ["--version"]), ("lame", ["--version"])):
        try:
            text = subprocess.run([tool, *args], capture_output=True, text=True,
                                  timeout=20).stdout
        except FileNotFoundError:
            sys.exit(f"make-fixtures: '{tool}' is not installed (apt-get install sox lame)")
        out[tool] = text.strip().splitlines()[0] if text.strip() else "?"
    return out


def encode_clips(workdir):
    clips = {}
    for name, (rate, channels, seconds, hz, lame_args) in CLIPS.items():
        wav = os.path.join(workdir, name + ".wav")
        mp3 = os.path.join(workdir, name + ".mp3")
        subprocess.run(["sox", "-R", "-D", "-n", "-r", str(rate), "-c", str(channels), "-b", "16",
                        wav, "synth", str(seconds), "sine", str(hz), "vol", "0.3"],
                       check=True, stderr=subprocess.DEVNULL, timeout=60)
        subprocess.run(["lame", "--quiet", "--noreplaygain", *lame_args, wav, mp3],
                       check=True, timeout=60)
        with open(mp3, "rb") as f:
            clips[name] = f.read()
    return clips


# ---------------------------------------------------------------------------
# Tags.

def build_id3(tags):
    """Turn our tag dict into a mutagen ID3 object."""
    id3 = ID3()
    enc = tags.get("encoding", 3)  # 3 = UTF-8; 0 = Latin-1; 1 = UTF-16

    def text(frame, key):
        if key in tags:
            value = tags[key]
            id3.add(frame(encoding=enc, text=value if isinstance(value, list) else [value]))

    text(TIT2, "title")
    text(TPE1, "artist")
    text(TALB, "album")
    text(TPE2, "albumartist")
    text(TSOP, "artistsort")
    text(TSO2, "albumartistsort")
    text(TSOA, "albumsort")
    text(TRCK, "track")
    text(TPOS, "disc")
    text(TCON, "genre")
    text(TCOM, "composer")
    text(TPE3, "conductor")
    text(TPE4, "performer")            # mpd 0.23 reads Performer from TPE4
    text(TPUB, "label")
    text(TIT1, "grouping")
    if "date" in tags:
        dates = tags["date"] if isinstance(tags["date"], list) else [tags["date"]]
        if tags.get("v23_year"):
            id3.add(TYER(encoding=enc, text=dates))
        elif tags.get("id3", "v24") == "v23":
            id3.add(TDRC(encoding=enc, text=dates))      # mutagen turns it into TYER/TDAT
        else:
            id3.add(RawTDRC(encoding=enc, text=dates))   # verbatim, even "c. 1990"
    if "originaldate" in tags:
        id3.add(TDOR(encoding=enc, text=[tags["originaldate"]]))
    if "musician_credits" in tags:  # TMCL (role, name) pairs; mpd 0.23 ignores them
        id3.add(TMCL(encoding=enc, people=tags["musician_credits"]))
    if "txxx_performer" in tags:    # TXXX:PERFORMER; mpd 0.23 ignores it too
        id3.add(TXXX(encoding=enc, desc="PERFORMER", text=[tags["txxx_performer"]]))
    if "comment" in tags:
        id3.add(COMM(encoding=enc, lang="eng", desc="", text=[tags["comment"]]))
    for desc, value in tags.get("txxx", {}).items():     # free-form TXXX frames
        id3.add(TXXX(encoding=enc, desc=desc, text=value if isinstance(value, list) else [value]))
    for key, desc in (("mb_artistid", "MusicBrainz Artist Id"),
                      ("mb_albumid", "MusicBrainz Album Id"),
                      ("mb_albumartistid", "MusicBrainz Album Artist Id"),
                      ("mb_releasetrackid", "MusicBrainz Release Track Id"),
                      ("mb_workid", "MusicBrainz Work Id")):
        if key in tags:
            id3.add(TXXX(encoding=enc, desc=desc, text=[tags[key]]))
    if "mb_trackid" in tags:
        id3.add(UFID(owner=MB, data=tags["mb_trackid"].encode()))
    if "picture" in tags:
        mime, data = tags["picture"]
        id3.add(APIC(encoding=enc, mime=mime, type=3, desc="Cover", data=data))
    for i, (ptype, mime, data) in enumerate(tags.get("pictures", [])):  # several APICs
        id3.add(APIC(encoding=enc, mime=mime, type=ptype, desc=f"Picture {i}", data=data))
    return id3


def ape_bytes(body, items):
    """``body`` with an APEv2 tag appended (before a trailing ID3v1 tag, if any)."""
    buf = io.BytesIO(body)
    ape = APEv2()
    for key, value in items.items():
        if isinstance(value, bytes):
            ape[key] = APEValue(value, BINARY)
        else:
            ape[key] = value                    # a list becomes NUL-separated values
    ape.save(buf)
    return buf.getvalue()


def id3v1_bytes(title="", artist="", album="", year="", comment="", track=0, genre=255):
    """A 128-byte ID3v1.1 trailer (Latin-1)."""
    def field(value, n):
        return value.encode("latin-1", "replace")[:n].ljust(n, b"\x00")
    return (b"TAG" + field(title, 30) + field(artist, 30) + field(album, 30)
            + field(year, 4) + field(comment, 28) + b"\x00" + bytes([track, genre]))


def render(clip, tags):
    """Bytes of one MP3 file: the clip with the song's tags.

    ``id3``: "v24" (default), "v23", "v1" (ID3v1 only), "none" (no ID3v2);
    ``v1``: an ID3v1 trailer as well; ``ape``: an APEv2 tag as well (dict).
    """
    mode = tags.get("id3", "v24")
    data = clip
    if mode not in ("none", "v1"):
        buf = io.BytesIO(data)
        id3 = build_id3(tags)
        id3.save(buf, v2_version=3 if mode == "v23" else 4, v23_sep="/",
                 padding=lambda info: 64)
        data = buf.getvalue()
    if "v1" in tags:
        data += id3v1_bytes(**tags["v1"])
    if "ape" in tags:
        data = ape_bytes(data, tags["ape"])
    return data


# ---------------------------------------------------------------------------
# The library plan: a list of (relative path, kind, payload).

def special_songs():
    """The hand-written awkward songs (always present, in this order)."""
    a1 = "Ångström & Co/2001 - Déjà Vu [Deluxe] (Remastered)"
    a2 = "坂本龍一/[1999] 東京 Live"
    comp = "Compilations/Best Of (Disc 1)"
    comp2 = "Compilations/Best Of (Disc 2)"
    album1 = {
        "album": "Déjà Vu", "albumartist": "Ångström & Co",
        "albumartistsort": "Angstrom & Co", "albumsort": "Deja Vu",
        "date": "2001-05-17", "originaldate": "1999", "genre": "Rock",
        "label": "Ünïcödé Records", "mb_albumid": mbid("album1"),
        "mb_albumartistid": mbid("artist-angstrom"), "disc": "1/2",
    }
    songs = [
        (f"{a1}/01 - Café.mp3", "cbr44", dict(
            album1, title="Café", artist="Ångström & Co", artistsort="Angstrom & Co",
            track="1/12", composer="Zoë Ångström", performer=["Zoë (vocals)", "Ève"],
            musician_credits=[["vocals", "Zoë"], ["piano", "Ève"]], txxx_performer="Zoë",
            comment="First «song» — with a comment", mb_artistid=mbid("artist-angstrom"),
            mb_trackid=mbid("t1"), mb_releasetrackid=mbid("rt1"), mb_workid=mbid("w1"),
            grouping="Opening")),
        (f'{a1}/02 - Say "Hello" \\ Goodbye.mp3', "vbr44", dict(
            album1, title='Say "Hello" \\ Goodbye', artist=["Ångström & Co", "Björk Guðmundsdóttir"],
            artistsort=["Angstrom & Co", "Gudmundsdottir, Bjork"], track="3/12",
            genre=["Rock", "Pop"], mb_trackid=mbid("t2"))),
        (f"{a1}/03 - It's a \"quote\" 'n' apostrophe.mp3", "cbr44", dict(
            album1, title="It's a \"quote\" 'n' apostrophe", artist="Ångström & Co",
            track="07", disc="2/2", conductor="Sir Conductor")),
        (f"{a1}/04 - Tab and newline.mp3", "cbr48", dict(
            album1, title="Tab\there and new\nline", artist="Ångström & Co", track="12/12",
            disc="2", comment="multi\nline comment")),
        (f"{a2}/01 - 🎵 Emoji Song.mp3", "cbr48", dict(
            title="🎵 Emoji Song 🎶", artist="坂本龍一", artistsort="Sakamoto, Ryuichi",
            album="東京 Live", date="1999-12", track="1", genre="Electronic",
            composer="坂本龍一", mb_artistid=mbid("artist-sakamoto"))),
        (f"{a2}/02 - Ελληνικά & Кириллица.mp3", "cbr44", dict(
            title="Ελληνικά & Кириллица", artist="Мумий Тролль", album="東京 Live",
            date="1999-12", track="2", genre="Electronic")),
        (f"{comp}/01 - Track One.mp3", "cbr44", dict(
            id3="v23", encoding=1, title="Track One (v2.3, UTF-16)", artist="Motörhead",
            albumartist="Various Artists", album="Best Of", date="1998", v23_year=True,
            track="1/3", disc="1/2", genre="Metal")),
        (f"{comp}/02 - Track Two.mp3", "mono22", dict(
            id3="v23", encoding=1, title="Track Two", artist=["Sigur Rós", "Ólafur Arnalds"],
            albumartist="Various Artists", album="Best Of", date="1998", v23_year=True,
            track="2/3", disc="1/2", genre="17")),
        (f"{comp2}/01 - Track Three.mp3", "cbr44", dict(
            id3="v23", encoding=0, title="Track Three (Latin-1 v2.3)", artist="Céline",
            albumartist="Various Artists", album="Best Of", date="1998", v23_year=True,
            track="3/3", disc="2/2", genre="(13)")),
        ("Old Tags/v1 only.mp3", "cbr44", dict(
            id3="v1", v1=dict(title="ID3v1 Café", artist="Old Timer", album="Vintage",
                              year="1987", comment="v1 comment", track=5, genre=8))),
        ("Old Tags/v1 and v2.mp3", "mono22", dict(
            title="v2 wins", artist="New Timer", album="Vintage", date="1988",
            v1=dict(title="v1 loses", artist="Old Timer", album="Vintage", year="1987"))),
        ("Old Tags/no tags at all.mp3", "tiny8", dict(id3="none")),
        ("Old Tags/only a title.mp3", "tiny8", dict(title="Only A Title")),
        ("Old Tags/" + "Long " * 10 + "name.mp3", "tiny8", dict(
            title="Long title " + "x" * 300, artist="A" * 200, album="Vintage",
            date="2004-03", track="4")),
        ("Embedded Art/With Picture.mp3", "cbr44", dict(
            title="With Picture", artist="Picture Person", album="Embedded Art",
            date="2010", track="1", picture=("image/png", png_bytes((200, 30, 30), 16)))),
        ("Embedded Art/Without Picture.mp3", "mono22", dict(
            title="Without Picture", artist="Picture Person", album="Embedded Art",
            date="2010", track="2")),
        ("Sort & Fallback/Artist Only/01 - No Album Artist.mp3", "mono22", dict(
            title="No Album Artist", artist="The Band", artistsort="Band, The",
            album="Fallbacks", date="2015", track="1", genre="Folk")),
        ("Sort & Fallback/Artist Only/02 - Album Artist Sort Only.mp3", "mono22", dict(
            title="AlbumArtistSort only", artist="The Band", albumartistsort="Band, The",
            album="Fallbacks", date="2015", track="2", genre="Folk")),
        ("Sort & Fallback/Artist Only/03 - Empty Values.mp3", "tiny8", dict(
            title="Empty album", artist="The Band", album="", genre="", track="3")),
    ]
    return songs


def awkward_songs():
    """More hand-written songs for the database commands (issue 3): case folding,
    odd numbers and dates, missing and multi-valued tags, quoting, long values,
    APEv2, pictures, .mpdignore.  Always present, after special_songs()."""
    cf = "Case Folding"
    nd = "Numbers & Dates"
    q = "Quotes/It's \"Q\" \\ dir"
    mi = "Missing & Multi"
    tf = "Tag Formats"
    cv = "Covers"
    fold = dict(album="Groß & Klein", albumartist="Fold Test", genre="Folding")
    songs = [
        # Case folding: ICU full folding maps ß->ss, ς->σ, ligatures->letters,
        # K (Kelvin)->k, İ->i̇; fullwidth stays fullwidth; NFD is not normalised.
        (f"{cf}/Straße.mp3", "tiny8", dict(fold, title="Straße", artist="WEISS", track="1")),
        (f"{cf}/STRASSE.mp3", "tiny8", dict(fold, title="STRASSE", artist="weiß", track="2")),
        (f"{cf}/İstanbul.mp3", "tiny8", dict(fold, title="İstanbul", artist="IŞIK ıi",
                                            track="3", date="1453")),
        (f"{cf}/istanbul lower.mp3", "tiny8", dict(fold, title="istanbul", artist="Isik",
                                                  track="4")),
        (f"{cf}/ΣΊΣΥΦΟΣ.mp3", "tiny8", dict(fold, title="ΣΊΣΥΦΟΣ", artist="ΟΔΥΣΣΕΥΣ",
                                           track="5")),
        (f"{cf}/σίσυφος.mp3", "tiny8", dict(fold, title="σίσυφος", artist="οδυσσευς",
                                           track="6")),
        (f"{cf}/ﬁnal ﬂight.mp3", "tiny8", dict(fold, title="ﬁnal ﬂight", artist="ﬀ Band",
                                               track="7")),
        (f"{cf}/final flight.mp3", "tiny8", dict(fold, title="Final Flight", artist="FF Band",
                                                track="8")),
        (f"{cf}/Fullwidth.mp3", "tiny8", dict(fold, title="ｆｕｌｌｗｉｄｔｈ",
                                             artist="ＦＵＬＬＷＩＤＴＨ Band", track="9")),
        (f"{cf}/Kelvin.mp3", "tiny8", dict(fold, title="200 \u212a", artist="Kelvin",
                                          track="10")),
        (f"{cf}/Cafe\u0301 NFD.mp3", "tiny8", dict(fold, title="Cafe\u0301 (NFD)",
                                                  artist="Cafe\u0301", track="11")),
        (f"{cf}/Dz digraph.mp3", "tiny8", dict(fold, title="ǅungla ǆ Ǆ", artist="ǅ",
                                              track="12")),
        # Canonically equivalent to the Kelvin and NFD songs above but other bytes: mpd compares
        # bytes, so these are distinct values (Swift's String equality would merge them).
        (f"{cf}/Kelvin ASCII.mp3", "tiny8", dict(fold, title="200 K", artist="Kelvin",
                                                track="13")),
        (f"{cf}/Caf\u00e9 NFC.mp3", "tiny8", dict(fold, title="Caf\u00e9 (NFD)",
                                                 artist="Caf\u00e9", track="14")),
        # Track, Disc and Date in every shape clients meet.
        (f"{nd}/a.mp3", "tiny8", dict(title="Track x", artist="Numbers", album="Numbers",
                                      track="x", disc="x", date="c. 1990")),
        (f"{nd}/b.mp3", "tiny8", dict(title="Track 03", artist="Numbers", album="Numbers",
                                      track="03", disc="02", date="2001-05-17T10:00:00")),
        (f"{nd}/c.mp3", "tiny8", dict(title="Track 3/12", artist="Numbers", album="Numbers",
                                      track="3/12", disc="1/2", date="20010517")),
        (f"{nd}/d.mp3", "tiny8", dict(title="Track 10", artist="Numbers", album="Numbers",
                                      track="10", disc="1", date="1985-13-45")),
        (f"{nd}/e.mp3", "tiny8", dict(title="Track 2", artist="Numbers", album="Numbers",
                                      track="2", date="1999/12/31")),
        (f"{nd}/f.mp3", "tiny8", dict(title="Track -1", artist="Numbers", album="Numbers",
                                      track="-1", disc="-1", date="'77")),
        (f"{nd}/g.mp3", "tiny8", dict(title="Track +4", artist="Numbers", album="Numbers",
                                      track="+4", date="2024")),
        (f"{nd}/h.mp3", "tiny8", dict(title="Track huge", artist="Numbers", album="Numbers",
                                      track="99999999999", disc="4294967296", date="0")),
        (f"{nd}/i.mp3", "tiny8", dict(id3="v23", title="Track 1.5 (v2.3)", artist="Numbers",
                                      album="Numbers", track="1.5", date="2003",
                                      v23_year=True)),
        (f"{nd}/j.mp3", "tiny8", dict(title="Track empty", artist="Numbers", album="Numbers",
                                      track="", disc="", date="")),
        # Quotes, backslashes, apostrophes in values and names; expression look-alikes.
        (f"{q}/O'Brien.mp3", "tiny8", dict(title='a\\"b', artist="O'Brien",
                                          album='Back\\slash "Album"', track="1")),
        (f"{q}/back\\slash.mp3", "tiny8", dict(title="C:\\Music\\", artist="\\\\server\\share",
                                             album='Back\\slash "Album"', track="2")),
        (f'{q}/double "quote".mp3', "tiny8", dict(title='"quoted"', artist='Say "Hi"',
                                                 album='Back\\slash "Album"', track="3")),
        (f"{q}/paren (x) and ).mp3", "tiny8", dict(title="(x) AND (y)",
                                                  artist="(artist == 'x')",
                                                  album='Back\\slash "Album"', track="4")),
        (f"{q}/'single' quotes.mp3", "tiny8", dict(title="'single'", artist="'",
                                                  album="It's", track="5")),
        # Missing, empty, padded and multi-valued tags.
        (f"{mi}/albumartist only.mp3", "tiny8", dict(title="AlbumArtist only",
                                                    albumartist="Only AA", album="Missing")),
        (f"{mi}/no album.mp3", "tiny8", dict(title="No album", artist="Missing Album")),
        (f"{mi}/no artists.mp3", "tiny8", dict(title="No artists", album="Missing")),
        (f"{mi}/sort tags only.mp3", "tiny8", dict(title="Sort tags only", album="Missing",
                                                  albumartistsort="Sorted AA",
                                                  artistsort="Sorted A", albumsort="Sorted")),
        (f"{mi}/empty title.mp3", "tiny8", dict(title="", artist="Empty Title", album="")),
        (f"{mi}/empty in multi.mp3", "tiny8", dict(title="Empty in multi",
                                                  artist=["Multi", "", "Multi"],
                                                  album="Missing")),
        (f"{mi}/padded.mp3", "tiny8", dict(title="  padded title  ", artist="  Padded  ",
                                          album="   ", genre=" Rock")),
        (f"{mi}/multi everything.mp3", "tiny8", dict(
            title=["Title One", "Title Two"], artist=["A1", "A2", "A3"],
            albumartist=["AA1", "AA2"], album=["Alb1", "Alb2"], composer=["C1", "C2"],
            genre=["Jazz", "Jazz", "Blues"], date=["2001", "2002"], track=["1", "2"],
            performer=["P1", "P2"])),
        (f"{mi}/long values.mp3", "tiny8", dict(title="T" * 5000, artist="Ü" * 2050,
                                               album="Long", comment="c" * 3000)),
        (f"{mi}/" + "L" * 251 + ".mp3", "tiny8", dict(title="255-byte name")),
        (f"{mi}/" + "é" * 125 + ".mp3", "tiny8", dict(title="254-byte UTF-8 name")),
        # Tag formats.
        (f"{tf}/apev2 only.mp3", "tiny8", dict(id3="none", ape={
            "Title": "APE title", "Artist": ["APE A1", "APE A2"], "Album": "APE Album",
            "Album Artist": "APE AA", "Track": "3/12", "Year": "2003", "Genre": "Ambient",
            "Disc": "1/1", "Comment": "APE comment", "MyKey": "my value",
            "Cover Art (Front)": b"cover.png\x00" + png_bytes((1, 2, 3))})),
        (f"{tf}/apev2 and id3v2.mp3", "tiny8", dict(title="ID3 title", artist="ID3 artist",
                                                   album="Formats",
                                                   ape={"Title": "APE title 2",
                                                        "Artist": "APE artist"})),
        (f"{tf}/apev2 and id3v1.mp3", "tiny8", dict(
            id3="v1", v1=dict(title="v1 title", artist="v1 artist", album="Formats"),
            ape={"Title": "APE over v1"})),
        (f"{tf}/UPPER CASE.MP3", "tiny8", dict(title="Upper-case suffix", album="Formats")),
        (f"{tf}/txxx and comments.mp3", "tiny8", dict(
            title="TXXX and COMM", artist="Comments", album="Formats", comment="plain comment",
            txxx={"REPLAYGAIN_TRACK_GAIN": "-6.50 dB", "Custom Key": "spaced key",
                  "weird key!": "x", "MULTI": ["one", "two"], "EMPTY": ""})),
        (f"{tf}/two pictures.mp3", "tiny8", dict(
            title="Two pictures", album="Formats",
            pictures=[(0, "image/png", png_bytes((0, 255, 0), 4)),
                      (3, "image/jpeg", jpeg_bytes(100))])),
        (f"{tf}/big picture.mp3", "tiny8", dict(
            title="Big picture", album="Formats",
            picture=("image/png", noise_png(200, 200, "big-apic")))),
        (f"{tf}/picture without mime.mp3", "tiny8", dict(
            title="Picture without MIME", album="Formats", picture=("", png_bytes((9, 9, 9))))),
        # Album art files next to songs (albumart looks for png, jpg, webp).
        (f"{cv}/webp only/song.mp3", "tiny8", dict(title="webp only", album="Covers")),
        (f"{cv}/jpg and webp/song.mp3", "tiny8", dict(title="jpg and webp", album="Covers")),
        (f"{cv}/all three/song.mp3", "tiny8", dict(title="all three", album="Covers")),
        (f"{cv}/big jpg/song.mp3", "tiny8", dict(title="big jpg", album="Covers")),
        (f"{cv}/wrong case/song.mp3", "tiny8", dict(title="Cover.JPG", album="Covers")),
        (f"{cv}/no cover/song.mp3", "tiny8", dict(title="no cover", album="Covers")),
        # .mpdignore (patterns apply to names in the directory and below).
        ("Ignored/keep me.mp3", "tiny8", dict(title="kept")),
        ("Ignored/skip me.mp3", "tiny8", dict(title="ignored by skip*")),
        ("Ignored/Hidden Dir/inside.mp3", "tiny8", dict(title="inside an ignored dir")),
        ("Ignored/sub/skip nested.mp3", "tiny8", dict(title="nested skip*")),
        ("Ignored/sub/kept nested.mp3", "tiny8", dict(title="nested kept")),
        ("Ignored/sub/also.flac.mp3", "tiny8", dict(title="*.flac is not a suffix match")),
        ("Ignored by root.mp3", "tiny8", dict(title="ignored by the root .mpdignore")),
        # Hidden files, a song in the root, a Latin-1 file name.
        ("Old Tags/.hidden song.mp3", "tiny8", dict(title="Hidden file")),
        ("root song.mp3", "tiny8", dict(title="In the root", artist="Root", album="Root")),
        (os.fsdecode(b"Charset/caf\xe9 latin1.mp3"), "tiny8", dict(title="Latin-1 name")),
        ("Charset/new\nline.mp3", "tiny8", dict(title="newline in name")),
    ]
    return songs


FIRST = ["Ka", "Lo", "Mi", "Ra", "Ven", "Tor", "Sa", "El", "Dri", "On", "Zen", "Nor"]
SECOND = ["lumo", "vesta", "rion", "dale", "mora", "quin", "thos", "ba", "kel", "wy"]
UNICODE = ["Björk", "Sigur Rós", "坂本龍一", "Мумий Тролль", "Zoë", "🎵 Band", "Ólafur",
           "Straße", "İzmir", "ΣΟΦΊΑ", "ﬁlm", "ＢＡＮＤ", "O'Neil", 'The "Band"']
DATE_FORMS = ["{y}", "{y}", "{y}", "{y}-{m:02d}", "{y}-{m:02d}-{d:02d}", "{y}{m:02d}{d:02d}"]
GENRES = ["Rock", "Pop", "Jazz", "Classical", "Electronic", "Folk", "Metal", "Blues"]


def filler_songs(count, start_index):
    rng = random.Random(20240601)
    out = []
    n = 0
    artist_no = 0
    while n < count:
        artist_no += 1
        artist = rng.choice(FIRST) + rng.choice(SECOND)
        if rng.random() < 0.1:
            artist += " " + rng.choice(UNICODE)
        artist = f"{artist} {artist_no:03d}"
        for album_no in range(1, rng.randint(1, 3) + 1):
            year = rng.randint(1960, 2024)
            album = f"{rng.choice(FIRST)}{rng.choice(SECOND)} {album_no}"
            tracks = rng.randint(4, 12)
            folder = f"Generated/{artist}/{album} ({year})"
            mbalbum = mbid(f"{artist}/{album}")
            has_aa = rng.random() < 0.5
            date_form = rng.choice(DATE_FORMS)
            for t in range(1, tracks + 1):
                if n >= count:
                    break
                n += 1
                title = f"{rng.choice(FIRST)}{rng.choice(SECOND)} {rng.choice(SECOND)}"
                date = date_form.format(y=year, m=album_no * 3, d=t)
                tags = dict(title=title, artist=artist, album=album, date=date,
                            track=f"{t}/{tracks}", genre=rng.choice(GENRES),
                            mb_albumid=mbalbum, mb_trackid=mbid(f"filler{n}"))
                if has_aa:
                    tags["albumartist"] = artist
                if rng.random() < 0.05:
                    tags["artist"] = [artist, rng.choice(UNICODE)]
                if rng.random() < 0.02:
                    del tags["artist"]
                if rng.random() < 0.05:
                    tags["artistsort"] = artist.upper()
                if rng.random() < 0.02:
                    tags["track"] = f"{t:02d}"
                if rng.random() < 0.03:
                    tags["disc"] = rng.choice(["1", "1/2", "2/2", "x"])
                if rng.random() < 0.02:
                    tags["genre"] = [tags["genre"], rng.choice(GENRES)]
                if rng.random() < 0.3:
                    tags["id3"] = "v23"
                    if rng.random() < 0.5:
                        tags["date"], tags["v23_year"] = str(year), True
                clip = FILLER_CLIPS[(start_index + n) % len(FILLER_CLIPS)]
                out.append((f"{folder}/{t:02d} - {title}.mp3", clip, tags))
        if n >= count:
            break
    return out


def extra_files(clips):
    """Non-song files: covers, junk, broken MP3s.  (path, bytes)"""
    cbr = clips["cbr44"]
    return [
        ("Ångström & Co/2001 - Déjà Vu [Deluxe] (Remastered)/cover.png", png_bytes((30, 90, 200))),
        ("坂本龍一/[1999] 東京 Live/cover.jpg", jpeg_bytes(200)),
        ("Compilations/Best Of (Disc 1)/cover.jpg", jpeg_bytes(60)),
        ("Compilations/Best Of (Disc 1)/cover.png", png_bytes((10, 200, 10))),
        ("Broken/truncated.mp3", render(cbr[:700], dict(title="Truncated", artist="Broken"))),
        ("Broken/garbage.mp3", bytes((i * 37 + 11) % 256 for i in range(3000))),
        ("Broken/empty.mp3", b""),
        ("Broken/readme.txt", "Not music.\nÜnïcödé text.\n".encode()),
        ("Broken/playlist inside.m3u", b"../Old Tags/v1 only.mp3\n"),
        ("Broken/data.bin", bytes(range(256)) * 4),
        ("Ångström & Co/notes.txt", b"notes\n"),
        (".hidden/secret.mp3", render(cbr, dict(title="Hidden", artist="Nobody"))),
        # Covers for awkward_songs().
        ("Covers/webp only/cover.webp", WEBP_1X1),
        ("Covers/jpg and webp/cover.jpg", jpeg_bytes(30)),
        ("Covers/jpg and webp/cover.webp", WEBP_1X1),
        ("Covers/all three/cover.webp", WEBP_1X1),
        ("Covers/all three/cover.jpg", jpeg_bytes(31)),
        ("Covers/all three/cover.png", png_bytes((1, 1, 1))),
        ("Covers/big jpg/cover.jpg", padded_jpeg(77, 100_000, "big-cover")),
        ("Covers/wrong case/Cover.JPG", jpeg_bytes(32)),
        ("Covers/no cover/folder.jpg", jpeg_bytes(33)),
        # More broken files.
        ("Broken/tag only.mp3", render(b"", dict(title="Tag only", artist="Broken"))),
        ("Broken/bad id3 size.mp3", b"ID3\x04\x00\x00\x7f\x7f\x7f\x7f" + cbr[:400]),
        ("Broken/png named mp3.mp3", png_bytes((5, 5, 5))),
        ("Broken/half a frame.mp3", cbr[:3]),
        # .mpdignore files.
        (".mpdignore", b"Ignored by root*\n"),
        ("Ignored/.mpdignore", b"# a comment, then an empty line\n\nskip*\n*.flac\nHidden Dir\n"),
        ("Ignored/notes.txt", b"not music\n"),
    ]


# Symbolic links: (path, target).  A loop back to the root, one to the directory
# itself, a second path to a song and to a directory, and a dangling link.
SYMLINKS = [
    ("Links/loop to root", ".."),
    ("Links/self", "."),
    ("Links/song link.mp3", "../Old Tags/v1 only.mp3"),
    ("Links/dir link", "../Embedded Art"),
    ("Links/dangling.mp3", "does-not-exist.mp3"),
]


EMPTY_DIRS = ["Empty Folder", "Nested [x]/(y)/{z}/ deep  spaces "]


def build(outdir, songs_wanted):
    tmp_parent = os.path.dirname(os.path.abspath(outdir)) or "."
    work = tempfile.mkdtemp(prefix=".make-fixtures-", dir=tmp_parent)
    try:
        lib = os.path.join(work, "lib")
        os.mkdir(lib)
        clips = encode_clips(work)
        special = special_songs() + awkward_songs()
        songs = special + filler_songs(max(0, songs_wanted - len(special)), len(special))
        files = [(p, render(clips[c], t)) for p, c, t in songs] + extra_files(clips)
        mtimes = {}
        for i, (rel, data) in enumerate(files):
            path = os.path.join(lib, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            mtimes[path] = BASE_MTIME + i
        for rel in EMPTY_DIRS:
            os.makedirs(os.path.join(lib, rel), exist_ok=True)
        for path, t in mtimes.items():
            os.utime(path, (t, t))
        for rel, target in SYMLINKS:
            path = os.path.join(lib, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.symlink(target, path)
            os.utime(path, (BASE_MTIME, BASE_MTIME), follow_symlinks=False)
        # Directories: fixed mtime, deepest first.
        dirs = [root for root, _, _ in os.walk(lib)]
        for d in sorted(dirs, key=lambda p: -p.count(os.sep)):
            os.utime(d, (BASE_MTIME, BASE_MTIME))
        return work, lib, len(songs), len(files)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--songs", type=int, default=DEFAULT_SONGS,
                    help=f"total number of songs (default {DEFAULT_SONGS}; "
                         f"at least the {len(special_songs()) + len(awkward_songs())} "
                         f"hand-written ones)")
    ap.add_argument("--force", action="store_true", help="rebuild even if the stamp matches")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    outdir = os.path.abspath(args.outdir)
    wanted = {"format": FORMAT_VERSION, "songs": args.songs, "script_sha256": script_hash(),
              "tools": tool_versions()}
    stamp_path = os.path.join(outdir, STAMP)
    if os.path.isdir(outdir) and not args.force:
        try:
            with open(stamp_path) as f:
                have = json.load(f)
            if {k: have.get(k) for k in wanted} == wanted:
                if not args.quiet:
                    print(f"make-fixtures: {outdir} is up to date")
                return 0
        except (OSError, ValueError):
            pass
    if os.path.exists(outdir) and os.listdir(outdir) and not os.path.exists(stamp_path):
        sys.exit(f"make-fixtures: {outdir} exists, is not empty and was not made by this "
                 f"script; refusing to replace it")

    work, lib, nsongs, nfiles = build(outdir, args.songs)
    try:
        stamp = dict(wanted, song_files=nsongs, files=nfiles)
        with open(os.path.join(lib, STAMP), "w") as f:
            json.dump(stamp, f, indent=1, sort_keys=True)
            f.write("\n")
        os.utime(os.path.join(lib, STAMP), (BASE_MTIME, BASE_MTIME))
        os.utime(lib, (BASE_MTIME, BASE_MTIME))
        if os.path.exists(outdir):
            old = outdir + f".old-{os.getpid()}"
            os.rename(outdir, old)
            os.rename(lib, outdir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.makedirs(os.path.dirname(outdir), exist_ok=True)
            os.rename(lib, outdir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not args.quiet:
        print(f"make-fixtures: wrote {nsongs} songs ({nfiles} files) to {outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
