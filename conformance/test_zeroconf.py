"""Zeroconf: Fermata announces `_mpd._tcp` through a real avahi-daemon (Fermata only).

Every test builds its own little world and tears it down, even on failure:

* a "host" is a private network and mount namespace held open by a `cat` process: its own
  loopback interface, and its own /run (a bind-mounted temporary directory), so the D-Bus
  system bus and avahi-daemon started in it never meet the machine's own (nor their pid files);
* in it, `dbus-daemon` on /run/dbus/system_bus_socket with an allow-all policy, and
  `avahi-daemon` allowing one interface only (`lo`, or the veth end of the two-host test),
  IPv4 only, no wide-area, no reflector;
* Fermata and the `avahi-browse`/`mpc` clients run in the same namespaces through `nsenter`.

No packet leaves the namespaces: their loopback interfaces are not the machine's, and the two
hosts of the last test are joined only by a veth pair created inside them (192.0.2.0/24,
TEST-NET-1). Processes are stopped by pid; every child also gets SIGKILL if pytest dies.
Creating namespaces needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN); where the kernel refuses,
the tests skip with the exact error.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import mpdtest

#: The acceptance bound for "appears" and "is back", in seconds.
WITHIN = mpdtest.scaled(5.0)
#: How long to wait for a daemon to get ready.
STARTUP = mpdtest.scaled(10.0)

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""

#: Kernel refusals that mean "this sandbox does not allow it", not "the test is wrong".
ENVIRONMENTAL = ("Operation not permitted", "Permission denied", "Operation not supported",
                 "Function not implemented")


def avahi_config(interface: str, host_name: str) -> str:
    return f"""[server]
host-name={host_name}
use-ipv4=yes
use-ipv6=no
allow-interfaces={interface}
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
[rlimits]
"""


def fermata_binary() -> Path:
    path = mpdtest.sut_binary()
    if not path.exists():
        pytest.skip(f"system under test not found: {path}")
    if mpdtest.is_mpd(path):
        pytest.skip("Fermata's zeroconf (mpd appends its pid to the name)")
    return path


_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_pytest() -> None:
    """In the child before exec: SIGKILL when pytest goes away, so nothing outlives a crash."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    """SIGTERM, then SIGKILL; by pid, only our own child."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=mpdtest.scaled(timeout))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=mpdtest.scaled(timeout))


