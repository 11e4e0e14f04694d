"""mpd's own database in `db_file`: switching from mpd to Fermata and back without a rescan.

(a) The real mpd scans a library of several formats and is stopped; Fermata starts on the same
`db_file` with the music directory moved away (so it can neither open a music file nor rescan
one): it serves the library at once, answering the database commands byte for byte as mpd
does when it loads the same file, and it leaves `db_file` as mpd wrote it.
(b) A file is added and Fermata's `update` picks it up; started again on the same `db_file`,
mpd serves the library with the new file at once, without a rescan (the file keeps the
modification time Fermata gave it, and mpd logs nothing about it), exactly as Fermata reads
that same file. An `update` with nothing changed re-reads nothing on either side (neither saves).
"""

from __future__ import annotations

import array
import gzip
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import mpdtest

#: (path, encoder, tags): the library, several formats, nested and non-ASCII names.
SONGS = [
    ("Rock/Album One/01 one.mp3", "mp3", {"title": "Song One", "artist": "Artist A", "album": "Album One",
                                        "track": "1", "date": "2001", "genre": "Rock"}),
    ("Rock/Album One/02 two.mp3", "mp3", {"title": "Song Two", "artist": "Artist A", "album": "Album One",
                                        "track": "2"}),
    ("Jazz/blue.flac", "flac", {"TITLE": "Blue", "ARTIST": "Miles", "ALBUMARTIST": "Miles D", "ALBUM": "Kind",
                                "TRACKNUMBER": "3", "DATE": "1959", "GENRE": "Jazz", "COMPOSER": "M. Davis"}),
    ("Jazz/green.wv", "wv", {"Title": "Green", "Artist": "Bill", "Album": "Kind", "Track": "4"}),
    ("Ünïcode/ça va.ogg", "ogg", {"title": "Ça va", "artist": "Ünï Artist", "album": "Ålbum",
                                  "tracknumber": "1"}),
    ("Ünïcode/opus/ß.opus", "opus", {"title": "Straße", "artist": "Ünï Artist", "album": "Ålbum",
                                      "albumartist": "Various", "tracknumber": "2", "disc": "1"}),
    ("root.flac", "flac", {"TITLE": "Root", "ARTIST": "Miles", "ALBUM": "Kind", "TRACKNUMBER": "1"}),
]
#: The file added before Fermata's `update` in (b).
ADDED = ("Jazz/new/late.flac", "flac", {"TITLE": "Late", "ARTIST": "Miles", "ALBUM": "Later"})

#: Commands whose replies must be identical; `stats` is compared without its volatile lines.
COMMANDS = [
    "listallinfo", 'lsinfo ""', 'lsinfo "Jazz"', 'lsinfo "Rock/Album One"', 'lsinfo "Ünïcode"', "listall",
    "list album group albumartist", "list artist", "count group artist", 'find "(artist == \\"Miles\\")"',
    'search "(album contains \\"al\\")"', 'find "(modified-since \\"1600000000\\")"', "stats",
]
VOLATILE = (b"uptime:", b"playtime:")


