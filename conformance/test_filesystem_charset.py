"""`filesystem_charset "ISO-8859-1"`, differentially: a library whose file and directory names are ISO-8859-1
bytes is served by both servers with the same UTF-8 URIs, and every way back from a URI to a file (queue and
playback, art, stored playlists, `update` of a directory) finds the same file, as in mpd 0.23.12.

Also: `filesystem_charset "UTF-8"` (Debian's mpd.conf) on the same names, Shift_JIS names, db_file, inotify, and
an unknown charset at startup. The libraries are made here, in temporary directories, with Python byte names and
the suite's tone MP3s (sox and lame); the server pairs are their own. About 6 s on a loaded 2-core machine, most of
it the three pairs' start.
"""

import gzip
import os
import shutil
import subprocess
import time

import pytest

import audiofiles
import mpdtest

LATIN1 = "ISO-8859-1"


@pytest.fixture(scope="module")
def latin1_music(tmp_path_factory):
    audiofiles.require_tools("sox", "lame")
    root = tmp_path_factory.mktemp("charset-music")
    wav = audiofiles.tone_wav(root.parent / "charset-tone.wav", 4.0)
    mp3 = audiofiles.encode(wav, root.parent / "charset-tone.mp3", {"title": "Tone", "artist": "Ensemble"})
    top = os.fsencode(root)
    os.mkdir(top + b"/R\xe9pertoire")
    for name in (b"caf\xe9.mp3", b"plain.mp3", b"R\xe9pertoire/na\xefve.mp3"):
        shutil.copyfile(mp3, top + b"/" + name)
    # A playlist in the library, named in ISO-8859-1: mpd reads its lines as they are (UTF-8), not converted.
    with open(top + b"/m\xe9lange.m3u", "wb") as m3u:
        m3u.write(b"caf\xe9.mp3\nplain.mp3\n" + "Répertoire/naïve.mp3\n".encode())
    # The directory's cover, for albumart (served as the bytes it holds).
    with open(top + b"/R\xe9pertoire/cover.jpg", "wb") as cover:
        cover.write(b"\xff\xd8\xff\xe0 not really a JPEG \xff\xd9")
    os.unlink(wav)
    return root


@pytest.fixture(scope="module")
def pair(server_pair, latin1_music):
    servers = server_pair(latin1_music, filesystem_charset=LATIN1)
    servers.require_sut()
    return servers


def both(pair, command: str) -> tuple[bytes, bytes]:
    return pair.ref.query(command), pair.sut.query(command)


def test_browsing_shows_utf8_uris(pair):
    ref, _ = both(pair, "listall")
    assert "file: Répertoire/naïve.mp3\n".encode() in ref, ref
    mpdtest.compare_on_pair(pair, "lsinfo\nlsinfo Répertoire\nlsinfo \"Répertoire/naïve.mp3\"\nlistall\n"
                            "listallinfo\nlistfiles Répertoire\n", "browse")


def test_find_and_search_by_file(pair):
    mpdtest.compare_on_pair(pair, "find file café.mp3\nsearch file É\nfind base Répertoire\n"
                            "count file café.mp3\nlist file\n", "find")


def test_queue_and_playback(pair):
    mpdtest.compare_on_pair(pair, "clear\nadd café.mp3\nadd Répertoire\nplaylistinfo\nplay 1\n", "queue")
    # Each server opened the file behind the URI and plays it (a name not converted back would fail to open and
    # stop the player with an error).
    for server in (pair.ref, pair.sut):
        deadline = time.monotonic() + mpdtest.scaled(5)
        while True:
            status = mpdtest.parse_pairs(server.query("status"))
            if "audio" in status or "error" in status or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status.get("state") == "play" and "error" not in status and "audio" in status, \
            (server.label, status)
    mpdtest.compare_on_pair(pair, "currentsong\nstop\n", "playing")


def test_library_playlists(pair):
    mpdtest.compare_on_pair(pair, "listplaylist mélange.m3u\nlistplaylistinfo mélange.m3u\nclear\n"
                            "load mélange.m3u\nplaylistinfo\nclear\n", "m3u")


def test_art(pair):
    for server in (pair.ref, pair.sut):
        reply = server.query("albumart \"Répertoire/naïve.mp3\" 0")
        assert reply.startswith(b"size: ") and b"not really a JPEG" in reply, (server.label, reply)
    mpdtest.compare_on_pair(pair, "albumart \"Répertoire/naïve.mp3\" 0\nalbumart café.mp3 0\n"
                            "readpicture \"Répertoire/naïve.mp3\" 0\n", "art")