def _wait_for(predicate, timeout: float, what: str, log: Path | None = None, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            tail = ""
            if log is not None and log.exists():
                tail = "\n--- " + log.name + " ---\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:])
            pytest.fail(f"timed out after {timeout:.1f} s waiting for {what}{tail}", pytrace=False)
        time.sleep(step)


def unescape(label: str) -> str:
    """avahi-browse's escaping: `\\DDD` (decimal byte) and `\\c`."""
    out = bytearray()
    data = label.encode()
    i = 0
    while i < len(data):
        if data[i] == 0x5C and data[i + 1:i + 4].isdigit() and len(data[i + 1:i + 4]) == 3:
            out.append(int(data[i + 1:i + 4]))
            i += 4
        elif data[i] == 0x5C and i + 1 < len(data):
            out.append(data[i + 1])
            i += 2
        else:
            out.append(data[i])
            i += 1
    return out.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Resolved:
    """One `=` line of `avahi-browse -rp`."""
    interface: str
    name: str
    host: str
    address: str
    port: int


def parse_browse(lines) -> list[Resolved]:
    found = []
    for line in lines:
        fields = line.split(";")
        if len(fields) >= 9 and fields[0] == "=":
            found.append(Resolved(fields[1], unescape(fields[3]), fields[6], fields[7], int(fields[8])))
    return found


class Host:
    """A private network + mount namespace with its own /run, held open by `cat`."""

    def __init__(self, workdir: Path, name: str):
        self.name = name
        self.dir = workdir / name
        self.run_dir = self.dir / "run"
        (self.run_dir / "dbus").mkdir(parents=True)
        (self.run_dir / "avahi-daemon").mkdir()
        self.children: list[subprocess.Popen] = []
        self.avahi: subprocess.Popen | None = None
        self.logs: list[Path] = []
        script = ("mount -n --bind \"$1\" /run && ip link set lo up && ip link set lo multicast on"
                  " && echo ready && exec cat")
        try:
            self.holder = subprocess.Popen(
                ["unshare", "--net", "--mount", "--propagation", "private", "--",
                 "sh", "-c", script, "sh", str(self.run_dir)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                preexec_fn=_die_with_pytest)
        except FileNotFoundError as error:
            pytest.fail(f"cannot run unshare: {error} (util-linux)", pytrace=False)
        line = self.holder.stdout.readline()
        if line.strip() != b"ready":
            self.holder.stdin.close()
            self.holder.wait(timeout=5)
            error = self.holder.stderr.read().decode(errors="replace").strip()
            refuse_or_fail(f"creating host namespace {name} (unshare --net --mount; mount --bind over /run; "
                           f"ip link set lo up)", error)
        self.pid = self.holder.pid

    def _command(self, args: list[str]) -> list[str]:
        return ["nsenter", f"--target={self.pid}", "--net", "--mount", "--", *args]

    def popen(self, args: list[str], log_name: str, **kwargs) -> subprocess.Popen:
        """Starts `args` inside, its output appended to `<dir>/<log_name>.log`."""
        log = self.dir / f"{log_name}.log"
        self.logs.append(log)
        with open(log, "ab") as out:
            proc = subprocess.Popen(self._command(args), stdin=subprocess.DEVNULL, stdout=kwargs.pop("stdout", out),
                                    stderr=out, preexec_fn=_die_with_pytest, **kwargs)
        self.children.append(proc)
        return proc

    def run(self, args: list[str], timeout: float = 10.0) -> subprocess.CompletedProcess:
        return subprocess.run(self._command(args), capture_output=True, text=True,
                              timeout=mpdtest.scaled(timeout), preexec_fn=_die_with_pytest)

    def check(self, args: list[str], what: str) -> str:
        result = self.run(args)
        if result.returncode != 0:
            refuse_or_fail(f"{what} ({' '.join(args)})", (result.stderr or result.stdout).strip())
        return result.stdout

    # -- daemons ------------------------------------------------------------

    def start_bus(self) -> subprocess.Popen:
        config = self.dir / "bus.conf"
        config.write_text(BUS_CONFIG)
        bus = self.popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"], "dbus")
        socket_path = self.run_dir / "dbus" / "system_bus_socket"
        _wait_for(lambda: socket_path.exists() or bus.poll() is not None, STARTUP, "dbus-daemon's socket",
                  self.dir / "dbus.log")
        assert bus.poll() is None, (self.dir / "dbus.log").read_text()
        return bus

    def start_avahi(self, interface: str = "lo") -> subprocess.Popen:
        config = self.dir / "avahi-daemon.conf"
        config.write_text(avahi_config(interface, f"fermata-{self.name}"))
        log = self.dir / "avahi.log"
        start = log.stat().st_size if log.exists() else 0
        avahi = self.popen(["avahi-daemon", "-f", str(config), "--no-drop-root", "--no-chroot", "--no-rlimits",
                            "--no-proc-title"], "avahi")

        def ready():
            if avahi.poll() is not None:
                pytest.fail(f"avahi-daemon exited ({avahi.returncode}):\n{log.read_text(errors='replace')}",
                            pytrace=False)
            return "Server startup complete" in log.read_text(errors="replace")[start:]
        _wait_for(ready, STARTUP, "avahi-daemon's start-up", log)
        self.avahi = avahi
        return avahi

    def start_fermata(self, tag: str, lines: list[str]) -> "Fermata":
        config = self.dir / f"fermata-{tag}.conf"
        config.write_text("\n".join(lines) + "\n")
        proc = self.popen([str(fermata_binary()), str(config)], f"fermata-{tag}")
        fermata = Fermata(proc, self.dir / f"fermata-{tag}.log")
        _wait_for(lambda: fermata.log_has("fermata: ready ") or proc.poll() is not None, STARTUP,
                  "Fermata's ready line", fermata.log)
        assert proc.poll() is None, fermata.log.read_text()
        return fermata

    def stop(self, proc: subprocess.Popen) -> None:
        _stop(proc)
        assert proc.returncode is not None

    def browse(self, service_type: str = "_mpd._tcp") -> list[Resolved]:
        """`avahi-browse -rpt _mpd._tcp` (or another type): what is announced right now, resolved."""
        result = self.run(["avahi-browse", "-rpt", service_type], timeout=15)
        assert result.returncode == 0, result.stderr
        return parse_browse(result.stdout.splitlines())

    def close(self) -> None:
        for proc in reversed(self.children):
            _stop(proc)
        self.holder.stdin.close()
        try:
            self.holder.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.holder.kill()
            self.holder.wait(timeout=5)

    def log_tails(self) -> str:
        parts = []
        for log in dict.fromkeys(self.logs):
            if log.exists():
                parts.append(f"--- {self.name}/{log.name} ---\n"
                             + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(parts)


class Fermata:
    def __init__(self, proc: subprocess.Popen, log: Path):
        self.proc = proc
        self.log = log

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def log_has(self, text: str) -> bool:
        return text in self.log_text()


class Browser:
    """A long-running `avahi-browse -rpf _mpd._tcp` (survives daemon restarts), lines time-stamped."""

    def __init__(self, host: Host):
        self.lines: list[tuple[float, str]] = []
        self.lock = threading.Lock()
        self.proc = host.popen(["avahi-browse", "-rpf", "_mpd._tcp"], "browse", stdout=subprocess.PIPE)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            with self.lock:
                self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip("\n")))

    def first(self, kind: str, name: str, after: float) -> float | None:
        """When the first `kind` (`=` resolved, `-` removed) line for `name` arrived after `after`."""
        with self.lock:
            for stamp, line in self.lines:
                fields = line.split(";")
                if stamp >= after and fields[0] == kind and len(fields) > 3 and unescape(fields[3]) == name:
                    return stamp
        return None


def refuse_or_fail(step: str, error: str) -> None:
    if any(text in error for text in ENVIRONMENTAL):
        pytest.skip(f"the sandbox refuses {step}: {error}")
    pytest.fail(f"{step} failed: {error}", pytrace=False)


@pytest.fixture
def world(tmp_path):
    """Makes hosts; stops everything in them and lets the namespaces go at the end, whatever happens."""
    hosts: list[Host] = []
    workdir = Path(tmp_path)

    def make(name: str = "a") -> Host:
        host = Host(workdir, name)
        hosts.append(host)
        return host

    yield make
    failed = []
    for host in reversed(hosts):
        try:
            host.close()
        except Exception as error:  # keep closing the others
            failed.append(f"{host.name}: {error}")
    for host in hosts:
        assert not os.path.exists(f"/proc/{host.pid}"), f"host {host.name} still held open"
    assert not failed, failed


@pytest.fixture
def lo_host(world):
    """One host with its bus and an avahi-daemon on its loopback interface."""
    host = world("a")
    host.start_bus()
    host.start_avahi("lo")
    return host


def fermata_lines(port: int = 6600, *extra: str, bind: str = "127.0.0.1") -> list[str]:
    return [f'bind_to_address "{bind}"', f'port "{port}"', *extra]


def wait_published(host: Host, predicate, what: str, timeout: float = 10.0,
                   service_type: str = "_mpd._tcp") -> list[Resolved]:
    def check():
        found = host.browse(service_type)
        return found if predicate(found) else None
    try:
        return _wait_for(check, mpdtest.scaled(timeout), what, step=0.2)
    except BaseException:
        print(host.log_tails())
        raise


# ---------------------------------------------------------------------------


def test_published_under_the_host_name(lo_host):
    fermata = lo_host.start_fermata("a", fermata_lines(6600))
    name = f"Music Player @ {socket.gethostname()}"
    found = wait_published(lo_host, lambda f: any(r.name == name for r in f), f"{name!r} to be announced")
    entry = next(r for r in found if r.name == name)
    assert (entry.interface, entry.address, entry.port) == ("lo", "127.0.0.1", 6600), found
    assert fermata.log_has(f"zeroconf: published name={name} type=_mpd._tcp port=6600")
    # A client that only knows what Avahi told it can talk to Fermata.
    status = lo_host.run(["mpc", "-h", entry.address, "-p", str(entry.port), "status"])
    assert status.returncode == 0 and "volume:" in status.stdout, status


def test_zeroconf_name_with_host_name_marker(lo_host):
    lo_host.start_fermata("a", fermata_lines(6600, 'zeroconf_name "Den (%h)"'))
    name = f"Den ({socket.gethostname()})"
    found = wait_published(lo_host, lambda f: any(r.name == name for r in f), f"{name!r} to be announced")
    assert [(r.name, r.port) for r in found] == [(name, 6600)]


def test_zeroconf_enabled_no_publishes_nothing(lo_host):
    disabled = lo_host.start_fermata("off", fermata_lines(6601, 'zeroconf_enabled "no"',
                                                          'zeroconf_name "Disabled Fermata"'))
    # A control instance: once it is visible, Avahi has had time to show the other one too.
    lo_host.start_fermata("on", fermata_lines(6600, 'zeroconf_name "Enabled Fermata"'))
    found = wait_published(lo_host, lambda f: any(r.name == "Enabled Fermata" for r in f), "the control instance")
    time.sleep(mpdtest.scaled(1.0))
    found = lo_host.browse()
    assert [r.name for r in found] == ["Enabled Fermata"], found
    assert "zeroconf" not in disabled.log_text()


def test_unix_socket_only_publishes_nothing(lo_host):
    fermata = lo_host.start_fermata("unix", ['bind_to_address "/run/fermata.sock"'])
    assert fermata.log_has("zeroconf: no TCP listener; zeroconf disabled")
    lo_host.start_fermata("tcp", fermata_lines(6600, 'zeroconf_name "Control"'))
    wait_published(lo_host, lambda f: any(r.name == "Control" for r in f), "the control instance")
    assert [r.name for r in lo_host.browse()] == ["Control"]


def snapcast_output(port: int, zeroconf: str | None) -> list[str]:
    return ["audio_output {", '  type "snapcast"', f'  name "Rooms {port}"', '  bind_to_address "127.0.0.1"',
            f'  port "{port}"', '  format "48000:16:2"', *([f'  zeroconf "{zeroconf}"'] if zeroconf else []), "}"]


def test_snapcast_output_announces_its_own_service(lo_host):
    """As mpd's: `_snapcast._tcp` named "Music Player Daemon" on the output's port, whatever `zeroconf_enabled` says,
    once the output is enabled, which is at its first play, not at start-up (conformance/test_snapcast_output.py
    compares the port's binding with mpd's); none for an output with `zeroconf "no"`."""
    music = lo_host.dir / "music"
    music.mkdir()
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", str(music / "tone.wav"), "synth", "30", "sine",
                    "440", "vol", "0.5"], check=True, capture_output=True)
    fermata = lo_host.start_fermata("snap", fermata_lines(
        6600, 'zeroconf_enabled "no"', f'music_directory "{music}"', f'db_file "{lo_host.dir / "database"}"',
        *snapcast_output(1791, "no"), *snapcast_output(1790, None)))
    mpc = ["mpc", "-q", "-h", "127.0.0.1", "-p", "6600"]
    # Once the song is in the library, the server is up: nothing is announced until it plays.
    _wait_for(lambda: lo_host.run([*mpc, "add", "tone.wav"]).returncode == 0, STARTUP, "the library", fermata.log)
    time.sleep(mpdtest.scaled(1.0))
    assert lo_host.browse("_snapcast._tcp") == []
    assert not fermata.log_has("type=_snapcast._tcp")
    assert lo_host.run([*mpc, "play"]).returncode == 0
    wait_published(lo_host, lambda f: any(r.port == 1790 for r in f), "the snapcast output",
                   service_type="_snapcast._tcp")
    time.sleep(mpdtest.scaled(1.0))
    found = lo_host.browse("_snapcast._tcp")
    assert [(r.name, r.interface, r.address, r.port) for r in found] == \
        [("Music Player Daemon", "lo", "127.0.0.1", 1790)], found
    assert fermata.log_has("zeroconf: published name=Music Player Daemon type=_snapcast._tcp port=1790")
    assert lo_host.browse() == []


