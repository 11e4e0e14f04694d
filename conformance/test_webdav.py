"""WebDAV directories mounted into the database, as Debian's mpd mounts `http://` and `https://` URIs with its curl
storage plugin: the test starts tools/webdavserver.py (standard library only, 127.0.0.1) on a directory of a few
FLACs made with sox and metaflac, and mounts it (a `database` block with a `cache_directory`, as test_storage.py)
in mpd and in Fermata: its songs are listed, found and played under the mount point, `unmount` takes them away,
and the listings mpd's PROPFIND parser reads its own way (a 404 propstat first, a status ending in a line break,
an href after its propstat, absolute hrefs in another case, a redirect) and the roots it cannot list at all (404,
a refused connection, a reply that is not XML or not well-formed, an empty one, two redirects, a 500) give the
same database in both; the errors themselves are only logged, by both in mpd's words."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import conftest
import mpdtest
from test_real_files import mutagen_other_music  # noqa: F401  (the fixture: mutagen's test data)
from test_storage import _mount_pair, _same, _settle, _stop_pair, copy_format_songs, format_songs_mounted_as_in_mpd

REPO_ROOT = mpdtest.REPO_ROOT

#: The share's files: path, seconds, title. The `x-…` and `ns-x` names are the quirks tools/webdavserver.py's
#: /quirks/ listing gives their own shapes.
SONGS = [("Artist Dir/long song.flac", 30, "Long"), ("short.flac", 1, "Short"), ("sub/Ünïcode #1.flac", 2, "Uni"),
         ("x-404first.flac", 1, "Q404"), ("x-newline.flac", 1, "QNewline"), ("x-nohref.flac", 1, "QNohref"),
         ("x-nodate.flac", 1, "QNodate"), ("x-baddate.flac", 1, "QBaddate"), ("ns-x.flac", 1, "QNs")]


#: The directory the fixture's server serves (for the cases that change it).
SHARE: dict[str, object] = {}


def webdav_share():
    return SHARE["path"]


def _flac(path, seconds: int, title: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(path), "synth", str(seconds), "sine", "440"],
                   check=True)
    subprocess.run(["metaflac", f"--set-tag=TITLE={title}", "--set-tag=ARTIST=Dav Artist",
                    "--set-tag=ALBUM=Dav Album", str(path)], check=True)


@pytest.fixture(scope="module")
def webdav():
    """``http://127.0.0.1:PORT``, served by tools/webdavserver.py from a directory of FLACs."""
    for tool in ("sox", "metaflac"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (scripts/install-deps.sh test installs it)")
    root = conftest._workdir("webdav")
    share = root / "share"
    for path, seconds, title in SONGS:
        _flac(share / path, seconds, title)
    port_file = root / "port"
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "tools" / "webdavserver.py"), "--root", str(share),
                             "--port-file", str(port_file), "--lifetime", "3600"],
                            stdout=subprocess.DEVNULL, stderr=open(root / "server.log", "wb"))
    assert mpdtest.wait_until(port_file.exists, 10), "webdavserver did not start"
    SHARE["path"] = share
    try:
        yield f"http://{mpdtest.HOST}:{port_file.read_text().strip()}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def test_a_mounted_directory_is_listed_searched_and_played_as_in_mpd(webdav):
    """`mount` of a WebDAV directory: `listmounts`, its songs under the mount point for lsinfo, listall(info), find,
    search, list and count (their times from `getlastmodified`, none for a missing or unreadable one), a song of it
    (a name with a space) plays through the curl input plugin, `listfiles` of the mount and of the URI itself lists
    the directory (last entry first, as mpd), and `unmount` takes it all away, the same in both."""
    root, pair = _mount_pair()
    try:
        _same(pair, [f"mount d {webdav}/dav", "listmounts"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo", "lsinfo d", 'lsinfo "d/Artist Dir"', "lsinfo d/sub", "listall d", "listallinfo d",
                     'find artist "Dav Artist"', "search title Sho", "search file nic", 'find base "d/sub"',
                     "list album group artist", 'count artist "Dav Artist"', 'lsinfo "d/sub/Ünïcode #1.flac"',
                     "stats", "listfiles d", "listfiles d/sub", "listfiles d/nothing", f"listfiles {webdav}/dav/sub/",
                     f"listfiles {webdav}/missing", "listfiles ftp://127.0.0.1/x"], skip=(b"db_playtime:",))
        _same(pair, ['add "d/Artist Dir/long song.flac"', "add d/short.flac", "playlistinfo"])
        # The decoder's tags of a song played from the server replace the queued song's and raise the queue's
        # version, as for any remote song.
        answers = [mpdtest.settled_play(server, "play 0\n", retagged_from=mpdtest.queue_version(server))
                   for server in pair]
        assert answers[1] == answers[0]
        _same(pair, ["playlistinfo", "stop", "unmount d", "lsinfo", "listmounts", "playlistinfo"])
    finally:
        _stop_pair(root, pair)


