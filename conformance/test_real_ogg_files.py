"""Differential cases on real Ogg files nobody here wrote: mutagen's test data.

The ``.ogg``, ``.oga`` and ``.opus`` files under ``tests/data`` in mutagen's source distribution (an empty
file, a setup header spread over several pages, a comment header spread over several pages, an Opus
example) are fetched once with ``pip download --no-binary :all: --no-deps mutagen`` and kept in
``conformance/.cache/mutagen-ogg/``.  A separate mpd and system under test are started on it
(``server_pair``).  Without network access (and no cache) the tests are skipped.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

import mpdtest
from mpdtest import CACHE_DIR, arg, make_case
from test_real_files import PACKAGE, _pip_commands

MUSIC = CACHE_DIR / "mutagen-ogg"
STAMP = ".fetched-from"
SUFFIXES = (".ogg", ".oga", ".opus")


def _fetch(dest: Path) -> str:
    """Download the sdist and extract its tests/data Ogg files into ``dest``; '' or a reason."""
    errors = []
    with tempfile.TemporaryDirectory(prefix="mutagen-sdist-") as tmp:
        for pip in _pip_commands():
            try:
                r = subprocess.run(
                    [*pip, "download", "--no-binary", ":all:", "--no-deps", "--disable-pip-version-check",
                     "--quiet", PACKAGE, "-d", tmp],
                    capture_output=True, text=True, timeout=240, env=dict(os.environ, PIP_NO_INPUT="1"))
            except (OSError, subprocess.TimeoutExpired) as exc:
                errors.append(f"{' '.join(pip)}: {exc}")
                continue
            archives = sorted(Path(tmp).glob("mutagen-*.tar.gz"))
            if r.returncode != 0 or not archives:
                errors.append(f"{' '.join(pip)}: {(r.stderr or r.stdout).strip()[-300:] or 'no archive'}")
                continue
            staging = Path(tempfile.mkdtemp(prefix=".mutagen-ogg-", dir=dest.parent))
            try:
                with tarfile.open(archives[0]) as tar:
                    for member in tar.getmembers():
                        parts = Path(member.name).parts
                        if (member.isfile() and len(parts) == 4 and parts[1:3] == ("tests", "data")
                                and parts[3].lower().endswith(SUFFIXES)):
                            out = staging / parts[3]
                            out.write_bytes(tar.extractfile(member).read())
                            os.utime(out, (member.mtime, member.mtime))
                (staging / STAMP).write_text(archives[0].name + "\n")
                if dest.exists():
                    shutil.rmtree(dest)
                staging.rename(dest)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            return ""
    return "; ".join(errors) or "no pip found"


@pytest.fixture(scope="session")
def mutagen_ogg_music() -> Path:
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / "mutagen-ogg.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (MUSIC / STAMP).exists():
            reason = _fetch(MUSIC)
            if reason:
                pytest.skip(f"could not fetch mutagen's source distribution from PyPI (network?): {reason}")
    if not _files(MUSIC):
        pytest.skip(f"no Ogg files in {MUSIC}")
    return MUSIC


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