def test_two_instances_with_one_name(lo_host):
    first = lo_host.start_fermata("first", fermata_lines(6600, 'zeroconf_name "Twin"'))
    wait_published(lo_host, lambda f: any(r.name == "Twin" for r in f), "the first instance")
    second = lo_host.start_fermata("second", fermata_lines(6601, 'zeroconf_name "Twin"'))
    found = wait_published(lo_host, lambda f: len(f) == 2, "both instances")
    assert sorted((r.name, r.port) for r in found) == [("Twin", 6600), ("Twin #2", 6601)], found
    assert second.log_has("zeroconf: service name collision; using Avahi's alternative name from=Twin to=Twin #2")
    assert second.log_has("zeroconf: published name=Twin #2")
    assert not first.log_has("collision")


def test_fermata_started_before_avahi(world):
    host = world("a")
    host.start_bus()
    fermata = host.start_fermata("a", fermata_lines(6600, 'zeroconf_name "Early Bird"'))
    _wait_for(lambda: fermata.log_has("avahi-daemon is not running; publishing when it starts"), STARTUP,
              "Fermata to notice that avahi-daemon is absent", fermata.log)
    # Fermata keeps serving meanwhile.
    assert host.run(["mpc", "-h", "127.0.0.1", "-p", "6600", "status"]).returncode == 0
    started = time.monotonic()
    host.start_avahi("lo")
    browser = Browser(host)
    appeared = _wait_for(lambda: browser.first("=", "Early Bird", started), WITHIN + 5, "the announcement",
                         fermata.log)
    print(f"announced {appeared - started:.2f} s after avahi-daemon started")
    assert appeared - started <= WITHIN, f"appeared {appeared - started:.2f} s after avahi-daemon started"
    assert [(r.name, r.port) for r in host.browse()] == [("Early Bird", 6600)]