def test_stored_playlists_hold_fs_charset_names(pair):
    mpdtest.compare_on_pair(pair, "clear\nadd café.mp3\nadd Répertoire\nsave Liste\nlistplaylist Liste\n"
                            "listplaylistinfo Liste\nplaylistadd Lïste2 café.mp3\n"
                            "playlistadd Lïste2 \"Répertoire/naïve.mp3\"\nplaylistdelete Lïste2 0\n"
                            "listplaylist Lïste2\nclear\nload Lïste2\nplaylistinfo\n", "playlists")
    for server in (pair.ref, pair.sut):
        names = [line for line in server.query("listplaylists").splitlines() if line.startswith(b"playlist: ")]
        assert sorted(names) == sorted(["playlist: Liste".encode(), "playlist: Lïste2".encode()]), server.label
        directory = os.fsencode(server.workdir / "playlists")
        # The file names and the lines are ISO-8859-1, as mpd writes them.
        assert sorted(os.listdir(directory)) == [b"Liste.m3u", b"L\xefste2.m3u"], server.label
        with open(directory + b"/Liste.m3u", "rb") as f:
            assert f.read() == b"caf\xe9.mp3\nR\xe9pertoire/na\xefve.mp3\n", server.label
        with open(directory + b"/L\xefste2.m3u", "rb") as f:
            assert f.read() == b"R\xe9pertoire/na\xefve.mp3\n", server.label
    mpdtest.compare_on_pair(pair, "rename Lïste2 Lëste\nrm Liste\nrm Lëste\n", "playlists-gone")


def test_names_that_are_not_utf8_are_refused(pair):
    """A client's bytes that are not UTF-8 do not convert to the charset (mpd's ICU conversion fails on them):
    stored playlist commands answer `Bad playlist name` or `No such playlist`, `listfiles` ICU's error name, and
    nothing is written; a UTF-8 name the charset lacks is saved with the charset's substitute (0x1A)."""
    mpdtest.compare_on_pair(pair, (
        b'save "ok"\nsave "\xff"\nrm "\xff"\nrename "\xff" "x"\nrename "ok" "\xff"\n'
        b'playlistadd "\xff" "caf\xc3\xa9.mp3"\nplaylistclear "\xff"\nplaylistdelete "\xff" 0\n'
        b'playlistmove "\xff" 0 1\nlistplaylist "\xff"\nlistplaylistinfo "\xff"\nload "\xfe"\n'
        b'listfiles "\xff"\nlistfiles "caf\xe9.mp3"\nlistplaylists\nsave "\xe6\x97\xa5"\nlistplaylists\n'
        b'rm "\xe6\x97\xa5"\nrm "ok"\nlistplaylists\n'), "not utf-8",
        # When each server saved its playlists: a second apart when the two saves straddle a second's end.
        volatile=("Last-Modified",))


def wait_idle_update(server) -> None:
    deadline = time.monotonic() + mpdtest.scaled(10)
    while "updating_db" in mpdtest.parse_pairs(server.query("status")):
        assert time.monotonic() < deadline, f"{server.label}: update does not finish"
        time.sleep(0.05)


def test_update_of_a_directory(pair, latin1_music):
    top = os.fsencode(latin1_music)
    shutil.copyfile(top + b"/plain.mp3", top + b"/R\xe9pertoire/\xe9t\xe9.mp3")
    os.unlink(top + b"/R\xe9pertoire/na\xefve.mp3")
    try:
        for server in (pair.ref, pair.sut):
            reply = server.query("update Répertoire")
            assert reply.startswith(b"updating_db: "), (server.label, reply)
            wait_idle_update(server)
        mpdtest.compare_on_pair(pair, "lsinfo Répertoire\nlistall\n", "updated")
        ref, _ = both(pair, "lsinfo Répertoire")
        assert "file: Répertoire/été.mp3\n".encode() in ref and "naïve".encode() not in ref, ref
        for server in (pair.ref, pair.sut):
            server.query("rescan \"Répertoire/été.mp3\"")
            wait_idle_update(server)
        mpdtest.compare_on_pair(pair, "lsinfo Répertoire\n", "rescanned")
    finally:
        shutil.copyfile(top + b"/plain.mp3", top + b"/R\xe9pertoire/na\xefve.mp3")
        os.unlink(top + b"/R\xe9pertoire/\xe9t\xe9.mp3")
        for server in (pair.ref, pair.sut):
            server.query("update")
            wait_idle_update(server)


def test_database_file_holds_utf8_names(pair):
    """db_file: names in UTF-8 and `fs_charset: UTF-8`, as mpd 0.23.12 writes it whatever the option says (so
    each server reads the other's file without a rescan)."""
    for server in (pair.ref, pair.sut):
        path = server.workdir / "database"
        deadline = time.monotonic() + mpdtest.scaled(10)
        while True:
            data = gzip.decompress(path.read_bytes()) if path.exists() else b""
            if "song_begin: naïve.mp3\n".encode() in data or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert b"\nfs_charset: UTF-8\n" in data, (server.label, data[:200])
        for line in ("directory: Répertoire\n", "begin: Répertoire\n", "song_begin: naïve.mp3\n",
                     "song_begin: café.mp3\n"):
            assert line.encode() in data, (server.label, line)


