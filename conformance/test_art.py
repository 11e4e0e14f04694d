"""Differential cases: albumart and readpicture (protocol §1.7, §2.9; clients.md 31-33).

Binary replies are compared byte for byte.  Files (tools/make-fixtures.py):
* Covers/big jpg/cover.jpg: 100000 bytes;  Covers/{webp only, jpg and webp, all three,
  wrong case (Cover.JPG), no cover (folder.jpg)}/song.mp3;  cover.png in the Ångström
  album directory, cover.jpg + cover.png in Compilations/Best Of (Disc 1);
* Tag Formats/big picture.mp3: a 120303-byte PNG in APIC;  two pictures.mp3 (an
  "other" PNG, then a front-cover JPEG);  picture without mime.mp3;  apev2 only.mp3
  (an APEv2 "Cover Art (Front)" item);  Embedded Art/With Picture.mp3.
"""

import re

from mpdtest import arg, case, differential_table

BIG = "Covers/big jpg/song.mp3"
BIG_SIZE = 100000
PIC = "Tag Formats/big picture.mp3"
PIC_SIZE = 120303
CAFE = "Ångström & Co/2001 - Déjà Vu [Deluxe] (Remastered)/01 - Café.mp3"


def _after_ms(line: bytes) -> bytes:
    return re.sub(rb" after \d+ ms", b" after N ms", line)


def art(uri: str, offset="0") -> str:
    return f"albumart {arg(uri)} {offset}\n"


def pic(uri: str, offset="0") -> str:
    return f"readpicture {arg(uri)} {offset}\n"


def fetch_all(cmd, uri: str, size: int, chunk: int = 8192) -> str:
    """What a client sends to fetch a whole object, pipelined in one command list."""
    return ("command_list_ok_begin\n" + "".join(cmd(uri, o) for o in range(0, size, chunk))
            + cmd(uri, size) + "command_list_end\n")


test_albumart = differential_table({
    # Which file is found.
    "cover.png next to the song": art(CAFE),
    "png wins over jpg": art("Compilations/Best Of (Disc 1)/01 - Track One.mp3"),
    "cover.jpg only": art("坂本龍一/[1999] 東京 Live/01 - 🎵 Emoji Song.mp3"),
    "webp only": art("Covers/webp only/song.mp3"),
    "jpg wins over webp": art("Covers/jpg and webp/song.mp3"),
    "all three: png": art("Covers/all three/song.mp3"),
    "Cover.JPG is not cover.jpg": art("Covers/wrong case/song.mp3"),
    "folder.jpg is not looked at": art("Covers/no cover/song.mp3"),
    "no cover (embedded picture does not count)": art("Embedded Art/With Picture.mp3"),
    "disc 2 has no cover of its own": art("Compilations/Best Of (Disc 2)/01 - Track Three.mp3"),
    # What the URI may be (Cantata sends the directory with a trailing slash).
    "directory with a trailing slash": art("Covers/webp only/"),
    "directory without a trailing slash looks in the parent": art("Covers/webp only"),
    "song that does not exist, in a directory with a cover": art("Covers/webp only/nope.mp3"),
    "file that is not a song": art("Covers/webp only/cover.webp"),
    "directory that does not exist": art("Nope/song.mp3"),
    "song in the root": art("root song.mp3"),
    "empty URI": art(""),
    "slash": art("/"),
    "dot dot": art("../x.mp3"),
    "dir/../song": art("Covers/../Covers/webp only/song.mp3"),
    "through a symlinked directory": art("Links/dir link/With Picture.mp3"),
    "absolute path": art("/etc/passwd"),
    "file:///": art("file:///etc/passwd"),
    "http URL": case(art("http://127.0.0.1:9/x/song.mp3"), normalize=_after_ms),
    "quotes and backslash": art("Quotes/It's \"Q\" \\ dir/O'Brien.mp3"),
    # Offsets (the big cover is 100000 bytes).
    "offset 0": art(BIG, 0),
    "offset 8192": art(BIG, 8192),
    "offset mid": art(BIG, 50000),
    "offset in the last chunk": art(BIG, BIG_SIZE - 1000),
    "offset size - 1": art(BIG, BIG_SIZE - 1),
    "offset == size": art(BIG, BIG_SIZE),
    "offset == size + 1": art(BIG, BIG_SIZE + 1),
    "offset huge": art(BIG, 10**12),
    "offset 2^64": art(BIG, 2**64),
    "offset negative": art(BIG, -1),
    "offset not a number": art(BIG, "x"),
    "offset empty": art(BIG, '""'),
    "offset with a plus": art(BIG, "+5"),
    "offset with a fraction": art(BIG, "1.5"),
    "small file at its size": art(CAFE, 74),
    "small file beyond its size": art(CAFE, 75),
    "no offset": f"albumart {arg(BIG)}\n",
    "no arguments": "albumart\n",
    "three arguments": f"albumart {arg(BIG)} 0 0\n",
    # binarylimit.
    "binarylimit 64": "binarylimit 64\n" + art(BIG),
    "binarylimit 64 near the end": "binarylimit 64\n" + art(BIG, BIG_SIZE - 10),
    "binarylimit 1 MiB: one chunk": "binarylimit 1048576\n" + art(BIG),
    "binarylimit exactly the size": f"binarylimit {BIG_SIZE}\n" + art(BIG),
    "binarylimit is per connection": [("a", "binarylimit 64\n"), ("b", art(BIG, 99000))],
    "a whole file, chunk by chunk": fetch_all(art, BIG, BIG_SIZE),
    "a whole file with binarylimit 30000": "binarylimit 30000\n"
                                           + fetch_all(art, BIG, BIG_SIZE, 30000),
}, replies="auto")

