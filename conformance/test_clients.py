"""Real clients against the system under test only: mpc 0.34 and python-mpd2.

Each test names the commands the client sends; it is skipped until the system
under test lists them all in `commands`.
"""

import shutil
import signal
import subprocess
import threading
import time

import pytest

import mpdtest
from mpdtest import HOST, scaled

MPC = shutil.which("mpc")


def mpc(server, *args, timeout=10, check=True):
    if MPC is None:
        pytest.skip("mpc is not installed")
    r = subprocess.run([MPC, "-h", HOST, "-p", str(server.port), *args], capture_output=True,
                       text=True, timeout=scaled(timeout))
    if check:
        assert r.returncode == 0, f"mpc {' '.join(args)} failed ({r.returncode}): {r.stderr}"
    return r


def test_mpc_version(sut):
    """Needs only the greeting."""
    assert mpc(sut, "version").stdout == "mpd version: 0.23.5\n"


def test_mpc_status(sut, require_commands):
    # mpc sends: command_list_ok_begin / status / currentsong / command_list_end
    require_commands("status", "currentsong")
    out = mpc(sut, "status").stdout
    assert out.startswith("volume:"), out
    assert "repeat: off" in out and "random: off" in out, out


def test_mpc_playlist_uses_tagtypes_in_a_list(sut, require_commands):
    # command_list_begin / tagtypes "clear" / tagtypes enable Artist AlbumArtist Title
    # Name Composer Performer / playlistinfo / command_list_end
    require_commands("tagtypes", "playlistinfo")
    r = mpc(sut, "playlist")
    assert r.stderr == "" and r.stdout == ""


def test_mpc_ls(sut, ref, require_commands):
    # command_list_begin / tagtypes "clear" / command_list_end / lsinfo "Broken"
    require_commands("tagtypes", "lsinfo")
    assert mpc(sut, "ls", "Broken").stdout == mpc(ref, "ls", "Broken").stdout


def test_mpc_channels_and_sendmessage(sut, require_commands):
    require_commands("channels", "sendmessage", "subscribe")
    assert mpc(sut, "channels").stdout == ""
    r = mpc(sut, "sendmessage", "nochan", "hi", check=False)
    assert r.returncode == 1 and "nobody is subscribed to this channel" in r.stderr


def test_mpc_idle_woken_by_message(sut, require_commands):
    require_commands("idle", "subscribe", "sendmessage", "readmessages")
    if MPC is None:
        pytest.skip("mpc is not installed")
    waiter = subprocess.Popen([MPC, "-h", HOST, "-p", str(sut.port), "idle", "subscription"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(scaled(0.3))
        assert waiter.poll() is None, "mpc idle returned before any event"
        with sut.connect() as c:
            assert c.command("subscribe wake") == b"OK\n"
        out, err = waiter.communicate(timeout=scaled(5))
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    assert waiter.returncode == 0 and out == "subscription\n", (out, err)


def test_mpc_idle_killed_leaves_no_trace(sut, require_commands):
    """Kill `mpc idle` while it waits: the server forgets it and keeps serving."""
    require_commands("idle", "ping")
    if MPC is None:
        pytest.skip("mpc is not installed")
    mpdtest.wait_until(lambda: mpdtest.server_side_connections(sut.port) == 0, 2)
    baseline = mpdtest.server_side_connections(sut.port)
    # SIGINT may be inherited as ignored (pytest started in the background).
    waiters = [subprocess.Popen([MPC, "-h", HOST, "-p", str(sut.port), "idle"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
               for _ in range(3)]
    try:
        assert mpdtest.wait_until(
            lambda: mpdtest.server_side_connections(sut.port) >= baseline + 3, 5), \
            "the mpc idle connections never showed up"
        time.sleep(scaled(0.2))
        assert all(w.poll() is None for w in waiters), "mpc idle returned without an event"
        waiters[0].send_signal(signal.SIGINT)
        waiters[1].send_signal(signal.SIGTERM)
        waiters[2].kill()
        for w in waiters:
            w.wait(timeout=scaled(5))
    finally:
        for w in waiters:
            if w.poll() is None:
                w.kill()
                w.wait()
    assert mpdtest.wait_until(
        lambda: mpdtest.server_side_connections(sut.port) <= baseline, 5), \
        "the server kept the killed clients' connections open"
    with sut.connect() as c:
        assert c.command("ping") == b"OK\n"


# --- python-mpd2 -----------------------------------------------------------------

try:
    import mpd as mpd2
except ImportError:      # pragma: no cover
    mpd2 = None


def client(server, timeout=5):
    if mpd2 is None:
        pytest.skip("python3-mpd (python-mpd2) is not installed")
    c = mpd2.MPDClient()
    c.timeout = scaled(timeout)          # for commands
    c.idletimeout = scaled(timeout)      # for idle (None would wait forever)
    c.connect(HOST, server.port)
    return c


def test_python_mpd2_connect_ping_close(sut, require_commands):
    require_commands("ping", "close")
    c = client(sut)
    assert c.mpd_version == "0.23.5"
    assert c.ping() is None
    c.close()
    c.disconnect()


def test_python_mpd2_tagtypes(sut, ref, require_commands):
    require_commands("tagtypes")
    c = client(sut)
    got = c.tagtypes()
    c.disconnect()
    r = client(ref)
    want = r.tagtypes()
    r.disconnect()
    assert got == want


def test_python_mpd2_command_list(sut, require_commands):
    require_commands("ping", "status", "tagtypes")
    c = client(sut)
    c.command_list_ok_begin()
    c.ping()
    c.status()
    c.tagtypes("clear")
    c.tagtypes()
    results = c.command_list_end()
    c.disconnect()
    assert results[0] is None
    assert results[1]["state"] == "stop"
    assert results[3] == []


def test_python_mpd2_command_list_error(sut, require_commands):
    require_commands("ping")
    c = client(sut)
    c.command_list_ok_begin()
    c.ping()
    c.ping("x")
    with pytest.raises(mpd2.CommandError) as err:
        c.command_list_end()
    c.disconnect()
    assert "wrong number of arguments" in str(err.value)


def test_python_mpd2_idle_woken_by_sendmessage(sut, require_commands):
    require_commands("subscribe", "idle", "sendmessage", "readmessages")
    listener = client(sut, timeout=10)
    listener.subscribe("conformance")

    def send_later():
        time.sleep(scaled(0.3))
        sender = client(sut)
        sender.sendmessage("conformance", "hello ✓")
        sender.disconnect()

    t = threading.Thread(target=send_later)
    t.start()
    t0 = time.monotonic()
    changed = listener.idle("message")
    waited = time.monotonic() - t0
    t.join()
    messages = listener.readmessages()
    listener.close()
    listener.disconnect()
    assert changed == ["message"]
    assert waited >= scaled(0.2), "idle returned before the message was sent"
    assert messages == [{"channel": "conformance", "message": "hello ✓"}]


def test_python_mpd2_idle_timeout_abandoned(sut, require_commands):
    """An idle that times out on the client side, then a hang-up (Home Assistant's way)."""
    require_commands("idle", "ping")
    c = client(sut, timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises((TimeoutError, OSError, mpd2.ConnectionError)):
        c.idle()
    assert time.monotonic() - t0 >= 0.25
    c.disconnect()
    other = client(sut)
    assert other.ping() is None
    other.disconnect()
