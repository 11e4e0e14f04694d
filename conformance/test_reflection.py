"""`commands` must be truthful; `notcommands` is compared with mpd.

Fermata's `commands` lists only what it implements, so its output is NOT
compared with mpd's.  Instead:
* every command it lists must be known (never `unknown command`);
* every mpd command it does not list must get exactly
  `ACK [5@0] {} unknown command "X"`;
* it may only list commands that exist in mpd 0.23.12, in mpd's (sorted) order.

Probing sends each command with 40 junk arguments: every 0.23 command either
has fewer maximum arguments (so it fails the argument count check without
running) or rejects "x" as its first argument, so nothing is changed on the
server.  `kill` is the exception (it skips the count check) and gets its own
test on a throwaway server.
"""

import pytest

import mpdtest
from mpdtest import differential

JUNK = " x" * 40
#: 0.23.12 commands that mpd only lists when configured for them (sticker_file,
#: neighbor plugins); the session servers have a sticker_file, no neighbor plugin.
CONDITIONAL_MPD_COMMANDS = {"sticker", "listneighbors"}


def probe(server: mpdtest.Server, names: list[str]) -> dict[str, bytes]:
    """Send each command with junk arguments, pipelined; return name -> reply."""
    replies = {}
    normal = [n for n in names if n != "close"]
    with server.connect(timeout=10) as c:
        c.send("".join(f"{n}{JUNK}\n" for n in normal))
        for n in normal:
            replies[n] = c.read_reply().splitlines()[-1]
    if "close" in names:
        with server.connect(timeout=10) as c:
            c.send(f"close{JUNK}\n")
            data = c.file.read()      # EOF expected
            replies["close"] = data.splitlines()[-1] if data else b"(closed)"
    return replies


def unknown(name: str) -> bytes:
    return f'ACK [5@0] {{}} unknown command "{name}"'.encode()


def test_commands_reply_shape(servers):
    servers.require_sut()
    reply = servers.sut_commands_reply
    assert reply.endswith(b"OK\n"), f"`commands` failed on the system under test: {reply!r}"
    lines = reply.decode().splitlines()[:-1]
    assert all(line.startswith("command: ") for line in lines), lines
    names = mpdtest.command_names(reply)
    assert names == sorted(names), "`commands` must be in mpd's (byte-wise sorted) order"
    assert len(names) == len(set(names)), "duplicate names in `commands`"


def test_listed_commands_exist_in_mpd(servers):
    servers.require_sut()
    extra = sorted(servers.sut_commands - servers.mpd_commands - CONDITIONAL_MPD_COMMANDS)
    assert not extra, f"`commands` lists names mpd 0.23.12 does not have: {extra}"


def test_listed_commands_are_known(servers):
    sut = servers.require_sut()
    names = sorted(servers.sut_commands - {"kill"})
    if not names:
        pytest.skip("the system under test lists no commands")
    replies = probe(sut, names)
    bad = {n: r for n, r in replies.items() if r == unknown(n)}
    assert not bad, ("listed in `commands` but answered `unknown command`: "
                     + ", ".join(sorted(bad)))


def test_unlisted_mpd_commands_are_unknown(servers):
    sut = servers.require_sut()
    names = sorted(servers.mpd_commands - servers.sut_commands - {"kill"})
    # And names no mpd has (all there is to check once every mpd command is listed).
    names += ["bogus", "lsinfox", "readcomment", "partitions"]
    replies = probe(sut, names)
    bad = {n: r for n, r in replies.items() if r != unknown(n)}
    assert not bad, ("not listed in `commands`, so it must be `unknown command`, but got:\n"
                     + "\n".join(f"  {n}: {r.decode(errors='replace')}"
                                 for n, r in sorted(bad.items())))


def test_kill(servers, server_factory):
    """`kill` on a throwaway instance: it exits if listed, else `unknown command`."""
    servers.require_sut()
    server = server_factory("sut")
    with server.connect() as c:
        c.send("kill\n")
        if "kill" in servers.sut_commands:
            server.expect_exit = True
            c.sock.settimeout(10)
            rest = c.file.read()
            assert rest == b"", f"`kill` must not reply, got {rest!r}"
            assert mpdtest.wait_until(lambda: not server.alive(), 10), "still running after kill"
            assert server.proc.returncode == 0, f"exit status {server.proc.returncode}"
        else:
            assert c.read_reply() == unknown("kill") + b"\n"
            assert server.alive()


