"""SMB shares, as Debian's mpd reaches them through libsmbclient: the test starts its own `smbd` on 127.0.0.1 only
(`interfaces = 127.0.0.1`, `bind interfaces only = yes`, a free high port, no nmbd, NetBIOS disabled) serving a
read-only guest share of a few MP3s made with sox and lame. Songs of the share are added by URL and played
(mpd's smbclient input plugin) the same in Fermata as in mpd, errors included.

`mount` of the share into the database (a `database` block with a `cache_directory`): the share is scanned into a
database of its own under the mount point, listed, searched and played from there, kept over a restart by the state
file, and dropped by `unmount`, the same in both servers. Without a `cache_directory` `mount` is refused as in mpd
(test_reflection.py)."""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

import audiofiles
import conftest
import mpdtest
from test_real_files import mutagen_other_music  # noqa: F401  (the fixture: mutagen's test data)

HOST = mpdtest.HOST

SMB_CONFIG = """[global]
  interfaces = 127.0.0.1
  bind interfaces only = yes
  smb ports = {port}
  disable netbios = yes
  server role = standalone server
  map to guest = Bad User
  private dir = {state}
  lock directory = {state}
  state directory = {state}
  cache directory = {state}
  pid directory = {state}
  ncalrpc dir = {state}/ncalrpc
  log file = {state}/log
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
[share]
  path = {share}
  guest ok = yes
  read only = yes
"""


def _mp3(path, seconds: int, title: str) -> None:
    wav = subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", "-t", "wav", "-", "synth", str(seconds),
                          "sine", "440"], check=True, capture_output=True).stdout
    subprocess.run(["lame", "--quiet", "--tt", title, "--ta", "Share Artist", "--tl", "Share Album", "-", str(path)],
                   input=wav, check=True)


#: The directory the fixture's smbd serves as its share (for the cases that change the share).
SHARE: dict[str, object] = {}