def test_listings_mpds_parser_reads_its_own_way_as_in_mpd(webdav):
    """The quirks of mpd's multistatus parser decide what is listed: only a response's first propstat counts, a
    status ending in a line break is no 200, an href after the propstat is added to the next response's, entries
    deeper down, elsewhere or with a 404 are left out; absolute hrefs in another case are taken; a collection
    reached through a redirect lists names under another path, which mpd drops; a mount URI ending in a slash, and one
    with an escaped space (the listing's base path is unescaped)."""
    root, pair = _mount_pair()
    try:
        _same(pair, [f"mount q {webdav}/quirks", f"mount ab {webdav}/absolute/", f"mount r {webdav}/redirect/sub",
                     f"mount s {webdav}/dav/sub/", f"mount e {webdav}/dav/Artist%20Dir", "listmounts"])
        for server in pair:
            _settle(server)
        listed = _same(pair, ["lsinfo", "listallinfo q", "listallinfo ab", "listallinfo r", "listallinfo s",
                              'find title "QNodate"', "listfiles q", "listfiles ab", "listfiles r", "listfiles s",
                              "listallinfo e", "listfiles e"])
        # What mpd's parser takes (the default namespace, no date) and drops (the rest of the quirks).
        assert b"file: q/ns-x.flac\n" in listed[1][1] and b"file: q/x-nodate.flac\nFormat" in listed[1][1]
        assert b"404first" not in listed[1][1] and b"newline" not in listed[1][1] and b"nohref" not in listed[1][1]
        assert b"file: e/long song.flac\n" in listed[10][1]
    finally:
        _stop_pair(root, pair)


#: Roots that cannot be listed, and the error mpd logs for each (mpd's curl storage's words).
UNREADABLE = [
    ("missing", "/missing", 'Status 404 from WebDAV server; expected "207 Multi-Status"'),
    ("plain", "/plain", "Unexpected Content-Type from WebDAV server"),
    ("malformed", "/malformed", "mismatched tag"),
    ("empty", "/empty", "no element found"),
    ("redirect2", "/redirect2/sub", "CURL failed: Maximum (1) redirects followed"),
    ("status", "/status/500", 'Status 500 from WebDAV server; expected "207 Multi-Status"'),
]


def test_roots_that_cannot_be_listed_leave_empty_mount_points_as_in_mpd(webdav):
    """`mount` makes no request: it answers OK for a root that answers 404, a reply that is not XML, one that is
    not well-formed, an empty one, two redirects, a 500 and a port where nothing listens; the update finds
    nothing, each mount point is an empty directory, and both servers log mpd's error."""
    root, pair = _mount_pair()
    refused = f"http://{mpdtest.HOST}:{mpdtest.free_port()}/x"
    try:
        mounts = [f"mount {name} {webdav}{path}" for name, path, _ in UNREADABLE] + [f"mount refused {refused}"]
        _same(pair, mounts + ["listmounts"])
        for server in pair:
            _settle(server)
        # (Not `listfiles refused`: libcurl's message tells how many milliseconds the connection took to fail.)
        _same(pair, ["lsinfo"] + [f"lsinfo {name}" for name, _, _ in UNREADABLE] + ["lsinfo refused", "listall",
                                                                                     "stats"]
              + [f"listfiles {name}" for name, _, _ in UNREADABLE], skip=(b"db_playtime:",))
        for server in pair:
            log = server.log_path.read_text(errors="replace")
            for name, _, message in UNREADABLE:
                assert message in log, (server.label, name, message)
            assert f"CURL failed: Failed to connect to {mpdtest.HOST} port {refused.split(':')[2].split('/')[0]}" \
                in log, server.label
    finally:
        _stop_pair(root, pair)


