"""Differential cases on real MP3 files nobody here wrote: mutagen's test data.

The MP3 files under ``tests/data`` in mutagen's source distribution (odd ID3v2.2/2.3/2.4
tags, APEv2, Xing/VBRI/LAME headers, MPEG-2/2.5, an empty file, bad frames...) are
fetched once by ``mutagendata`` and kept in ``conformance/.cache/mutagen-mp3/`` (a music directory of
just those files); the other formats' files likewise in ``mutagen-other/``.  A
separate mpd and system under test are started on it (``server_pair``).  Without
network access (and no cache) the tests are skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import mpdtest
import mutagendata
from mpdtest import arg, make_case

STAMP = mutagendata.STAMP


@pytest.fixture(scope="session")
def mutagen_music() -> Path:
    return mutagendata.music("mutagen-mp3", (".mp3",))


@pytest.fixture(scope="session")
def mutagen_other_music() -> Path:
    """The other files of mutagen's test data: FLAC, Ogg, Opus, WAV, AIFF, M4A, WMA, WavPack, APE, DSF…"""
    return mutagendata.music("mutagen-other", (".mp3",), exclude=True)


@pytest.fixture
def real_pair(mutagen_music, server_pair):
    pair = server_pair(mutagen_music)
    pair.require_sut()
    return pair


def _run(pair, spec, name, **options):
    c = make_case(spec, replies="auto", **options)
    missing = mpdtest.missing_commands(c, pair.mpd_commands, pair.sut_commands)
    if missing and not os.environ.get("CONFORMANCE_NO_SKIP"):
        pytest.skip(f"restricted to implemented commands: the system under test does "
                    f"not list {', '.join(missing)} in `commands`")
    try:
        mpdtest.compare(c, pair.ref, pair.sut, name)
    except mpdtest.DifferentialMismatch as exc:
        pytest.fail(str(exc), pytrace=False)


def _files(music: Path) -> list[str]:
    return sorted(p.name for p in music.glob("*.mp3"))


def test_real_files_present(mutagen_music):
    names = _files(mutagen_music)
    assert len(names) >= 10, names


def test_real_listallinfo(real_pair):
    songs = int(mpdtest.parse_pairs(real_pair.ref.query("stats")).get("songs", 0))
    assert songs >= 10, f"mpd found only {songs} songs in {real_pair.ref.music_dir}"
    _run(real_pair, "listallinfo\n", "listallinfo")


def test_real_lsinfo_and_listfiles(real_pair):
    _run(real_pair, "lsinfo\n", "lsinfo")
    _run(real_pair, "listfiles\n", "listfiles")


def test_real_stats_and_lists(real_pair):
    _run(real_pair, "stats\n", "stats")
    _run(real_pair, "list album group artist\nlist date\nlist genre\n", "list")
    _run(real_pair, "count group albumartist\n", "count")


def test_real_readcomments(real_pair, mutagen_music):
    spec = "".join(f"readcomments {arg(n)}\n" for n in _files(mutagen_music))
    _run(real_pair, spec, "readcomments of every file")


def test_real_readpicture(real_pair, mutagen_music):
    spec = "".join(f"readpicture {arg(n)} 0\n" for n in _files(mutagen_music))
    _run(real_pair, "binarylimit 1048576\n" + spec, "readpicture of every file")


def test_real_find_every_file(real_pair, mutagen_music):
    spec = "".join(f"find file {arg(n)}\n" for n in _files(mutagen_music))
    _run(real_pair, spec, "find each file")


# ---------------------------------------------------------------------------
# The other formats of mutagen's test data

def _suffixes(server) -> set[str]:
    return {line.split(b": ", 1)[1].decode().lower() for line in server.query("decoders").splitlines()
            if line.startswith(b"suffix: ")}


@pytest.fixture
def other_pair(mutagen_other_music, server_pair):
    pair = server_pair(mutagen_other_music)
    pair.require_sut()
    return pair


def _claimed(pair, music: Path) -> tuple[list[str], list[str]]:
    """(files whose suffix the system under test's decoders claim, files it has no plugin for)."""
    theirs = _suffixes(pair.sut)
    names = sorted((p.name for p in music.iterdir() if p.is_file() and p.name != STAMP), key=str.encode)
    claimed = [n for n in names if "." in n and n.rsplit(".", 1)[1].lower() in theirs]
    return claimed, [n for n in names if n not in claimed]


def test_other_formats_present(mutagen_other_music):
    suffixes = {p.suffix.lower() for p in mutagen_other_music.iterdir()}
    assert {".flac", ".ogg", ".m4a", ".wav"} <= suffixes, suffixes


def test_other_formats_songs_are_mpds(other_pair, mutagen_other_music):
    """Every file whose suffix Fermata's decoders claim: the same song (or none) as mpd, byte for byte,
    with its comments and picture."""
    claimed, _ = _claimed(other_pair, mutagen_other_music)
    assert claimed, "the system under test claims none of the files"
    _run(other_pair, "".join(f"lsinfo {arg(n)}\n" for n in claimed), "lsinfo of each claimed file")
    _run(other_pair, "".join(f"readcomments {arg(n)}\n" for n in claimed), "readcomments of each claimed file")
    _run(other_pair, "binarylimit 1048576\n" + "".join(f"readpicture {arg(n)} 0\n" for n in claimed),
         "readpicture of each claimed file")


def test_other_formats_fermata_has_no_plugin_for_are_not_listed(other_pair, mutagen_other_music):
    """Files no plugin of Fermata claims are not songs in its database (mpd may list them through
    plugins Fermata lacks: its DSD, Musepack, tracker and other plugins)."""
    _, unclaimed = _claimed(other_pair, mutagen_other_music)
    for name in unclaimed:
        reply = other_pair.sut.query(f"lsinfo {arg(name)}")
        assert reply.startswith(b"ACK "), (name, reply)
