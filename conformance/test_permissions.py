"""Permissions, differentially: `password`, `default_permissions`, `local_permissions` and
`host_permissions` give each client the same rights, and the same ACKs, as in mpd 0.23.12.

Every permission level (no password, read, add, player, control, admin) is tried against one command
of each group.  Commands the system under test does not implement yet are skipped by the harness
(the cases are split per group so the others still run)."""

import pytest

import mpdtest

PASSWORDS = [
    "ro@read",
    "adder@read,add",
    "player@read,player",
    "ctl@read,add,control",          # control implies player (compatibility with 0.22)
    "root@read,add,player,control,admin",
]

# One harmless command per permission group; each leaves no state behind.
GROUPS = {
    "read": "status\nlsinfo\n",
    "add": "add does-not-exist.mp3\n",
    "player": "stop\nrepeat 0\n",
    "control": "sendmessage nobody hello\n",
    "admin": "enableoutput 99\n",
}

LEVELS = [None, "ro", "adder", "player", "ctl", "root", "wrong"]


@pytest.fixture(scope="module")
def empty_music(tmp_path_factory):
    return tmp_path_factory.mktemp("perm-music")


@pytest.mark.parametrize("group", list(GROUPS))
@pytest.mark.parametrize("level", LEVELS, ids=lambda x: x or "none")
def test_password_levels(server_pair, empty_music, level, group):
    pair = server_pair(empty_music, password=PASSWORDS)
    spec = (f"password {level}\n" if level else "") + GROUPS[group]
    mpdtest.compare_on_pair(pair, spec, f"{level}/{group}")


@pytest.mark.parametrize("group", list(GROUPS))
def test_default_permissions(server_pair, empty_music, group):
    """default_permissions applies to clients without a password; the password replaces it."""
    pair = server_pair(empty_music, password=PASSWORDS, default_permissions="read,player")
    mpdtest.compare_on_pair(pair, GROUPS[group] + "password ro\n" + GROUPS[group], f"default/{group}")


@pytest.mark.parametrize("group", list(GROUPS))
def test_host_permissions(server_pair, empty_music, group):
    """host_permissions for 127.0.0.1 grants its list to clients from there, and clears the default."""
    pair = server_pair(empty_music, password=["root@read,add,player,control,admin"],
                       host_permissions=["127.0.0.1 read,add", "192.0.2.1 admin"])
    mpdtest.compare_on_pair(pair, GROUPS[group] + "password root\n" + GROUPS[group], f"host/{group}")


@pytest.mark.parametrize("group", list(GROUPS))
def test_host_permissions_override_default_permissions(server_pair, empty_music, group):
    """As in mpd, any host_permissions line clears default_permissions for other hosts: here the
    client's host is not listed, so it has nothing."""
    pair = server_pair(empty_music, default_permissions="read,add,player,control,admin",
                       host_permissions=["192.0.2.1 read"])
    mpdtest.compare_on_pair(pair, GROUPS[group], f"host-other/{group}")