@pytest.fixture(scope="module")
def smbd_process():
    """``smb://127.0.0.1:PORT/share``, served by an smbd of the test's own, and that smbd (the leader of its own
    process group, which the processes serving connections join)."""
    binary = shutil.which("smbd") or "/usr/sbin/smbd"
    if not os.path.exists(binary):
        pytest.fail("smbd is not installed (scripts/install-deps.sh test installs samba)")
    root = conftest._workdir("smbd")
    os.chmod(root, 0o755)
    share, state = root / "share", root / "state"
    (share / "sub").mkdir(parents=True)
    state.mkdir()
    _mp3(share / "long.mp3", 30, "Long")
    _mp3(share / "sub" / "short.mp3", 1, "Short")
    port = mpdtest.free_port()
    config = root / "smb.conf"
    config.write_text(SMB_CONFIG.format(port=port, state=state, share=share))
    # In the foreground smbd exits when its standard input ends (then signals its process group: a session of its
    # own), so it stops with pytest however pytest ends.
    proc = subprocess.Popen([binary, "--foreground", "--no-process-group", f"--configfile={config}"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)

    def up():
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return True
        except OSError:
            return False

    if not mpdtest.wait_until(up, timeout=20):
        proc.kill()
        log = state / "log"
        pytest.fail(f"smbd did not start: {log.read_text(errors='replace')[-2000:] if log.exists() else ''}")
    SHARE["path"] = share
    yield f"smb://{HOST}:{port}/share", proc
    os.killpg(proc.pid, signal.SIGCONT)
    proc.terminate()
    proc.wait(timeout=10)
    proc.stdin.close()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def smbd(smbd_process):
    """``smb://127.0.0.1:PORT/share``."""
    return smbd_process[0]


def _compare(server_factory, spec, case_id: str, **options):
    ref = server_factory("ref")
    sut = server_factory("sut")
    mpdtest.compare(mpdtest.make_case(spec, **options), ref, sut, case_id)


def test_a_song_of_the_share_plays_as_in_mpd(server_factory, smbd):
    """`add` of an smb:// URL, then `play`: both servers read the song's tags from the share (`currentsong`)
    and play it."""
    adds = f"add {smbd}/long.mp3\nadd {smbd}/sub/short.mp3\n"
    answers = {kind: mpdtest.settled_play(server_factory(kind), f"{adds}playlistinfo\nplay 0\n", tagged=True)
               for kind in ("ref", "sut")}
    assert answers["sut"] == answers["ref"]


def test_a_missing_file_or_share_fails_as_in_mpd(server_factory, smbd):
    """A file the share does not have, and a share the server does not have: mpd's decoder error in
    `status`, naming libsmbclient's call and its errno."""
    base = smbd.rsplit("/", 1)[0]
    answers: dict[str, list[bytes]] = {}
    for kind in ("ref", "sut"):
        server = server_factory(kind)
        uris = (f"{smbd}/missing.mp3", f"{base}/noshare/x.mp3")
        answers[kind] = [mpdtest.settled_failure(server, uri) for uri in uris]
    assert answers["sut"] == answers["ref"]


def test_readcomments_and_readpicture_of_the_shares_songs_as_in_mpd(server_factory, smbd):
    """`readcomments` and `readpicture` of smb:// URLs: the song scanned through the share (lame's ID3 tags carry no
    pairs or picture), a missing file and a missing share in libsmbclient's words (ACK 52). Under 1 s."""
    base = smbd.rsplit("/", 1)[0]
    uris = (f"{smbd}/sub/short.mp3", f"{smbd}/missing.mp3", f"{base}/noshare/x.mp3")
    commands = [command for uri in uris for command in (f"readcomments {uri}", f"readpicture {uri} 0")]
    answers = {}
    for kind in ("ref", "sut"):
        server = server_factory(kind)
        with server.connect() as c:
            answers[kind] = [c.command(command) for command in commands]
    assert answers["sut"] == answers["ref"]
    assert answers["sut"][0] == b"OK\n"


def _local_library(root):
    """A music directory of one song, ``A/local.mp3``, tagged like the share's."""
    music = root / "music"
    (music / "A").mkdir(parents=True, exist_ok=True)
    if not (music / "A" / "local.mp3").exists():
        _mp3(music / "A" / "local.mp3", 1, "Local")
    return music


def _mount_pair(state_file: bool = False, kinds: tuple[str, ...] = ("ref", "sut")):
    """mpd and Fermata (or those of `kinds`) on a one-song music directory, each with a `database` block that has a
    `cache_directory` (no `db_file`), started; the caller stops them with `_stop_pair`."""
    root = conftest._workdir("mount")
    music = _local_library(root)
    pair = []
    for kind in kinds:
        binary = mpdtest.ref_binary() if kind == "ref" else mpdtest.sut_binary()
        if kind == "sut" and not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        work = conftest._workdir(f"mount-{kind}")
        overrides = {"db_file": None}
        if state_file:
            overrides["state_file"] = str(work / "state")
        server = mpdtest.Server(f"{kind}-mount", binary, music, work, overrides)
        server.extra_config = mpdtest.simple_database_block(work)
        pair.append(server)
    conftest._start(pair)
    return root, pair


def _stop_pair(root, pair) -> None:
    for server in pair:
        conftest._stop(server)
        shutil.rmtree(server.workdir, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)


def _settle(server) -> None:
    """Waits until no update job runs."""
    assert mpdtest.wait_until(lambda: b"updating_db:" not in server.query("status"), timeout=30), server.label


def _transcript(server, commands, skip: tuple[bytes, ...] = ()) -> list[tuple[str, bytes]]:
    out = []
    with server.connect() as client:
        for command in commands:
            reply = client.command(command)
            # Volatile: the time of the last update and the uptime.
            reply = b"".join(line for line in reply.splitlines(keepends=True)
                             if not line.startswith((b"db_update:", b"uptime:", b"playtime:", b"elapsed:",
                                                     b"time:", b"bitrate:") + skip))
            out.append((command, reply))
    return out


def _same(pair, commands, skip: tuple[bytes, ...] = ()) -> list[tuple[str, bytes]]:
    ref, sut = (_transcript(server, commands, skip) for server in pair)
    for (command, expected), (_, actual) in zip(ref, sut):
        assert actual == expected, f"{command}:\nmpd:\n{expected.decode()}\nfermata:\n{actual.decode()}"
    return ref


def _mount_and_settle(pair, smbd, point: str = "m") -> None:
    _same(pair, [f"mount {point} {smbd}"])
    for server in pair:
        _settle(server)


def test_mount_unmount_and_their_errors_as_in_mpd(smbd):
    """mpd's errors in its order (storage URIs it has no plugin for, a mount point the music directory has, a busy
    mount point, a storage mounted twice), `listmounts`, the idle events of `mount` and `unmount`."""
    root, pair = _mount_pair()
    try:
        base = smbd.rsplit("/", 1)[0]
        _same(pair, ["listmounts", f"mount x file://{root}/music", f"mount x {root}/music", "mount A " + smbd,
                     "unmount m", "unmount", 'unmount ""', "listmounts"])
        idlers = [server.connect() for server in pair]
        for idler in idlers:
            idler.send("idle database mount\n")
        _mount_and_settle(pair, smbd)
        for idler in idlers:
            idler.send("noidle\n")
        events = [set(idler.read_reply().splitlines()) for idler in idlers]
        assert events[0] == events[1] == {b"changed: database", b"changed: mount", b"OK"}, events
        _same(pair, [f"mount m {smbd}", f"mount n {smbd}", f"mount n/x {base}/x", "listmounts",
                     "lsinfo"])
        for idler in idlers:
            idler.send("idle database mount\n")
        _same(pair, ["unmount m/sub", "unmount m", "unmount m", "listmounts", "lsinfo", "listall"])
        events = [set(idler.read_reply().splitlines()) for idler in idlers]
        assert events[0] == events[1] == {b"changed: database", b"changed: mount", b"OK"}, events
        for idler in idlers:
            idler.close()
    finally:
        _stop_pair(root, pair)


def test_a_mounted_share_is_listed_and_searched_as_in_mpd(smbd):
    """After the update `mount` starts, the share's songs are under the mount point for lsinfo, listall(info),
    find, search, list and count, the same in both servers (file and base filters see a mounted song's URI relative
    to the share, and a base equal to the mount point takes all its songs, as in mpd); `listfiles` lists the share
    itself."""
    root, pair = _mount_pair()
    try:
        _mount_and_settle(pair, smbd)
        _same(pair, ["lsinfo", "listall", "listallinfo", "lsinfo m", "lsinfo m/sub", "lsinfo m/long.mp3", "listall m", "listall m/sub",
                     "listallinfo m", "listallinfo m/sub", 'find album "Share Album"', "search title Sh", "search file long",
                     "find file long.mp3", "find file m/long.mp3", "find base m", "find base m/sub", "search base m",
                     "find \"(file == 'sub/short.mp3')\"", "search album Share sort -title",
                     "find title Long window 0:1", "list file", "searchadd title Long", "playlistinfo", "list title", "list album group artist", 'count artist "Share Artist"',
                     "count group album", "lsinfo m/nothing", "stats", "listfiles", "listfiles m", "listfiles m/sub",
                     "listfiles m/nothing"])
    finally:
        _stop_pair(root, pair)


def test_mounts_are_kept_over_a_restart_and_a_mounted_song_plays(smbd):
    """A song of the mount point plays (from the share); the state file keeps the mount in mpd's
    `mount_begin`/`uri:`/`mounted_url:`/`mount_end` block, which a restart mounts again before the queue is
    restored; an unmounted storage's songs stay in the queue, also after an update."""
    root, pair = _mount_pair(state_file=True)
    try:
        _mount_and_settle(pair, smbd)
        _same(pair, ["add m/long.mp3", "add m/sub/short.mp3", "playlistinfo"])
        # The decoder's tags of a song played from the share replace the queued song's and raise the queue's
        # version, as for any remote song.
        played = [mpdtest.settled_play(server, "play 0\n", retagged_from=mpdtest.queue_version(server))
                  for server in pair]
        assert played[1] == played[0]
        _same(pair, ["playlistinfo", "stop"])
        texts = []
        for server in pair:
            conftest._stop(server)
            texts.append((server.workdir / "state").read_text())
        blocks = [text[text.index("mount_begin"):text.index("mount_end")] for text in texts]
        assert blocks[0] == blocks[1] == f"mount_begin\nuri: m\nmounted_url: {smbd}\n", blocks
        conftest._start(pair)
        _same(
            pair,
            ["listmounts", "lsinfo", "lsinfo m", "listallinfo m", "playlistinfo", "unmount m", "playlistinfo", "lsinfo"])
        # An update of the music directory (which adds a song) leaves the songs of an unmounted storage in the
        # queue.
        _mp3(root / "music" / "added.mp3", 1, "Added")
        _same(pair, ["update"])
        for server in pair:
            _settle(server)
        _same(pair, ["playlistinfo", "lsinfo"])
    finally:
        _stop_pair(root, pair)


def test_an_update_below_a_mount_point_rescans_only_that(smbd):
    """`update m/sub` reads the share's `sub` again (a song added there appears) and nothing else (one added at
    the share's top does not, until `update m`)."""
    share = SHARE["path"]
    root, pair = _mount_pair()
    added = []
    try:
        _mount_and_settle(pair, smbd)
        for path, title in ((share / "sub" / "new.mp3", "New"), (share / "top.mp3", "Top")):
            _mp3(path, 1, title)
            added.append(path)
        _same(pair, ["update m/sub"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo m", "lsinfo m/sub", "update m"])
        for server in pair:
            _settle(server)
        _same(pair, ["lsinfo m", "count artist \"Share Artist\""])
    finally:
        for path in added:
            path.unlink(missing_ok=True)
        _stop_pair(root, pair)


def test_mpdignore_files_of_the_share_are_honoured_as_in_mpd(smbd):
    """A `.mpdignore` of the share (at its top, and in `sub`) leaves out what it matches there and below at the next
    `update` of the mount point, and an update of an excluded path adds nothing; removed, the songs come back."""
    share = SHARE["path"]
    root, pair = _mount_pair()
    added = []
    try:
        _mount_and_settle(pair, smbd)
        _mp3(share / "sub" / "other.mp3", 1, "Other")
        added.append(share / "sub" / "other.mp3")
        (share / ".mpdignore").write_text("# the long one\nlong.*\n")
        added.append(share / ".mpdignore")
        (share / "sub" / ".mpdignore").write_text("short.mp3\n")
        added.append(share / "sub" / ".mpdignore")
        _same(pair, ["update m"])
        for server in pair:
            _settle(server)
        _same(pair, ["listall m", "update m/sub/short.mp3"])
        for server in pair:
            _settle(server)
        _same(pair, ["listall m", "count artist \"Share Artist\""])
        for path in added[1:]:
            path.unlink()
        _same(pair, ["update m"])
        for server in pair:
            _settle(server)
        _same(pair, ["listall m"])
    finally:
        for path in added:
            path.unlink(missing_ok=True)
        _stop_pair(root, pair)


def _timed(server, command: str) -> float:
    start = time.monotonic()
    server.query(command)
    return time.monotonic() - start


@pytest.mark.serial
def test_a_share_gone_silent_stalls_nobody(server_factory, smbd_process):
    """Fermata only (mpd waits for libsmbclient's timeout here): a song of the share plays, then smbd stops
    answering (SIGSTOP of its processes, connections left open). `seekcur` (which opens the song again),
    `next` and `stop` return at once while the player's input waits on the silent share, and another client's
    `status` answers meanwhile; then smbd goes on. About 2 s."""
    url, proc = smbd_process
    sut = server_factory("sut")
    for command in ("clear", f"add {url}/long.mp3", f"add {url}/long.mp3", "play 0"):
        sut.query(command)
    assert mpdtest.wait_until(
        lambda: float(mpdtest.parse_pairs(sut.query("status")).get("elapsed", "0")) > 0.3, mpdtest.scaled(10))
    bound = mpdtest.scaled(2)
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        with sut.connect() as other:
            assert _timed(sut, "seekcur 5") < bound
            time.sleep(0.3)
            start = time.monotonic()
            assert b"state: play" in other.command("status")
            assert time.monotonic() - start < bound
            assert _timed(sut, "next") < bound
            time.sleep(0.3)
            assert _timed(sut, "stop") < bound
            start = time.monotonic()
            assert b"state: stop" in other.command("status")
            assert time.monotonic() - start < bound
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
    # The share answers again, and the server plays from it.
    sut.query("play 0")
    assert mpdtest.wait_until(
        lambda: float(mpdtest.parse_pairs(sut.query("status")).get("elapsed", "0")) > 0.3, mpdtest.scaled(10))
    sut.query("stop")


def _mount_database_path(server, uri: str):
    """The file mpd (and Fermata) keep the database of the storage at `uri` in, in `server`'s cache directory."""
    name = "".join(chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "-_%") else "_"
                   for b in uri.encode())
    return server.workdir / "cache" / name


@pytest.mark.serial
def test_the_loop_answers_while_a_mount_reads_and_grafts(smbd):
    """Fermata only (mpd mounts on its main thread): `mount` reads the storage's database and rebuilds the snapshot
    off the loop. The database file is a FIFO that nobody writes yet, so the mount waits on it; meanwhile another
    client's `ping` and `status` answer at once, and the mounting client's reply waits. Once the FIFO ends (no
    database: an update is queued, as for a new mount), `mount` answers OK, clients waiting in `idle` hear
    `database` and `mount` together, and the share's songs are under the mount point. About 2 s."""
    root, pair = _mount_pair(kinds=("sut",))
    sut = pair[0]
    fifo = _mount_database_path(sut, smbd)
    os.mkfifo(fifo)
    try:
        bound = mpdtest.scaled(2)
        with sut.connect() as idler, sut.connect() as mounter, sut.connect() as other:
            idler.send("idle database mount\n")
            mounter.send(f"mount m {smbd}\n")
            # The mounting client waits for its reply; the others do not wait.
            time.sleep(0.3)
            for command in ("ping", "status", "listmounts"):
                start = time.monotonic()
                reply = other.command(command)
                assert reply.endswith(b"OK\n") and time.monotonic() - start < bound, (command, reply)
            # Not mounted yet: the snapshot changes only when the mount is done.
            assert b"mount: m" not in other.command("listmounts")
            assert select.select([mounter.sock], [], [], 0.2)[0] == []
            mounter.sock.settimeout(mpdtest.scaled(10))
            # Opened for reading and writing, it never blocks; closed, the reader sees the end of an empty file.
            os.close(os.open(fifo, os.O_RDWR))
            assert mounter.read_reply() == b"OK\n"
            assert set(idler.read_reply().splitlines()) == {b"changed: database", b"changed: mount", b"OK"}
        _settle(sut)
        assert b"file: m/long.mp3" in sut.query("listall m")
    finally:
        if fifo.exists() and not fifo.is_file():
            os.close(os.open(fifo, os.O_RDWR))
        _stop_pair(root, pair)


def _elapsed(server) -> float:
    return float(mpdtest.parse_pairs(server.query("status")).get("elapsed", "-1"))


def _smb_helpers(server) -> int:
    """The server's SMB helper threads (named `smbclient`)."""
    count = 0
    for task in Path(f"/proc/{server.proc.pid}/task").iterdir():
        try:
            count += (task / "comm").read_text().strip() == "smbclient"
        except OSError:
            pass  # a thread that ended meanwhile
    return count


def _smb_connections(server, port: int) -> set[str]:
    """The local addresses of the server's established TCP connections to smbd."""
    listed = subprocess.run(["ss", "-tnpH", "state", "established", f"( dport = :{port} )"],
                            capture_output=True, text=True, check=True).stdout
    return {line.split()[2] for line in listed.splitlines() if f"pid={server.proc.pid}," in line}


@pytest.mark.serial
def test_seeks_take_the_open_file_over(server_factory, smbd_process):
    """Fermata only (mpd seeks within its stream): the player opens a remote song again for every seek, and the
    new stream takes over the helper thread and the open file of the last, so one connection to smbd serves the
    tags at `add`, the play and every seek. With the share silent, ten seeks in a row leave one helper thread
    (not one more stuck helper per seek), and once smbd goes on the song plays from the last seek. About 4 s."""
    url, proc = smbd_process
    port = int(url.split(":")[2].split("/")[0])
    sut = server_factory("sut")
    for command in ("clear", f"add {url}/long.mp3", "play 0"):
        sut.query(command)
    assert mpdtest.wait_until(lambda: _elapsed(sut) > 0.3, mpdtest.scaled(10))
    seen = [_smb_connections(sut, port)]
    for position in (10, 3, 20):
        sut.query(f"seekcur {position}")
        assert mpdtest.wait_until(lambda: position <= _elapsed(sut) < position + 5, mpdtest.scaled(10)), \
            (position, sut.query("status"))
        seen.append(_smb_connections(sut, port))
    assert len(seen[0]) == 1 and seen == [seen[0]] * 4, seen
    assert _smb_helpers(sut) == 1
    os.killpg(proc.pid, signal.SIGSTOP)
    try:
        for position in range(10):
            assert _timed(sut, f"seekcur {position}") < mpdtest.scaled(2)
            time.sleep(0.05)
        time.sleep(0.3)
        assert _smb_helpers(sut) == 1
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
    assert mpdtest.wait_until(lambda: 9.3 < _elapsed(sut) < 15, mpdtest.scaled(10)), sut.query("status")
    assert _smb_helpers(sut) == 1 and _smb_connections(sut, port) == seen[0]
    sut.query("stop")


def test_replay_gain_of_a_streams_ape_tag_over_smb_not_http_as_mpd(server_factory, smbd, tmp_path):
    """With ReplayGain on, mpd's decoder thread reads the APE tag at the end of a remote stream before the plugin
    decodes it (`MaybeLoadReplayGain`), but only where seeking is cheap (`tag_ape_scan` wants `CheapSeeking`): over
    SMB, not over HTTP (curl; `http://` seeks are new requests). A quiet tone with no gain of its own (`lame
    --noreplaygain`) and an APE `REPLAYGAIN_TRACK_GAIN` of -6 dB plays 6 dB softer from the share than from the
    project's HTTP test server in `replay_gain_mode track`; Fermata's recordings must be mpd's, every sample."""
    import array
    import math
    audiofiles.require_tools("sox", "lame")
    apev2 = pytest.importorskip("mutagen.apev2")
    wav = audiofiles.tone_wav(tmp_path / "quiet.wav", 2.0, gain=-20)
    song = SHARE["path"] / "ape-gain.mp3"
    subprocess.run(["lame", "--quiet", "-b", "128", "--noreplaygain", str(wav), str(song)], check=True, timeout=60)
    tag = apev2.APEv2()
    tag["REPLAYGAIN_TRACK_GAIN"] = "-6.00 dB"
    tag.save(song)
    root = tmp_path / "http"
    root.mkdir()
    shutil.copy(song, root / "ape-gain.mp3")
    with mpdtest.stream_server(root, tmp_path / "port") as base:
        urls = {"smb": f"{smbd}/ape-gain.mp3", "http": f"{base}/file/ape-gain.mp3"}
        (tmp_path / "empty").mkdir()
        got: dict[str, dict[str, array.array]] = {}
        for kind in ("ref", "sut"):
            server = audiofiles.file_recorder(server_factory, kind, tmp_path / "empty", tmp_path / kind,
                                              replaygain="track")
            got[kind] = {}
            for scheme, url in urls.items():
                name, data = audiofiles.record_queue(server, tmp_path / kind, [f'add "{url}"', "play"])
                assert name == "rec-S24_LE-44100-2.raw", (kind, scheme, name)
                got[kind][scheme] = array.array("i", data)

    def rms(samples) -> float:
        return math.sqrt(sum(float(v) * v for v in samples) / max(1, len(samples)))

    # mpd's own answer, so the test proves its premise: the share's song 6 dB softer than the HTTP one.
    window = slice(44100, 2 * 44100)
    ratio = rms(got["ref"]["smb"][window]) / rms(got["ref"]["http"][window])
    assert abs(20 * math.log10(ratio) + 6) < 0.2, ratio
    for scheme in urls:
        sut, ref = got["sut"][scheme], got["ref"][scheme]
        assert len(sut) > 3 * 44100, (scheme, len(sut))
        assert sut == ref[:len(sut)], (scheme, audiofiles.first_difference(sut, ref))
        assert not any(ref[len(sut):]), f"{scheme}: mpd's recording goes on with other sound"



#: The format library's directories (tools/make-format-fixtures.py) of the plugins that scan a mounted song through
#: their C library's stream reader or mpd's own stream parser, broken files included: wavpack, mpcdec, faad, dsf,
#: dsdiff, openmpt and modplug; gme's chiptunes beside the modules (gme scans only files: left out of a mount).
FORMAT_DIRECTORIES = ("pcmfiles/wavpack", "pcmfiles/apetags", "pcmfiles/broken", "mpcfaad", "dsd", "trackers",
                      "ogg/vorbis", "ogg/opus")
#: The suffixes of those plugins among mutagen's test data (SV4 to SV8 Musepack, WavPack without a length, ADIF).
FORMAT_SUFFIXES = (".wv", ".mpc", ".aac", ".dsf", ".dff", ".mod", ".xm", ".it", ".s3m")


def copy_format_songs(folder: Path, format_music: Path, mutagen_music: Path) -> None:
    """FORMAT_DIRECTORIES of the format library, and mutagen's files with FORMAT_SUFFIXES in `mutagen/`, into
    `folder`."""
    for directory in FORMAT_DIRECTORIES:
        shutil.copytree(format_music / directory, folder / directory)
    (folder / "mutagen").mkdir()
    for path in sorted(mutagen_music.iterdir()):
        if path.suffix.lower() in FORMAT_SUFFIXES:
            shutil.copy(path, folder / "mutagen" / path.name)


def format_songs_mounted_as_in_mpd(pair, uri: str) -> bytes:
    """Mounts `uri` (a copy_format_songs folder) at `d` in both servers: the same songs, tags, durations and formats
    as mpd lists, byte for byte, and readcomments and readpicture of its DSD and APE-tagged songs read through the
    storage; the listing."""
    _same(pair, [f"mount d {uri}"])
    for server in pair:
        _settle(server)
    replies = _same(pair, ["lsinfo d", "listallinfo d", "lsinfo d/mutagen", "lsinfo d/trackers"])
    listing = replies[1][1]
    for name in (b"s16-stereo-44100.wv", b"stereo-44k.mpc", b"stereo-44k.aac", b"tone-dsd64.dsf", b"tone-dsd64.dff",
                 b"tune.mod", b"tune.dfm", b"click.mpc"):
        assert b"/" + name + b"\n" in listing, name
    assert b"square.nsf" not in listing
    songs = [line.split(b": ", 1)[1].decode() for line in listing.splitlines() if line.startswith(b"file: ")]
    read = [song for song in songs if song.endswith((".dsf", ".dff")) or "/apetags/" in song]
    assert len(read) > 10
    _same(pair, [f'readcomments "{song}"' for song in read] + [f'readpicture "{song}" 0' for song in read])
    return listing


def test_wavpack_musepack_aac_dsd_ogg_and_module_songs_of_a_mounted_share_as_in_mpd(smbd, format_music,
                                                                                   mutagen_other_music):
    """The songs of the plugins that scan a mounted song through its stream, as test_webdav's case, from the SMB
    share: an smb:// stream seeks cheaply for mpd (only HTTP does not), so the generic scan reads the APE tags at the
    end, faad counts every ADTS frame and the Ogg plugins read the last page, as for a file: the same as in mpd."""
    folder = Path(SHARE["path"]) / "formats"
    root, pair = _mount_pair()
    try:
        copy_format_songs(folder, format_music, mutagen_other_music)
        listing = format_songs_mounted_as_in_mpd(pair, f"{smbd}/formats")
        assert b"Title: APE Title" in listing
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        _stop_pair(root, pair)
