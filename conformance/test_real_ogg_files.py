"""Differential cases on real Ogg files nobody here wrote: mutagen's test data.

The ``.ogg``, ``.oga`` and ``.opus`` files under ``tests/data`` in mutagen's source distribution (an empty
file, a setup header spread over several pages, a comment header spread over several pages, an Opus
example) are fetched once by ``mutagendata`` and kept in
``conformance/.cache/mutagen-ogg/``.  A separate mpd and system under test are started on it
(``server_pair``).  Without network access (and no cache) the tests are skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import mpdtest
import mutagendata
from mpdtest import arg, make_case

STAMP = mutagendata.STAMP
SUFFIXES = (".ogg", ".oga", ".opus")


@pytest.fixture(scope="session")
def mutagen_ogg_music() -> Path:
    return mutagendata.music("mutagen-ogg", SUFFIXES)


@pytest.fixture
def ogg_pair(mutagen_ogg_music, server_pair):
    pair = server_pair(mutagen_ogg_music)
    pair.require_sut()
    return pair


def _files(music: Path) -> list[str]:
    return sorted(p.name for p in music.iterdir() if p.name.lower().endswith(SUFFIXES))


def _run(pair, spec, name):
    c = make_case(spec, replies="auto")
    try:
        mpdtest.compare(c, pair.ref, pair.sut, name)
    except mpdtest.DifferentialMismatch as exc:
        pytest.fail(str(exc), pytrace=False)


def test_real_ogg_files_present(mutagen_ogg_music):
    assert len(_files(mutagen_ogg_music)) >= 3


def test_real_ogg_listallinfo(ogg_pair):
    _run(ogg_pair, "listallinfo\nlsinfo\nlistfiles\n", "listallinfo")


def test_real_ogg_comments_and_pictures(ogg_pair, mutagen_ogg_music):
    names = _files(mutagen_ogg_music)
    _run(ogg_pair, "".join(f"readcomments {arg(n)}\n" for n in names), "readcomments of every file")
    _run(ogg_pair, "binarylimit 1048576\n" + "".join(f"readpicture {arg(n)} 0\n" for n in names),
         "readpicture of every file")
