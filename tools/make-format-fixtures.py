#!/usr/bin/env python3
"""Generate the multi-format test library: one directory per format module in tools/fixtures/.

Usage:
    make-format-fixtures.py OUTDIR [--quiet] [--only NAME[,NAME...]]

Every module tools/fixtures/<name>.py (except common.py) defines ``make(outdir: Path)``, which writes
its files into OUTDIR/<name>/ with Debian's own tools (flac, oggenc, opusenc, sox, ffmpeg, wavpack,
mutagen...); tools/fixtures/common.py has the shared helpers (synthesised signals, fixed mtimes).
Conformance tests compare mpd and Fermata per directory, so a format whose plugin is missing only
affects its own directory.

Idempotent: OUTDIR/.make-format-fixtures.json records the hash of every script; if it matches,
nothing is done.  The library is built in a temporary sibling directory and renamed into place.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
STAMP = ".make-format-fixtures.json"


#: Modules built only when named with --only: libraries of their own (see each module's docstring).
SEPARATE = {"playlists", "fingerprint"}


def modules(only=None):
    names = sorted(p.stem for p in FIXTURES.glob("*.py") if p.stem not in ("common", "__init__"))
    if only:
        return [n for n in names if n in only]
    return [n for n in names if n not in SEPARATE]


def digest(names):
    h = hashlib.sha256()
    for path in [Path(__file__).resolve(), FIXTURES / "common.py"] + [FIXTURES / f"{n}.py" for n in names]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def load(name):
    sys.path.insert(0, str(FIXTURES))
    spec = importlib.util.spec_from_file_location(f"fixtures_{name}", FIXTURES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated module names")
    args = parser.parse_args()
    names = modules(set(filter(None, args.only.split(","))))
    stamp = {"modules": names, "digest": digest(names)}
    out = args.outdir.resolve()
    try:
        if json.loads((out / STAMP).read_text()) == stamp:
            return
    except (OSError, ValueError):
        pass
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=out.name + ".tmp-", dir=out.parent))
    try:
        for name in names:
            if not args.quiet:
                print(f"make-format-fixtures: {name}", file=sys.stderr)
            target = work / name
            target.mkdir()
            load(name).make(target)
        (work / STAMP).write_text(json.dumps(stamp))
        if out.exists():
            shutil.rmtree(out)
        os.rename(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


if __name__ == "__main__":
    main()