def _encode(path: Path, encoder: str, tags: dict[str, str], seconds: float, work: Path) -> None:
    wav = work / "tmp.wav"
    subprocess.run(["sox", "-n", "-r", "44100", "-b", "16", "-c", "2", str(wav), "synth", str(seconds), "sine",
                    "440", "vol", "0.2"], check=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    if encoder == "mp3":
        subprocess.run(["lame", "--quiet", "-b", "128", "--tt", tags["title"], "--ta", tags["artist"],
                        "--tl", tags["album"], "--tn", tags["track"]]
                       + (["--ty", tags["date"]] if "date" in tags else [])
                       + (["--tg", tags["genre"]] if "genre" in tags else []) + [str(wav), str(path)], check=True)
    elif encoder == "flac":
        subprocess.run(["flac", "-s", "-f", *(f"-T{k}={v}" for k, v in tags.items()), "-o", str(path), str(wav)],
                       check=True)
    elif encoder == "ogg":
        subprocess.run(["oggenc", "-Q", *(arg for k, v in tags.items() for arg in ("-c", f"{k}={v}")),
                        "-o", str(path), str(wav)], check=True)
    elif encoder == "opus":
        subprocess.run(["opusenc", "--quiet", *(arg for k, v in tags.items() for arg in ("--comment", f"{k}={v}")),
                        str(wav), str(path)], check=True)
    elif encoder == "wv":
        subprocess.run(["wavpack", "-q", "-y", *(arg for k, v in tags.items() for arg in ("-w", f"{k}={v}")),
                        str(wav), "-o", str(path)],
                       check=True)
    wav.unlink()


@pytest.fixture(scope="module")
def library():
    root = Path(tempfile.mkdtemp(prefix="fermata-mpddb-"))
    music = root / "music"
    for index, (path, encoder, tags) in enumerate(SONGS):
        _encode(music / path, encoder, tags, 1.0 + 0.137 * index, root)
        os.utime(music / path, (1_600_000_000 + index, 1_600_000_000 + index))
    (music / "Jazz" / "list.m3u").write_text("blue.flac\ngreen.wv\n")
    os.utime(music / "Jazz" / "list.m3u", (1_600_000_100, 1_600_000_100))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _server(kind: str, root: Path) -> mpdtest.Server:
    binary = mpdtest.sut_binary() if kind == "sut" else mpdtest.ref_binary()
    if kind == "sut" and not binary.exists():
        pytest.fail(f"system under test not found: {binary}")
    return mpdtest.Server(kind, binary, root / "music", root / f"work-{kind}", {"db_file": str(root / "database")})


def _answers(server: mpdtest.Server) -> dict[str, bytes]:
    answers = {}
    for command in COMMANDS:
        reply = server.query(command)
        if command == "stats":
            reply = b"".join(line for line in reply.splitlines(keepends=True) if not line.startswith(VOLATILE))
        answers[command] = reply
    return answers


def _assert_same(expected: dict[str, bytes], actual: dict[str, bytes], what: str) -> None:
    for command in COMMANDS:
        assert actual[command] == expected[command], f"{what}: `{command}` differs"


def _age(path: Path, seconds: int = 1_700_000_000) -> None:
    """Gives `path` an old modification time: a server that rescans and saves gives it a new one."""
    os.utime(path, (seconds, seconds))


def test_switch_from_mpd_and_back(library):
    database = library / "database"
    music = library / "music"

    # mpd scans, then loads its own file: the reference answers.
    mpd = _server("ref", library)
    mpd.start(songs_hint=len(SONGS))
    mpd.stop()
    assert gzip.open(database).readline() == b"info_begin\n", "mpd writes its database gzip-compressed"
    _age(database)
    mpd_bytes = database.read_bytes()
    mpd.start()
    reference = _answers(mpd)
    assert b"db_update: 1700000000\n" in reference["stats"], "mpd loaded its file without a rescan"
    assert reference["listallinfo"].count(b"\nfile: ") + reference["listallinfo"].startswith(b"file: ") == len(SONGS)
    mpd.stop()

    # (a) Fermata on the same db_file, the music directory moved away: nothing to open, nothing to rescan.
    away = library / "music.away"
    music.rename(away)
    try:
        fermata = _server("sut", library)
        fermata.start()
        assert b"updating_db" not in fermata.query("status")
        _assert_same(reference, _answers(fermata), "Fermata on mpd's database")
        fermata.stop()
    finally:
        away.rename(music)
    assert database.read_bytes() == mpd_bytes, "Fermata leaves mpd's file as it is when nothing changed"
    assert (library / "database.fermata").exists(), "Fermata keeps its binary copy beside db_file"

    # Fermata's `update` re-reads nothing mpd scanned (a re-read song would count as a change and be saved).
    fermata.start()
    fermata.query("update")
    assert mpdtest.wait_until(lambda: b"updating_db" not in fermata.query("status"), timeout=30)
    assert database.read_bytes() == mpd_bytes, "an update with nothing changed leaves db_file as it is"

    # (b) A new file, an update on Fermata (started from its binary copy, stamped with mpd's file).
    path, encoder, tags = ADDED
    _encode(music / path, encoder, tags, 1.5, library)
    os.utime(music / path, (1_600_000_200, 1_600_000_200))
    assert f"songs: {len(SONGS)}\n".encode() in fermata.query("stats")
    fermata.query("update")
    assert mpdtest.wait_until(lambda: b"updating_db" not in fermata.query("status"), timeout=30)
    after = _answers(fermata)
    assert b"file: " + path.encode() in after["listallinfo"]
    fermata.stop()
    with gzip.open(database) as text:
        assert text.readline() == b"info_begin\n", "Fermata writes mpd's format, compressed as mpd does"
    written = database.stat().st_mtime_ns
    assert f"db_update: {database.stat().st_mtime_ns // 10**9}\n".encode() in after["stats"]

    # mpd again: the library with the new file, at once, no rescan (its save would touch the file).
    mpd.start()
    assert b"updating_db" not in mpd.query("status")
    back = _answers(mpd)
    # mpd's `update` finds nothing to re-read in what Fermata wrote (it saves only a modified database).
    mpd.query("update")
    assert mpdtest.wait_until(lambda: b"updating_db" not in mpd.query("status"), timeout=30)
    mpd.stop()
    assert database.stat().st_mtime_ns == written, "mpd did not rescan (nor save) the database"
    log = mpd.log_path.read_text(errors="replace").rsplit("\n=== ", 1)[-1]
    for word in ("corrupt", "discarding", "Malformed", "mismatch", "unknown line"):
        assert word not in log, f"mpd complained about Fermata's database: {word}"
    assert b"file: " + path.encode() in back["listallinfo"]
    # The same songs as Fermata served after its update (mpd reads lengths back truncated to the millisecond
    # below, as it does from its own file); byte for byte as Fermata reads that file when it is the only one.
    files = [line for line in after["listallinfo"].splitlines() if line.startswith((b"file: ", b"directory: "))]
    assert [line for line in back["listallinfo"].splitlines() if line.startswith((b"file: ", b"directory: "))] == files
    (library / "database.fermata").unlink()
    fermata.start()
    _assert_same(back, _answers(fermata), "Fermata on the database it wrote")
    fermata.stop()
    # Fermata wrote its copy again (stamped with this db_file), and left db_file alone.
    assert database.stat().st_mtime_ns == written
    assert (library / "database.fermata").exists()


def test_damaged_database_is_rescanned(library):
    """A db_file mpd cannot read either (damaged gzip) is logged and rescanned; nothing crashes."""
    root = Path(tempfile.mkdtemp(prefix="fermata-mpddb-damaged-"))
    try:
        (root / "music").symlink_to(library / "music")
        good = gzip.compress(b"info_begin\nformat: 2\nmpd_version: 0.23.12\nfs_charset: UTF-8\ninfo_end\n")
        (root / "database").write_bytes(good[:-6])
        fermata = _server("sut", root)
        fermata.start(songs_hint=len(SONGS))
        stats = mpdtest.parse_pairs(fermata.query("stats"))
        assert int(stats["songs"]) >= len(SONGS)
        fermata.stop()
        assert "rescanning" in fermata.log_path.read_text(errors="replace")
        with gzip.open(root / "database") as text:
            assert text.readline() == b"info_begin\n"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_old_fermata_db_file_is_loaded_and_rewritten(library):
    """A db_file in Fermata's binary format (as Fermata wrote it before db_file held mpd's) is loaded
    without a rescan and rewritten at once in mpd's format, which mpd then reads."""
    root = Path(tempfile.mkdtemp(prefix="fermata-mpddb-old-"))
    try:
        shutil.copytree(library / "music", root / "music", symlinks=True)
        fermata = _server("sut", root)
        fermata.start(songs_hint=len(SONGS))
        expected = _answers(fermata)
        fermata.stop()
        # The binary copy without its stamp line is the old db_file.
        binary = (root / "database.fermata").read_bytes()
        assert binary.startswith(b"fermata-stamp ")
        (root / "database.fermata").unlink()
        (root / "database").write_bytes(binary.split(b"\n", 1)[1])
        assert (root / "database").read_bytes().startswith(b"fermata-db ")
        (root / "music").rename(root / "music.away")
        try:
            fermata.start()
            assert mpdtest.wait_until(lambda: (root / "database.fermata").exists(), timeout=10)
            fermata.stop()
        finally:
            (root / "music.away").rename(root / "music")
        with gzip.open(root / "database") as text:
            assert text.readline() == b"info_begin\n", "the old db_file is rewritten in mpd's format"
        mpd = _server("ref", root)
        mpd.start()
        assert b"updating_db" not in mpd.query("status")
        answers = _answers(mpd)
        mpd.stop()
        assert answers["listall"] == expected["listall"]
        assert answers["list album group albumartist"] == expected["list album group albumartist"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_uncompressed_database_block(library):
    """`database { plugin "simple" path … compress "no" }`: both servers write and read the plain text file."""
    root = Path(tempfile.mkdtemp(prefix="fermata-mpddb-plain-"))
    try:
        (root / "music").symlink_to(library / "music")
        block = f'database {{\n    plugin "simple"\n    path "{root / "database"}"\n    compress "no"\n}}'
        servers = {}
        for kind in ("sut", "ref"):
            server = _server(kind, root)
            server.overrides["db_file"] = None
            server.extra_config = block
            servers[kind] = server
        fermata, mpd = servers["sut"], servers["ref"]
        fermata.start(songs_hint=len(SONGS))
        expected = _answers(fermata)
        fermata.stop()
        assert (root / "database").read_bytes().startswith(b"info_begin\n"), "written as plain text"
        assert b"block \"database\"" not in fermata.log_path.read_bytes()
        _age(root / "database")
        mpd.start()
        answers = _answers(mpd)
        mpd.stop()
        assert b"db_update: 1700000000\n" in answers["stats"], "mpd loaded Fermata's file without a rescan"
        assert answers["listall"] == expected["listall"]
        assert (root / "database").read_bytes().startswith(b"info_begin\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_replay_gain_of_songs_loaded_from_mpds_database(server_factory, tmp_path):
    """mpd's database has no line for ReplayGain (its `song_save` writes none; mpd reads the gain from the file it
    decodes). Fermata started on mpd's `db_file`, without a rescan, plays ReplayGain-tagged songs (FLAC, Ogg
    Vorbis) with the gain applied, sample for sample as mpd does, and leaves mpd's file as it is."""
    import audiofiles
    audiofiles.require_tools("sox", "flac", "oggenc")
    music = tmp_path / "music"
    music.mkdir()
    wav = tmp_path / "tone.wav"
    subprocess.run(["sox", "-n", "-r", "44100", "-b", "16", "-c", "2", str(wav), "synth", "0.6", "sine", "440",
                    "vol", "0.5"], check=True)
    gain = {"REPLAYGAIN_TRACK_GAIN": "-7.25 dB", "REPLAYGAIN_TRACK_PEAK": "0.5",
            "REPLAYGAIN_ALBUM_GAIN": "-3.10 dB", "REPLAYGAIN_ALBUM_PEAK": "0.6"}
    subprocess.run(["flac", "-s", "-f", "-TTITLE=gain", *(f"-T{k}={v}" for k, v in gain.items()),
                    "-o", str(music / "gain.flac"), str(wav)], check=True)
    subprocess.run(["oggenc", "-Q", "-c", "title=gain", *(arg for k, v in gain.items() for arg in ("-c", f"{k}={v}")),
                    "-o", str(music / "gain.ogg"), str(wav)], check=True)
    database = tmp_path / "database"
    ref = audiofiles.file_recorder(server_factory, "ref", music, tmp_path / "ref", replaygain="track",
                                   db_file=str(database))
    uris = ["gain.flac", "gain.ogg"]
    want = {uri: audiofiles.record_queue(ref, tmp_path / "ref", [f'add "{uri}"', "play"]) for uri in uris}
    with gzip.open(database) as text:
        assert b"song_begin: gain.ogg\n" in text.read(), "mpd saved its scan"
    copy = tmp_path / "mpd-database"
    shutil.copy(database, copy)
    _age(copy)
    mpd_bytes = copy.read_bytes()

    sut = audiofiles.file_recorder(server_factory, "sut", music, tmp_path / "sut", replaygain="track",
                                   db_file=str(copy))
    assert b"db_update: 1700000000\n" in sut.query("stats"), "Fermata loaded mpd's file without a rescan"
    mismatches = [audiofiles.recording_mismatch(uri, want[uri],
                                                audiofiles.record_queue(sut, tmp_path / "sut",
                                                                        [f'add "{uri}"', "play"]))
                  for uri in uris]
    assert not any(mismatches), "\n".join(filter(None, mismatches))
    # album mode too (the album gain of the same files).
    sut.query("replay_gain_mode album")
    ref.query("replay_gain_mode album")
    got = audiofiles.record_queue(sut, tmp_path / "sut", ['add "gain.flac"', "play"])
    mismatch = audiofiles.recording_mismatch("gain.flac (album)",
                                             audiofiles.record_queue(ref, tmp_path / "ref",
                                                                     ['add "gain.flac"', "play"]), got)
    assert mismatch is None, mismatch
    assert b"db_update: 1700000000\n" in sut.query("stats")
    assert copy.read_bytes() == mpd_bytes, "Fermata leaves mpd's file as it is"


def test_replay_gain_mode_set_while_a_song_plays_applies_to_it(server_factory, tmp_path):
    """mpd's decoder submits the ReplayGain it reads in the file whatever the mode; its outputs apply the mode
    of the moment. So `replay_gain_mode track` sent while a song plays with ReplayGain off scales the rest of
    that song, also for a song loaded from mpd's database (which stores no ReplayGain). The pipe output's
    command sleeps before it reads, so the mode changes while most of the song is still to be played; what
    both servers played after the first 512 KiB is the same, scaled. (Ogg Vorbis: float samples, which mpd
    scales without a dither, whose state would depend on when the mode changed.) About 5 s."""
    import audiofiles
    audiofiles.require_tools("sox", "oggenc")
    music = tmp_path / "music"
    music.mkdir()
    wav = tmp_path / "tone.wav"
    subprocess.run(["sox", "-n", "-r", "44100", "-b", "16", "-c", "2", str(wav), "synth", "3", "sine", "440",
                    "vol", "0.5"], check=True)
    subprocess.run(["oggenc", "-Q", "-c", "title=gain", "-c", "REPLAYGAIN_TRACK_GAIN=-7.25 dB",
                    "-c", "REPLAYGAIN_TRACK_PEAK=0.5", "-o", str(music / "gain.ogg"), str(wav)], check=True)
    database = tmp_path / "database"
    recordings = {}
    for kind in ("ref", "sut"):
        (tmp_path / kind).mkdir()
        record = tmp_path / kind / "rec-pipe.raw"
        if kind == "sut":
            copy = tmp_path / "mpd-database"
            shutil.copy(database, copy)
            _age(copy)
        output = {"type": "pipe", "name": "p", "command": f"sleep {mpdtest.scaled(1)}; exec cat > {record}"}
        server = server_factory(kind, music=music, outputs=[output], replaygain="off",
                                db_file=str(database if kind == "ref" else copy))
        if kind == "sut":
            assert b"db_update: 1700000000\n" in server.query("stats"), "Fermata loaded mpd's file"
        else:
            assert mpdtest.wait_until(lambda: database.exists(), mpdtest.scaled(10)), "mpd saved its scan"
        server.query('add "gain.ogg"\nplay\n')
        # The decoder has opened the song (its format is known) before the mode changes.
        assert mpdtest.wait_until(lambda: b"\naudio: " in server.query("status"), mpdtest.scaled(10))
        server.query("replay_gain_mode track\n")
        assert mpdtest.wait_until(lambda: b"state: stop" in server.query("status"), mpdtest.scaled(30))
        _, recordings[kind] = audiofiles.settled_recording(server, tmp_path / kind)
    ref, sut = recordings["ref"], recordings["sut"]
    assert len(ref) == 3 * 44100 * 8, len(ref)
    tail = array.array("f", ref[512 << 10:])
    assert max(abs(v) for v in tail) < 0.6 * 0.5, "mpd scaled the rest of the song (-7.25 dB)"
    assert len(sut) == len(ref) and sut[512 << 10:] == ref[512 << 10:], "Fermata scaled the rest as mpd did"