def test_an_update_and_a_restart_of_a_mount_as_in_mpd(webdav, tmp_path):
    """`update d` after a song is added to the server's directory and one removed (mpd asks each known entry again,
    Fermata lists the directory: the same database), then a restart, which mounts it again from the state file."""
    root, pair = _mount_pair(state_file=True)
    share = Path(webdav_share())
    added, removed = share / "sub" / "added.flac", share / "sub" / "x-gone.flac"
    try:
        _flac(removed, 1, "Gone")
        _same(pair, [f"mount d {webdav}/dav/sub"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo d"])
        _flac(added, 1, "Added")
        removed.unlink()
        _same(pair, ["update d"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo d", 'find title "Added"', "listallinfo d"])
        for server in pair:
            conftest._stop(server)
        conftest._start(pair)
        # The root of the restored mount has no Last-Modified now: mpd's database file keeps no time for it.
        after = _same(pair, ["listmounts", "lsinfo", "lsinfo d", "listallinfo d"])
        assert b"file: d/added.flac\n" in after[2][1] and b"x-gone" not in after[2][1]
        # An update with nothing changed reads no song of Fermata's again: the cached database has no sizes, so the
        # time decides, as in mpd. (mpd itself reads the head of each FLAC on every update, to look for a cue sheet
        # with its `flac` playlist plugin as a folder, and asks for a `.mpdignore` the listing does not have; neither
        # changes what it lists.)
        before = _served(webdav)
        sut = pair[1]
        assert sut.query("update d").startswith(b"updating_db: ")
        _settle(sut)
        now = _served(webdav)
        read = {path: now[path] - before.get(path, 0) for path in now
                if path.endswith(".flac") and now[path] != before.get(path, 0)}
        assert read == {}, read
        assert pair[0].query("update d").startswith(b"updating_db: ")
        _settle(pair[0])
        _same(pair, ["listallinfo d"])
    finally:
        added.unlink(missing_ok=True)
        removed.unlink(missing_ok=True)
        _stop_pair(root, pair)


def test_a_mounted_song_gone_from_the_server_fails_to_play_as_in_mpd(webdav):
    """A song of the mount that the server no longer has: `play` fails with the curl input's error for the 404, in
    `status` as in mpd."""
    root, pair = _mount_pair()
    gone = Path(webdav_share()) / "sub" / "later gone.flac"
    try:
        _flac(gone, 1, "Later")
        _same(pair, [f"mount d {webdav}/dav/sub"])
        for server in pair:
            _settle(server)
        gone.unlink()
        statuses = [mpdtest.settled_failure(server, '"d/later gone.flac"') for server in pair]
        assert statuses[1] == statuses[0]
        assert b"error: " in statuses[0]
    finally:
        gone.unlink(missing_ok=True)
        _stop_pair(root, pair)


def test_the_propfind_requests_are_mpds(webdav):
    """Both servers ask with a Depth 0 PROPFIND of the root, a Depth 1 of each directory (its URL ending in a
    slash), and a Depth 0 of each song before reading it."""
    requests = {}
    root, pair = _mount_pair()
    try:
        for server in pair:
            before = urllib.request.urlopen(f"{webdav}/log").read().decode().splitlines()
            assert server.query(f"mount d {webdav}/dav/sub") == b"OK\n"
            _settle(server)
            after = urllib.request.urlopen(f"{webdav}/log").read().decode().splitlines()
            requests[server.label] = sorted(line for line in after[len(before):]
                                            if line.startswith("PROPFIND") and "/log" not in line)
        expected = sorted(["PROPFIND /dav/sub depth=0", "PROPFIND /dav/sub/ depth=1",
                           "PROPFIND /dav/sub/%C3%9Cn%C3%AFcode%20%231.flac depth=0"])
        assert list(requests.values()) == [expected, expected], requests
    finally:
        _stop_pair(root, pair)


def _pair_with_curl_input(lines: str):
    """`_mount_pair()`'s servers, restarted with `input { plugin "curl" LINES }` unless LINES is empty."""
    root, pair = _mount_pair()
    if lines:
        for server in pair:
            server.extra_config += '\ninput {\n    plugin "curl"\n    ' + lines + "\n}"
            conftest._stop(server)
        conftest._start(pair)
    return root, pair


@pytest.mark.parametrize("block", ['proxy "127.0.0.1:{port}"', 'enabled "no"'], ids=["dead proxy", "disabled"])
def test_the_curl_input_settings_count_for_the_songs_not_the_listing_as_in_mpd(webdav, block):
    """As mpd's curl storage, the PROPFIND requests ignore `input { plugin "curl" }`: with a proxy where nothing
    listens the directory is listed (`listfiles`) but its songs, read through the curl input plugin, are not, so the
    mount point is empty; with the plugin disabled the songs are read through ffmpeg's http input instead. The same
    in both."""
    root, pair = _pair_with_curl_input(block.format(port=mpdtest.free_port()))
    try:
        _same(pair, [f"mount d {webdav}/dav/sub"])
        for server in pair:
            _settle(server)
        reply = _same(pair, ["lsinfo", "lsinfo d", "listall d", "listfiles d", "stats"], skip=(b"db_playtime:",))
        assert b"file: \xc3\x9cn\xc3\xafcode #1.flac\n" in reply[3][1]
        assert (b"\nfile: " in reply[2][1]) == ("enabled" in block), reply[2][1]
    finally:
        _stop_pair(root, pair)


def test_a_silent_server_stalls_nobody(webdav):
    """Fermata only (mpd's update thread waits the same, but its `unmount` then waits for that update: probed, 20 s with
    the server's `--stall 20`): the server never answers the PROPFIND of a mount's root. The update waits on its own
    thread: `status` (with `updating_db:`), `lsinfo` of the mount point, a second `mount` and `unmount` of both
    answer at once."""
    root, pair = _mount_pair(kinds=("sut",))
    sut = pair[0]
    try:
        assert sut.query(f"mount s {webdav}/stall/x") == b"OK\n"
        for command, expected in (("status", b"updating_db:"), ("lsinfo s", b"OK\n"),
                                  (f"mount d {webdav}/dav/sub", b"OK\n"), ("unmount s", b"OK\n"),
                                  ("listmounts", b"storage: " + webdav.encode()), ("unmount d", b"OK\n")):
            start = time.monotonic()
            assert expected in sut.query(command), command
            assert time.monotonic() - start < mpdtest.scaled(2), command
        assert sut.alive()
    finally:
        _stop_pair(root, pair)


@pytest.fixture(scope="module")
def webdavs(webdav):
    """``https://127.0.0.1:PORT`` (the same directory) and the server's self-signed certificate (PEM)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is not installed (scripts/install-deps.sh test installs it)")
    root = conftest._workdir("webdavs")
    cert, key = root / "cert.pem", root / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", f"/CN={mpdtest.HOST}", "-addext", f"subjectAltName=IP:{mpdtest.HOST}"],
                   check=True, capture_output=True)
    port_file = root / "port"
    proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "tools" / "webdavserver.py"), "--root",
                             str(webdav_share()), "--port-file", str(port_file), "--lifetime", "3600", "--tls",
                             str(cert), str(key)], stdout=subprocess.DEVNULL, stderr=open(root / "server.log", "wb"))
    assert mpdtest.wait_until(port_file.exists, 10), "webdavserver did not start"
    try:
        yield f"https://{mpdtest.HOST}:{port_file.read_text().strip()}", cert
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("block", ["", 'verify_peer "no"\n    verify_host "no"', 'cacert "{cert}"'],
                         ids=["defaults", "no verification", "cacert"])
def test_https_listings_ignore_the_curl_input_tls_settings_as_in_mpd(webdavs, block):
    """An https:// server with a self-signed certificate: the PROPFIND requests verify it with libcurl's defaults
    whatever `input { plugin "curl" }` says (no verification, or the certificate as `cacert`), as mpd's curl storage
    does, so `listfiles` of the URI answers libcurl's TLS error and a mount of it stays empty, the same in both."""
    url, cert = webdavs
    root, pair = _pair_with_curl_input(block.format(cert=cert))
    try:
        _same(pair, [f"mount d {url}/dav/sub"])
        for server in pair:
            _settle(server)
        replies = _same(pair, [f"listfiles {url}/dav/sub", "lsinfo d", "listfiles d"])
        assert replies[0][1].startswith(b"ACK [5@0] {listfiles} CURL failed: "), replies[0][1]
    finally:
        _stop_pair(root, pair)


@pytest.mark.parametrize("block", ["", 'verify_peer "no"\n    verify_host "no"', 'verify_peer "no"', 'cacert "{cert}"'],
                         ids=["defaults", "no verification", "peer not verified", "cacert"])
def test_https_streams_follow_the_curl_input_tls_settings_as_in_mpd(webdavs, block):
    """A song over https:// from a server with a self-signed certificate for 127.0.0.1, queued by URL and played:
    with libcurl's defaults both fail with the same TLS error in `status`; without verification (`verify_peer "no"`
    alone is enough) it plays to its end; with the certificate as `cacert` it plays too."""
    url, cert = webdavs
    root, pair = _pair_with_curl_input(block.format(cert=cert))
    song = f"{url}/dav/short.flac"
    try:
        for server in pair:
            assert server.query(f'command_list_begin\nclear\nadd "{song}"\nplay\ncommand_list_end') == b"OK\n"
        for server in pair:
            assert mpdtest.wait_until(lambda: b"state: play" not in server.query("status"), timeout=20), server.label
        replies = _same(pair, ["status", "playlistinfo"], skip=(b"volume:", b"audio:", b"nextsong"))
        failed = b"\nerror: " in replies[0][1]
        assert failed == (block == ""), replies[0][1]
    finally:
        _stop_pair(root, pair)


def _served(webdav: str) -> dict[str, int]:
    """The bytes tools/webdavserver.py wrote of each path so far."""
    lines = urllib.request.urlopen(f"{webdav}/served").read().decode().splitlines()
    return {path: int(count) for count, path in (line.split(" ", 1) for line in lines)}


def _served_for_mounts(webdav: str, pair, directory: str, name: str) -> dict[str, int]:
    """Mounts /dav/DIRECTORY at `d` in each server in turn, after the scan the bytes of NAME each was sent."""
    served = {}
    path = f"/dav/{directory}/{name}"
    for server in pair:
        before = _served(webdav).get(path, 0)
        assert server.query(f"mount d {webdav}/dav/{directory}") == b"OK\n"
        _settle(server)
        served[server.label] = _served(webdav).get(path, 0) - before
    return served


#: The smallest standard MIDI file: a header and one track with only its end.
MIDI = (b"MThd\x00\x00\x00\x06\x00\x00\x00\x01\x00\x60"
        b"MTrk\x00\x00\x00\x04\x00\xff\x2f\x00")


def test_a_song_whose_plugin_only_scans_files_is_left_out_of_a_mount_as_in_mpd(webdav):
    """mpd scans a song of a storage without local files through its input stream (`tag_stream_scan`): only plugins
    with a stream scan are asked, so a `.mid` (fluidsynth only scans files) is left out of the mount, while the
    same file in the music directory is a song; the FLAC, MP3, Ogg Vorbis, Opus and WAV songs beside it are scanned
    through their streams, with the same tags, durations and formats as in mpd."""
    root, pair = _mount_pair()
    folder = Path(webdav_share()) / "scanfile"
    try:
        folder.mkdir(exist_ok=True)
        (folder / "tune.mid").write_bytes(MIDI)
        _flac(folder / "beside.flac", 1, "Beside")
        wave = folder / "w.wav"
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wave), "synth", "2", "sine", "440"],
                       check=True)
        subprocess.run(["lame", "--quiet", "--tt", "Mad", "--ta", "Dav Artist", str(wave), str(folder / "mad.mp3")],
                       check=True)
        subprocess.run(["oggenc", "--quiet", "-t", "Vorbis", "-a", "Dav Artist", "-o", str(folder / "v.ogg"),
                        str(wave)], check=True)
        subprocess.run(["opusenc", "--quiet", "--title", "Opus", str(wave), str(folder / "o.opus")], check=True)
        _same(pair, [f"mount d {webdav}/dav/scanfile"])
        for server in pair:
            _settle(server)
        replies = _same(pair, ["lsinfo d", "listallinfo d"])
        assert b"beside.flac" in replies[0][1] and b"Title: Mad" in replies[1][1] and b"w.wav" in replies[1][1]
        assert b"tune.mid" not in replies[1][1]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _stop_pair(root, pair)


def test_a_scan_reads_the_songs_metadata_not_the_whole_song(webdav):
    """Scanning a large FLAC of a mount reads what the plugin's stream scan reads (its metadata, and what the curl
    input has buffered by then), not the whole file, in Fermata as in mpd: both databases are the same, and each
    server is sent under a third of the file (tools/webdavserver.py counts the bytes the socket took)."""
    folder = Path(webdav_share()) / "big"
    song = folder / "big.flac"
    folder.mkdir(exist_ok=True)
    subprocess.run(["sox", "-n", "-r", "96000", "-c", "2", "-b", "24", str(song), "synth", "120", "whitenoise"],
                   check=True)
    subprocess.run(["metaflac", "--set-tag=TITLE=Big", str(song)], check=True)
    size = song.stat().st_size
    assert size > 25_000_000
    root, pair = _mount_pair()
    try:
        served = _served_for_mounts(webdav, pair, "big", "big.flac")
        _same(pair, ["lsinfo d"])
        print(f"bytes of a {size}-byte FLAC sent for its scan: {served}")
        assert all(0 < count < size // 3 for count in served.values()), (size, served)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _stop_pair(root, pair)


def test_wavpack_musepack_aac_dsd_and_module_songs_of_a_mount_as_in_mpd(webdav, format_music, mutagen_other_music):
    """The songs of the plugins that scan a mounted song through its stream with their C library's own reader
    (libwavpack's stream reader, libmpcdec's mpc_reader, faad's buffer) or mpd's stream parser (dsf, dsdiff), or read
    the whole stream into memory (openmpt, modplug), mounted from the WebDAV server, as in mpd (see
    test_storage.format_songs_mounted_as_in_mpd): over HTTP neither reads an APE tag, nor counts ADTS frames."""
    folder = Path(webdav_share()) / "formats"
    root, pair = _mount_pair()
    try:
        copy_format_songs(folder, format_music, mutagen_other_music)
        format_songs_mounted_as_in_mpd(pair, f"{webdav}/dav/formats")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _stop_pair(root, pair)


def test_a_long_wavpack_scan_reads_little_of_the_song_and_no_ape_tag_over_http(webdav):
    """A long WavPack song of a mount is scanned through libwavpack's stream reader, which reads the first block
    (and the last, for the sample count), not the whole file, in Fermata as in mpd: each server is sent under a
    quarter of it (tools/webdavserver.py counts the bytes the socket took: what the curl input buffered ahead of
    the scan counts too, which is why a small song does not show it). Beside it a Musepack song with an APE tag:
    mpd reads no APE tag over HTTP (its seeking is not cheap), so neither lists its artist; the databases are the
    same."""
    folder = Path(webdav_share()) / "longformats"
    folder.mkdir(exist_ok=True)
    wave = folder / "noise.wav"
    subprocess.run(["sox", "-n", "-r", "96000", "-c", "2", "-b", "24", str(wave), "synth", "180", "whitenoise",
                    "vol", "0.5"], check=True)
    subprocess.run(["wavpack", "-q", "-y", str(wave), "-o", str(folder / "long.wv")], check=True)
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(wave), "synth", "60", "whitenoise",
                    "vol", "0.5"], check=True)
    subprocess.run(["mpcenc", "--silent", "--overwrite", "--artist", "Dav Artist", str(wave),
                    str(folder / "tagged.mpc")], check=True)
    wave.unlink()
    size = (folder / "long.wv").stat().st_size
    assert size > 30_000_000, size
    root, pair = _mount_pair()
    try:
        served = _served_for_mounts(webdav, pair, "longformats", "long.wv")
        replies = _same(pair, ["listallinfo d"])
        assert b"Time: 180\n" in replies[0][1] and b"Time: 60\n" in replies[0][1] and b"Artist" not in replies[0][1]
        print(f"bytes of a {size}-byte WavPack song sent for its scan: {served}")
        assert all(0 < count < size // 4 for count in served.values()), (size, served)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _stop_pair(root, pair)


def test_listfiles_of_a_webdav_uri_without_a_music_directory_as_in_mpd(webdav):
    """`listfiles URL` makes the storage for that one listing: it needs no music directory, no database and no
    `cache_directory` (mpd's `handle_listfiles_storage`)."""
    answers = {}
    for kind in ("ref", "sut"):
        server = conftest.Server(f"{kind}-nolibrary",
                                 mpdtest.ref_binary() if kind == "ref" else mpdtest.sut_binary(),
                                 mpdtest.REPO_ROOT, conftest._workdir(kind))
        server.overrides.update({"music_directory": None, "db_file": None})
        conftest._start([server])
        try:
            answers[kind] = [server.query(command) for command in (
                f"listfiles {webdav}/dav/sub/", f"listfiles {webdav}/dav", f"listfiles {webdav}/missing",
                "listfiles", "lsinfo", "listfiles smb://127.0.0.1:9/share")]
        finally:
            conftest._stop(server)
    assert answers["sut"] == answers["ref"], answers
