"""Real files nobody here wrote: the test data of mutagen's source distribution.

``music(name, suffixes)`` gives a music directory ``conformance/.cache/<name>/`` holding the files of
the sdist's ``tests/data`` whose names end with one of ``suffixes`` (or do not, with ``exclude=True``),
fetched once with ``pip download --no-binary :all: --no-deps mutagen`` and kept; the sdist itself is kept
too, so each selection is extracted without fetching again.  Without network access (and no cache) the
caller's test is skipped.  ``CONFORMANCE_MUTAGEN`` picks another version (``mutagen==1.47.0``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

from mpdtest import CACHE_DIR

PACKAGE = os.environ.get("CONFORMANCE_MUTAGEN", "mutagen")
STAMP = ".fetched-from"
SDIST = CACHE_DIR / "mutagen-sdist"


def _pip_commands() -> list[list[str]]:
    cmds = [[sys.executable, "-m", "pip"]]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            cmds.append([found])
    return cmds


def _sdist() -> tuple[Path | None, str]:
    """The downloaded sdist (kept in the cache), or (None, why not)."""
    have = sorted(SDIST.glob("mutagen-*.tar.gz"))
    if have:
        return have[-1], ""
    errors = []
    SDIST.mkdir(parents=True, exist_ok=True)
    for pip in _pip_commands():
        with tempfile.TemporaryDirectory(prefix="mutagen-sdist-", dir=SDIST) as tmp:
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
                errors.append(f"{' '.join(pip)}: {(r.stderr or r.stdout).strip()[-300:] or 'no sdist'}")
                continue
            target = SDIST / archives[0].name
            os.rename(archives[0], target)
            return target, ""
    return None, "; ".join(errors) or "no pip found"


def _extract(archive: Path, dest: Path, wanted) -> None:
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                parts = Path(member.name).parts
                if member.isfile() and len(parts) == 4 and parts[1:3] == ("tests", "data") and wanted(parts[3]):
                    out = staging / parts[3]
                    out.write_bytes(tar.extractfile(member).read())
                    os.utime(out, (member.mtime, member.mtime))
        (staging / STAMP).write_text(archive.name + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def music(name: str, suffixes: tuple[str, ...], exclude: bool = False) -> Path:
    """The music directory CACHE_DIR/name of mutagen's test files with (or, with ``exclude``, without)
    those suffixes (lower case, with the dot); skips the calling test when they cannot be had."""
    dest = CACHE_DIR / name
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / "mutagen.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (dest / STAMP).exists():
            archive, reason = _sdist()
            if archive is None:
                pytest.skip(f"could not fetch mutagen's source distribution from PyPI (network?): {reason}")
            _extract(archive, dest, lambda n: n.lower().endswith(suffixes) != exclude)
    if not any(p.name != STAMP for p in dest.iterdir()):
        pytest.skip(f"no files with {', '.join(suffixes)} in {dest}")
    return dest
