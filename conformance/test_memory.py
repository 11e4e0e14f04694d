"""Fermata's memory after loading a large library, as a user's server holds it (Fermata only: the figures are its
own, and mpd's memory is `make bench`'s business).

The library is a generated database in mpd's format (30000 songs whose files do not exist, so nothing is scanned),
loaded once from that text file and, after a restart, from the binary copy Fermata keeps beside it. Both hold the
same snapshot, so both leave the same anonymous memory behind (read from /proc/PID/smaps_rollup). glibc raised
its thresholds after freeing the text load's temporaries and then kept 11 MiB more (45 MiB at 100k songs), until
`configureAllocator` fixed them. Thresholds the user set (`MALLOC_*_`, `MALLOC_ARENA_MAX`, `GLIBC_TUNABLES`) are
left as they are: the second case, with glibc's own, shows the memory the fix saves. About 10 s.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import mpdtest

SONGS = (300, 10, 10)   # artists, albums per artist, songs per album


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> bytes:
    binary = mpdtest.sut_binary()
    if not binary.exists():
        pytest.fail(f"system under test not found: {binary}")
    work = tmp_path_factory.mktemp("header")
    return mpdtest.generated_database(mpdtest.database_header(binary, work), *SONGS)


def _anonymous_kib(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Anonymous:"))


def _loaded(work: Path, run: str, env: dict[str, str]) -> tuple[int, str]:
    """Starts Fermata on `work`'s database, waits until it answers with the whole library and has settled, and
    returns its anonymous memory in KiB and the database files beside `db`."""
    server = mpdtest.Server("sut", mpdtest.sut_binary(), work / "music", work / run,
                            {"db_file": str(work / "db")})
    server.env = env
    server.start()
    try:
        songs = SONGS[0] * SONGS[1] * SONGS[2]
        assert mpdtest.wait_until(lambda: f"\nsongs: {songs}\n".encode() in server.query("stats"), 30)
        # The binary copy is written after the load, off the loop: wait until it is there and the memory settles.
        assert mpdtest.wait_until(lambda: (work / "db.fermata").exists(), 30)
        previous = -1
        for _ in range(50):
            time.sleep(0.2)
            current = _anonymous_kib(server.proc.pid)
            if current == previous:
                break
            previous = current
        return previous, " ".join(sorted(p.name for p in work.iterdir() if p.name.startswith("db")))
    finally:
        server.stop()


def _both_loads(tmp_path: Path, database: bytes, env: dict[str, str]) -> tuple[int, int]:
    (tmp_path / "music").mkdir()
    (tmp_path / "db").write_bytes(database)
    from_text, files = _loaded(tmp_path, "text", env)
    assert files == "db db.fermata", files
    assert (tmp_path / "db").read_bytes() == database, "mpd's database was rewritten"
    from_copy, _ = _loaded(tmp_path, "copy", env)
    return from_text, from_copy


def test_loading_mpds_database_leaves_no_more_memory_than_loading_fermatas_copy(tmp_path, database):
    from_text, from_copy = _both_loads(tmp_path, database, {})
    # Measured: 16.3 MiB and 16.0 MiB; 27.2 MiB from the text before the fix.
    assert from_text <= from_copy + 3 * 1024, f"{from_text} KiB after mpd's database, {from_copy} KiB after the copy"


def test_glibcs_own_thresholds_keep_what_the_text_load_freed(tmp_path, database):
    """The same loads with thresholds the user chose (here glibc's own: `GLIBC_TUNABLES` naming only the default
    perturb byte; the tunables of the thresholds, the top pad and the mmap count would each turn glibc's dynamic
    thresholds off, as the fix does): Fermata leaves them alone, and the memory the fix saves shows again."""
    from_text, from_copy = _both_loads(tmp_path, database, {"GLIBC_TUNABLES": "glibc.malloc.perturb=0"})
    assert from_text > from_copy + 6 * 1024, f"{from_text} KiB after mpd's database, {from_copy} KiB after the copy"


HEAP = 64 << 20   # glibc's HEAP_MAX_SIZE on 64-bit: each heap of a thread arena is a mapping of this, so aligned


def _arena_heaps(pid: int) -> int:
    """The heaps of glibc's thread arenas in /proc/PID/maps: an anonymous read-write mapping starting on a 64 MiB
    boundary, followed by the reserved rest of those 64 MiB (`---p`), or taking them all."""
    mappings = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            mappings.append((start, end, fields[1], len(fields) < 6))
    heaps = 0
    for index, (start, end, mode, anonymous) in enumerate(mappings):
        if not anonymous or not mode.startswith("rw") or start % HEAP:
            continue
        if end - start == HEAP:
            heaps += 1
        elif index + 1 < len(mappings):
            rest_start, rest_end, rest_mode, rest_anonymous = mappings[index + 1]
            if rest_anonymous and rest_mode.startswith("---") and rest_start == end and rest_end == start + HEAP:
                heaps += 1
    return heaps


def _heaps_after_scan(work: Path, music: Path, env: dict[str, str]) -> int:
    """Starts Fermata on `music` with no database, waits for its first scan to end, and counts its arena heaps."""
    server = mpdtest.Server("sut", mpdtest.sut_binary(), music, work, {"db_file": str(work / "db")})
    server.env = env
    server.start()
    try:
        assert mpdtest.wait_until(lambda: b"\nsongs: 0\n" not in server.query("stats")
                                  and b"updating_db" not in server.query("status"), 60)
        return _arena_heaps(server.proc.pid)
    finally:
        server.stop()


def test_a_scans_threads_share_two_heaps_unless_the_environment_says(tmp_path, music_dir):
    """The update thread, the walk's helper and the tag readers each got a heap of their own from glibc (up to eight
    per processor), each left with pages partly used; Fermata caps them at two (the main heap and one shared), unless
    `MALLOC_ARENA_MAX` (or another allocator setting) is in the environment."""
    capped = _heaps_after_scan(tmp_path / "capped", music_dir, {})
    chosen = _heaps_after_scan(tmp_path / "chosen", music_dir, {"MALLOC_ARENA_MAX": "8"})
    assert capped <= 1, f"{capped} thread arena heaps"
    assert chosen > capped, f"{chosen} thread arena heaps with MALLOC_ARENA_MAX=8, {capped} without"