test_readpicture = differential_table({
    "embedded PNG": pic("Embedded Art/With Picture.mp3"),
    "no picture: empty OK": pic("Embedded Art/Without Picture.mp3"),
    "cover file does not count": pic(CAFE),
    "first of two pictures": pic("Tag Formats/two pictures.mp3"),
    "picture without MIME type": pic("Tag Formats/picture without mime.mp3"),
    "APEv2 cover item": pic("Tag Formats/apev2 only.mp3"),
    "through a symlink": pic("Links/dir link/With Picture.mp3"),
    "broken song in the database": pic("Broken/truncated.mp3"),
    "garbage file": pic("Broken/garbage.mp3"),
    "zero-length file": pic("Broken/empty.mp3"),
    "image file": pic("Covers/webp only/cover.webp"),
    "nonexistent": pic("Old Tags/nope.mp3"),
    "directory": pic("Embedded Art"),
    "directory with a trailing slash": pic("Embedded Art/"),
    "empty URI": pic(""),
    "dot dot": pic("../x.mp3"),
    "absolute path": pic("/etc/passwd"),
    "file:///": pic("file:///etc/passwd"),
    # Offsets (the big picture is 120303 bytes).
    "offset 0": pic(PIC, 0),
    "offset 8192": pic(PIC, 8192),
    "offset mid": pic(PIC, 60000),
    "offset size - 1": pic(PIC, PIC_SIZE - 1),
    "offset == size": pic(PIC, PIC_SIZE),
    "offset == size + 1": pic(PIC, PIC_SIZE + 1),
    "offset beyond, no picture": pic("Embedded Art/Without Picture.mp3", 5),
    "offset negative": pic(PIC, -1),
    "offset not a number": pic(PIC, "x"),
    "no offset": f"readpicture {arg(PIC)}\n",
    "no arguments": "readpicture\n",
    "three arguments": f"readpicture {arg(PIC)} 0 0\n",
    "binarylimit 64": "binarylimit 64\n" + pic(PIC, 100),
    "binarylimit 1 MiB: one chunk": "binarylimit 1048576\n" + pic(PIC),
    "a whole picture, chunk by chunk": fetch_all(pic, PIC, PIC_SIZE),
}, replies="auto")