def test_back_after_avahi_restart(lo_host):
    fermata = lo_host.start_fermata("a", fermata_lines(6600, 'zeroconf_name "Phoenix"'))
    browser = Browser(lo_host)
    _wait_for(lambda: browser.first("=", "Phoenix", 0), STARTUP, "the first announcement", fermata.log)
    lo_host.stop(lo_host.avahi)
    _wait_for(lambda: fermata.log_has("lost the connection to avahi-daemon"), STARTUP,
              "Fermata to notice the daemon went away", fermata.log)
    restarted = time.monotonic()
    lo_host.start_avahi("lo")
    back = _wait_for(lambda: browser.first("=", "Phoenix", restarted), WITHIN + 5, "the service to come back",
                     fermata.log)
    print(f"back {back - restarted:.2f} s after avahi-daemon restarted")
    assert back - restarted <= WITHIN, f"back {back - restarted:.2f} s after avahi-daemon restarted"
    assert [(r.name, r.port) for r in lo_host.browse()] == [("Phoenix", 6600)]
    assert fermata.proc.poll() is None


def test_gone_when_fermata_stops(lo_host):
    fermata = lo_host.start_fermata("a", fermata_lines(6600, 'zeroconf_name "Mayfly"'))
    browser = Browser(lo_host)
    _wait_for(lambda: browser.first("=", "Mayfly", 0), STARTUP, "the announcement", fermata.log)
    stopped = time.monotonic()
    lo_host.stop(fermata.proc)
    assert fermata.proc.returncode == 0, fermata.log_text()
    assert fermata.log_has("zeroconf: withdrawn name=Mayfly")
    gone = _wait_for(lambda: browser.first("-", "Mayfly", stopped), WITHIN, "the removal", fermata.log)
    print(f"removed {gone - stopped:.2f} s after SIGTERM")
    assert lo_host.browse() == []