@differential(replies=1)
def test_notcommands():
    return "notcommands\n"


test_plugin_lists = mpdtest.differential_table({
    # Every decoder plugin Debian's mpd enables here, with its suffixes and MIME types, in mpd's order.
    "decoders": "decoders\n",
    "urlhandlers over TCP": mpdtest.deviation(
        "urlhandlers\n", "Fermata's remote input plugins are alsa, curl, ffmpeg, smbclient, nfs and cdio_paranoia: "
        "mpd's mms input plugin adds its schemes"),
}, replies=1)


def test_decoders_and_urlhandlers_say_what_fermata_has(sut, require_commands, server_factory, tmp_path):
    """What `urlhandlers` lists is true: over TCP the schemes of libcurl that mpd's curl plugin lists, sorted,
    and `file://` first for a local (Unix-socket) client, as mpd gives local clients."""
    require_commands("decoders", "urlhandlers")
    if mpdtest.is_mpd(sut.binary):
        pytest.skip("Fermata's own plugin list")
    handlers = sut.query("urlhandlers").splitlines()
    assert handlers[-1] == b"OK" and b"handler: http://" in handlers and b"handler: https://" in handlers
    schemes = [line for line in handlers[:-1]]
    assert schemes == sorted(schemes) and all(line.startswith(b"handler: ") for line in schemes)
    path = tmp_path / "socket"
    local = server_factory("sut", bind_to_address=[mpdtest.HOST, str(path)])
    import socket
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(str(path))
        f = s.makefile("rwb")
        assert f.readline().startswith(b"OK MPD ")
        f.write(b"urlhandlers\n")
        f.flush()
        assert f.readline() == b"handler: file://\n"
        assert [f.readline().rstrip(b"\n") for _ in handlers] == handlers
    assert local.alive()


#: Storage and neighbor commands as mpd 0.23.12 answers them with the music directory as its only storage and no
#: neighbor plugin, over TCP (the session servers' `db_file` gives mpd no `cache_directory`).
STORAGE = ("listmounts\nlistneighbors\nmount foo file:///tmp\nmount foo FILE:///tmp\nmount \"\" smb://x/y\n"
           "mount a/b smb://x/y\nmount / smb://x/y\nmount foo bogus\nmount foo /tmp\nmount foo ftp://x/\n"
           "unmount foo\nunmount \"\"\nunmount a/b\nunmount /\nmount\nmount x\nunmount\nlistmounts x\n"
           "listneighbors x\nconfig x\n")

test_config_and_storage = mpdtest.differential_table({
    "config over TCP": "config\n",
    "storage and neighbors without plugins": STORAGE,
    # mpd's smbclient, nfs and curl (WebDAV) storage plugins take these URIs (prefixes in any case) without
    # contacting the server; its simple database then refuses for want of a cache_directory. No traffic leaves
    # either server.
    "mount with a storage plugin, without cache_directory": (
        "mount foo smb://127.0.0.1:1/share\nmount foo SMB://127.0.0.1:1/share\nmount foo smb://\n"
        "mount foo nfs://127.0.0.1/x\nmount foo NFS://127.0.0.1/x\nmount foo nfs://\nmount foo nfs://127.0.0.1\n"
        "mount foo http://127.0.0.1:9/\nmount foo HTTPS://127.0.0.1:9/dav\nmount foo davs://127.0.0.1/x\n"
        "mount foo smb:/127.0.0.1/x\nmount \"\" smb://127.0.0.1:1/share\nmount a/b nfs://\nlistmounts\n"
        "unmount foo\n"),
    # The storage is mounted (an idle client hears `mount`) before the database refuses; nothing else is raised.
    "an idle client hears the refused mount": [
        ("b", "idle\n"), ("a", "mount foo smb://127.0.0.1:1/share\n"), ("b", "idle\n"),
        ("a", "mount foo nfs://127.0.0.1\nmount foo ftp://127.0.0.1/\nunmount foo\n"), ("b", "noidle\n")],
}, replies="auto")