def test_a_multibyte_charset(server_pair, latin1_music, tmp_path):
    """Shift_JIS: two-byte characters, one of them ending in the byte of `\\` (表 is 0x95 0x5C)."""
    top = os.fsencode(tmp_path / "sjis")
    directory = "日本".encode("shift_jis")
    os.makedirs(top + b"/" + directory)
    source = os.fsencode(latin1_music) + b"/plain.mp3"
    shutil.copyfile(source, top + b"/" + directory + b"/" + "音楽～.mp3".encode("cp932"))
    shutil.copyfile(source, top + b"/" + "表.mp3".encode("shift_jis"))
    pair = server_pair(tmp_path / "sjis", filesystem_charset="Shift_JIS")
    pair.require_sut()
    assert "file: 日本/音楽～.mp3\n".encode() in pair.ref.query("listall")
    mpdtest.compare_on_pair(pair, "listall\nlistfiles 日本\nclear\nadd 日本\nadd 表.mp3\nplaylistinfo\nsave l\n"
                            "listplaylist l\nrm l\n", "shift-jis")


def test_watching_picks_up_fs_charset_names(server_factory, tmp_path, latin1_music):
    """`auto_update`: inotify names are converted too (the system under test alone: mpd waits 5 s before it
    updates, Fermata 1 s)."""
    music = os.fsencode(tmp_path / "watched")
    os.makedirs(music + b"/R\xe9pertoire")
    source = os.fsencode(latin1_music) + b"/plain.mp3"
    shutil.copyfile(source, music + b"/R\xe9pertoire/na\xefve.mp3")
    sut = server_factory("sut", music=tmp_path / "watched", filesystem_charset=LATIN1, auto_update="yes")
    assert sut.query("listall") == "directory: Répertoire\nfile: Répertoire/naïve.mp3\nOK\n".encode()
    shutil.copyfile(source, music + b"/R\xe9pertoire/\xe9t\xe9.mp3")
    os.makedirs(music + b"/D\xe9j\xe0")
    shutil.copyfile(source, music + b"/D\xe9j\xe0/vu.mp3")
    want = "directory: Déjà\nfile: Déjà/vu.mp3\ndirectory: Répertoire\nfile: Répertoire/été.mp3\n" \
        "file: Répertoire/naïve.mp3\nOK\n"
    deadline = time.monotonic() + mpdtest.scaled(10)
    while (got := sut.query("listall")) != want.encode():
        assert time.monotonic() < deadline, got
        time.sleep(0.1)


def test_unknown_charset_is_refused_at_startup(tmp_path):
    """Both servers exit with status 1 and ICU's reason, before serving anything."""
    sut_binary = mpdtest.sut_binary()
    if not sut_binary.exists():
        pytest.skip(f"system under test not found: {sut_binary}")
    messages = {}
    for label, binary in (("ref", mpdtest.ref_binary()), ("sut", sut_binary)):
        conf = tmp_path / f"{label}.conf"
        conf.write_text(f"bind_to_address \"127.0.0.1\"\nport \"{mpdtest.free_port()}\"\n"
                        f"filesystem_charset \"BOGUS-CS\"\n"
                        "audio_output {\n type \"null\"\n name \"n\"\n}\n")
        command = [str(binary), "--no-daemon", "--stderr", str(conf)] if mpdtest.is_mpd(binary) \
            else [str(binary), str(conf)]
        run = subprocess.run(command, capture_output=True, timeout=mpdtest.scaled(10))
        assert run.returncode == 1, (label, run.returncode, run.stderr)
        messages[label] = run.stderr.decode(errors="replace")
    mpd_message = messages["ref"].strip().splitlines()[-1]
    assert mpd_message == "exception: Failed to initialize charset 'BOGUS-CS': U_FILE_ACCESS_ERROR", messages
    assert messages["sut"].strip().splitlines()[-1] == "fermata: " + mpd_message.removeprefix("exception: "), \
        messages


def test_utf8_charset_skips_names_that_are_not_utf8(server_pair, latin1_music):
    """`filesystem_charset "UTF-8"` (Debian's mpd.conf sets it): a name that is not UTF-8 converts to U+FFFD,
    which names no file, so mpd leaves such files and directories out; so must the system under test."""
    pair = server_pair(latin1_music, filesystem_charset="UTF-8")
    pair.require_sut()
    ref = pair.ref.query("listall")
    assert ref == b"file: plain.mp3\nOK\n", ref
    mpdtest.compare_on_pair(pair, "listall\nlsinfo\nlistfiles\n", "utf8-charset")


def test_unix_socket_path_is_not_converted(server_factory, tmp_path):
    """mpd 0.23.12 binds `bind_to_address` before it configures `filesystem_charset`, so a socket path is used as
    the configuration's UTF-8 bytes, whatever the charset; so does Fermata. Both answer on that socket."""
    import socket
    names = {}
    for kind in ("ref", "sut"):
        directory = tmp_path / kind
        directory.mkdir()
        path = directory / "ä.sock"
        music = tmp_path / "music"
        music.mkdir(exist_ok=True)
        server_factory(kind, music=music, filesystem_charset=LATIN1, bind_to_address=[mpdtest.HOST, str(path)])
        names[kind] = os.listdir(os.fsencode(directory))
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(5)
            client.connect(os.fsencode(path))
            assert client.recv(64).startswith(b"OK MPD "), kind
    assert names["ref"] == names["sut"] == ["ä.sock".encode()]