def test_discovery_from_another_host(world):
    """Two namespaces joined by a veth pair, each with its own avahi-daemon; all traffic on the pair."""
    server = world("server")
    client = world("client")
    server.check(["ip", "link", "add", "fz0", "type", "veth", "peer", "name", "fz1", "netns", str(client.pid)],
                 "creating a veth pair between the namespaces")
    server.check(["ip", "addr", "add", "192.0.2.1/24", "dev", "fz0"], "addressing the server's veth end")
    server.check(["ip", "link", "set", "fz0", "up"], "bringing the server's veth end up")
    client.check(["ip", "addr", "add", "192.0.2.2/24", "dev", "fz1"], "addressing the client's veth end")
    client.check(["ip", "link", "set", "fz1", "up"], "bringing the client's veth end up")
    for host, interface in ((server, "fz0"), (client, "fz1")):
        host.start_bus()
        host.start_avahi(interface)
    fermata = server.start_fermata("a", fermata_lines(6600, bind="192.0.2.1"))
    name = f"Music Player @ {socket.gethostname()}"
    found = wait_published(client, lambda f: any(r.name == name for r in f), "the announcement on the other host",
                           timeout=15)
    entry = next(r for r in found if r.name == name)
    assert (entry.interface, entry.host, entry.address, entry.port) == \
        ("fz1", "fermata-server.local", "192.0.2.1", 6600), found
    status = client.run(["mpc", "-h", entry.address, "-p", str(entry.port), "status"])
    assert status.returncode == 0 and "volume:" in status.stdout, (status, fermata.log_text())
    # The announcement and the connection crossed the pair: the client's end received packets.
    stats = json.loads(client.check(["ip", "-j", "-s", "link", "show", "fz1"], "reading the veth counters"))
    assert stats[0]["stats64"]["rx"]["packets"] > 0 and stats[0]["stats64"]["tx"]["packets"] > 0, stats