def test_config_and_storage_for_local_clients(server_factory, music_dir, tmp_path):
    """Over a Unix socket (a local client) `config` gives the music directory and `listmounts` the root's
    storage path, as mpd's; the music directory is configured with a trailing slash, which mpd drops. Also the
    music directory itself as a mount URI, over TCP."""
    import socket
    replies = {}
    for kind in ("ref", "sut"):
        path = tmp_path / f"{kind}.socket"
        server = server_factory(kind, music_directory=str(music_dir) + "/", bind_to_address=[mpdtest.HOST, str(path)])
        script = "config\n" + STORAGE + f"mount foo {mpdtest.arg(str(music_dir))}\n"
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(path))
            f = s.makefile("rwb")
            assert f.readline().startswith(b"OK MPD ")
            f.write(script.encode())
            f.flush()
            lines = []
            for _ in range(mpdtest.count_replies(script.encode())):
                while True:
                    line = f.readline()
                    lines.append(line)
                    if not line or line == b"OK\n" or line.startswith(b"ACK "):
                        break
        replies[kind] = lines
        tcp = server.query(f"mount foo {mpdtest.arg(str(music_dir))}\n")
        replies[kind].append(tcp)
    assert replies["ref"] == replies["sut"], replies
    assert f"music_directory: {music_dir}\n".encode() in replies["ref"], replies["ref"]


def test_commands_and_notcommands_as_mpd_at_each_permission_level(server_factory):
    """With partitions, mount and the rest in place, `commands` and `notcommands` are mpd's own lists at every
    permission level (`default_permissions "read"`, then a password per level)."""
    settings = {"default_permissions": "read",
                "password": ["padd@read,add", "pctl@read,add,control", "padm@read,add,control,admin"]}
    ref = server_factory("ref", **settings)
    sut = server_factory("sut", **settings)
    script = "commands\nnotcommands\n" + "".join(f"password {pw}\ncommands\nnotcommands\n"
                                                  for pw in ("padd", "pctl", "padm"))
    mpdtest.compare(mpdtest.make_case(script, replies="auto"), ref, sut, "commands at each permission level")


def test_the_ffmpeg_input_plugin_can_be_disabled(server_factory):
    """`input { plugin "ffmpeg" enabled "no" }`: its schemes (`hls+http://`…) are gone from `urlhandlers`, and
    `add` refuses them as mpd does."""
    block = 'input {\n    plugin "ffmpeg"\n    enabled "no"\n}\n'
    ref = server_factory("ref", extra_config=block)
    sut = server_factory("sut", extra_config=block)
    handlers = sut.query("urlhandlers")
    assert b"handler: http://" in handlers and b"hls+http" not in handlers and b"srtp://" not in handlers, handlers
    assert b"hls+http://" in server_factory("sut").query("urlhandlers")
    mpdtest.compare(mpdtest.make_case('add "hls+http://127.0.0.1:1/x.hls"\n', replies="auto"), ref, sut,
                    "a disabled ffmpeg input plugin")


@pytest.mark.parametrize("plugin,scheme", [("smbclient", "smb://"), ("nfs", "nfs://")])
def test_the_smbclient_and_nfs_input_plugins_can_be_disabled(server_factory, plugin, scheme):
    """`input { plugin "smbclient" enabled "no" }` (or nfs): what `urlhandlers` lists and what `add` and `addid`
    of such a URL answer are mpd's (nfs:// is gone; smb:// is then libcurl's, through the curl plugin)."""
    block = f'input {{\n    plugin "{plugin}"\n    enabled "no"\n}}\n'
    ref = server_factory("ref", extra_config=block)
    sut = server_factory("sut", extra_config=block)
    if plugin == "nfs":
        # (libcurl's own smb:// stays: mpd's curl plugin lists it, and takes such a URL.)
        assert b"handler: nfs://" not in sut.query("urlhandlers")
        assert b"handler: nfs://" in server_factory("sut").query("urlhandlers")
    # mpd's mms input plugin (mms://, mmsu://), which Fermata lacks (see the deviation above), left out.
    mms = (b"handler: mms://", b"handler: mmsu://")
    mpdtest.compare(mpdtest.make_case(f'urlhandlers\nadd "{scheme}127.0.0.1/share/x.mp3"\n'
                                      f'addid "{scheme}127.0.0.1/share/x.mp3"\nplaylistinfo\n', replies="auto",
                                      normalize=lambda line: None if line in mms else line),
                    ref, sut, f"a disabled {plugin} input plugin")
