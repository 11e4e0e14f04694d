"""The Debian package (`make deb`, scripts/make-deb.py) as a user installs it, next to Debian's mpd:
built from the release binary under test (no compiling here), `dpkg -i`, the installed units
verified, the installed service started through socket activation as its ExecStart says (with
the installed config moved to a temporary library, and the Swift toolchain hidden in a private
mount namespace), running as the package's user, then `dpkg -r` and `dpkg --purge` leaving no
process and no file behind and mpd's package untouched.  Needs root (CI runs as root); the
package is purged at the end whatever happens.  127.0.0.1 and a temporary Unix socket only."""

import glob
import hashlib
import os
import pwd
import grp
import re
import shutil
import socket
import subprocess
import tempfile
import wave
from pathlib import Path

import pytest

import mpdtest
from test_daemon import connect, ping, stop_process, GREETING
from mpdtest import free_port

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "fermata"
UNIT_DIR = Path("/usr/lib/systemd/system")
SWIFT_TOOLCHAIN = Path("/opt/swift")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root (CI runs as root)")


def sh(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, f"{' '.join(args)}: {result.stderr}"
    return result


def installed(package: str) -> bool:
    result = sh("dpkg-query", "-W", "-f=${db:Status-Status}", package, check=False)
    return result.returncode == 0 and result.stdout == "installed"


def known(package: str) -> bool:
    """Installed, or removed with its configuration left (dpkg -r without --purge)."""
    return sh("dpkg-query", "-W", package, check=False).returncode == 0


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    """The package, built from the release binary the suite tests (gzip: four times faster than xz)."""
    binary = mpdtest.sut_binary()
    if not binary.is_file() or mpdtest.is_mpd(binary):
        pytest.fail(f"the release binary {binary} is missing: `make test` builds it first (swift build -c release)")
    out = tmp_path_factory.mktemp("deb")
    result = sh("/usr/bin/python3", str(REPO / "scripts" / "make-deb.py"), "--binary", str(binary),
                "--out", str(out), "--compression", "gzip", timeout=120)
    path = Path(result.stdout.strip())
    assert path.is_file() and path.parent == out, result.stdout
    return path


def field(deb: Path, name: str) -> str:
    return sh("dpkg-deb", "-f", str(deb), name).stdout.strip()


def package_paths(deb: Path) -> list[str]:
    """The paths the package ships, without the leading '.' and the bare directories."""
    listing = sh("dpkg-deb", "-c", str(deb)).stdout.splitlines()
    return [line.split(None, 5)[5].removeprefix(".") for line in listing if not line.startswith("d")]


def needed(binary: Path) -> list[str]:
    dynamic = sh("readelf", "-d", str(binary)).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", dynamic)


def test_package_contents_and_depends(deb):
    paths = package_paths(deb)
    for path in ("/usr/bin/fermata", "/etc/fermata.conf", "/usr/lib/systemd/system/fermata.service",
                 "/usr/lib/systemd/system/fermata.socket", "/usr/share/doc/fermata/copyright",
                 "/usr/lib/fermata/libswiftCore.so"):
        assert path in paths, paths
    control = Path(tempfile.mkdtemp(prefix="fermata-deb-control-"))
    try:
        sh("dpkg-deb", "-e", str(deb), str(control))
        assert (control / "conffiles").read_text() == "/etc/fermata.conf\n"
        for script in ("postinst", "prerm", "postrm"):
            assert os.access(control / script, os.X_OK), script
    finally:
        shutil.rmtree(control)

    # Every library the binary links, apart from the Swift runtime it ships, is a dependency, by the
    # package that holds it; and the libraries it loads with dlopen too (FFmpeg's, libchromaprint, libsmbclient,
    # libfluidsynth, libshout, libpulse, libpipewire, libao, libopenal, libsndio, libmikmod, libcurl-gnutls, libsoxr,
    # libopenmpt, libmodplug, libgme).
    depends = {re.sub(r"\s*\(.*\)", "", d).strip() for d in field(deb, "Depends").split(",")}
    shipped = {Path(p).name for p in paths if p.startswith("/usr/lib/fermata/")}
    multiarch = sh("dpkg-architecture", "-qDEB_HOST_MULTIARCH").stdout.strip()
    system = [name for name in needed(mpdtest.sut_binary()) if name not in shipped]
    candidates = [f"{d}/{name}" for name in system for d in (f"/usr/lib/{multiarch}", f"/lib/{multiarch}")]
    owners = {}
    for line in sh("dpkg-query", "-S", *candidates, check=False).stdout.splitlines():
        package, _, path = line.partition(": ")
        owners[Path(path).name] = package.split(":")[0]
    assert set(owners) == set(system), f"no package holds {set(system) - set(owners)}"
    missing = {name: owner for name, owner in owners.items() if owner not in depends}
    assert not missing, f"linked but not in Depends: {missing}"
    for dlopened in ("libavformat", "libavcodec", "libavutil", "libchromaprint", "libsmbclient", "libfluidsynth",
                     "libshout", "libpulse", "libpipewire-0.3-0", "libao4", "libopenal1", "libsndio7.0",
                     "libmikmod", "libcurl3-gnutls", "libsoxr0", "libopenmpt0", "libmodplug1", "libgme0"):
        assert any(d.startswith(dlopened) for d in depends), f"{dlopened} (dlopen) missing from Depends"
    assert "adduser" in depends

    # Nothing in common with mpd's package, which stays installed next to it.
    assert installed("mpd"), "Debian's mpd must be installed (scripts/install-deps.sh)"
    mpd_files = set(sh("dpkg-query", "-L", "mpd").stdout.splitlines())
    assert not mpd_files & set(paths)


def mpd_snapshot() -> dict:
    """mpd's package state, its files' contents and owners, and its enablement links."""
    files = {}
    for path in sh("dpkg-query", "-L", "mpd").stdout.splitlines():
        p = Path(path)
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            files[path] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mode, st.st_uid, st.st_gid)
    links = sorted(glob.glob("/etc/systemd/system/*/mpd.*") + glob.glob("/etc/systemd/user/*/mpd.*")
                   + glob.glob("/etc/rc?.d/*mpd"))
    status = sh("dpkg-query", "-W", "-f=${Status} ${Version}", "mpd").stdout
    return {"status": status, "files": files, "links": links, "user": sh("getent", "passwd", "mpd", check=False).stdout}


RC_DIRS = ("/etc/rc2.d", "/etc/rc3.d", "/etc/rc4.d", "/etc/rc5.d")


def mpd_starts(init_script_links: bool = True) -> bool:
    """What the postinst asks: mpd's systemd units enabled, or its init script linked."""
    found = glob.glob("/etc/systemd/system/*.wants/mpd.socket") + glob.glob("/etc/systemd/system/*.wants/mpd.service")
    if init_script_links:
        found += glob.glob("/etc/rc[2345].d/S[0-9][0-9]mpd")
    return bool(found)


def dpkg_install(deb: Path, hide_init_links: bool) -> subprocess.CompletedProcess:
    """`dpkg -i`; with `hide_init_links`, in a private mount namespace whose /etc/rc[2-5].d are empty,
    as on a machine where mpd's init script is not linked (its real links stay as they are)."""
    command = ["dpkg", "-i", str(deb)]
    if hide_init_links:
        mounts = " && ".join(f"mount -t tmpfs -o size=4k none {d}" for d in RC_DIRS if os.path.isdir(d))
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   f"{mounts or 'true'} && exec \"$@\"", "sh", *command]
    return sh(*command, check=False, timeout=120)


def leftovers() -> list[str]:
    """Anything of the package's outside its file list: enablement links and state, its data, its user."""
    found = glob.glob("/etc/systemd/system/**/fermata*", recursive=True)
    found += glob.glob("/var/lib/systemd/deb-systemd-helper-*/**/fermata*", recursive=True)
    found += [p for p in ("/var/lib/fermata", "/run/fermata", "/etc/fermata.conf") if os.path.lexists(p)]
    if sh("getent", "passwd", PACKAGE, check=False).returncode == 0:
        found.append("user fermata")
    return found


def music_workdir(owner: pwd.struct_passwd) -> Path:
    """The installed config's /var/lib/fermata, moved under /tmp, owned by the package's user."""
    path = Path(tempfile.mkdtemp(prefix="fermata-deb-"))
    path.chmod(0o755)
    for sub in ("music", "playlists"):
        (path / sub).mkdir()
        os.chown(path / sub, owner.pw_uid, owner.pw_gid)
    os.chown(path, owner.pw_uid, owner.pw_gid)
    with wave.open(str(path / "music" / "tone.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(bytes(4 * 4410))
    return path


def unit_setting(unit: Path, key: str) -> str:
    return next(l for l in unit.read_text().splitlines() if l.startswith(key + "=")).removeprefix(key + "=")


def unit_privileges(unit: Path) -> list[str]:
    """setpriv's arguments for the unit's CapabilityBoundingSet= and NoNewPrivileges=, which systemd
    would apply: Fermata starts as root with those capabilities only."""
    caps = [c.removeprefix("CAP_").lower() for c in unit_setting(unit, "CapabilityBoundingSet").split()]
    assert caps and "setuid" in caps and "setgid" in caps, caps
    args = ["setpriv", "--bounding-set=-all," + ",".join("+" + c for c in caps)]
    if unit_setting(unit, "NoNewPrivileges") == "yes":
        args.append("--no-new-privs")
    return args


@pytest.mark.parametrize("init_links", ["mpd-linked", "mpd-unlinked"])
def test_install_run_remove_purge(deb, init_links):
    """Installed where mpd starts by itself (this machine: Debian's mpd links its init script) and,
    its init links hidden from dpkg, where it does not: the units are then enabled, and purged."""
    if known(PACKAGE):
        pytest.fail("a fermata package is already installed here: the test would replace it (dpkg --purge fermata)")
    if sh("getent", "passwd", PACKAGE, check=False).returncode == 0:
        pytest.fail("a user named fermata exists already: the test checks the postinst makes it and the purge removes it")
    assert not leftovers(), leftovers()
    before = mpd_snapshot()
    assert before["status"].startswith("install ok installed"), before["status"]
    workdir = None
    proc = None
    try:
        hidden = init_links == "mpd-unlinked"
        result = dpkg_install(deb, hide_init_links=hidden)
        assert result.returncode == 0, result.stdout + result.stderr
        assert installed(PACKAGE)
        files = [p for p in sh("dpkg-query", "-L", PACKAGE).stdout.splitlines() if p != "/."]

        # The user the postinst made, in group audio, and its directories.
        user = pwd.getpwnam(PACKAGE)
        audio = grp.getgrnam("audio")
        assert user.pw_uid < 1000 and user.pw_gid == audio.gr_gid and user.pw_dir == "/var/lib/fermata"
        for directory in ("/var/lib/fermata", "/var/lib/fermata/music", "/var/lib/fermata/playlists"):
            assert os.stat(directory).st_uid == user.pw_uid, directory

        # Next to an mpd that starts by itself the units are left disabled (port 6600 stays mpd's),
        # else enabled as Debian enables a service.
        links = glob.glob("/etc/systemd/system/*.wants/fermata.*")
        if mpd_starts(init_script_links=not hidden):
            assert links == [], links
            assert "mpd is set to start" in result.stderr, result.stderr
        else:
            assert sorted(Path(l).name for l in links) == ["fermata.service", "fermata.socket"], links

        # Installing again (an upgrade) keeps the admin's changes: the edited conffile, the units' state.
        conffile = Path("/etc/fermata.conf")
        conffile.write_text(conffile.read_text() + "# edited by the admin\n")
        result = dpkg_install(deb, hide_init_links=hidden)
        assert result.returncode == 0, result.stdout + result.stderr
        assert conffile.read_text().endswith("# edited by the admin\n")
        assert sorted(glob.glob("/etc/systemd/system/*.wants/fermata.*")) == sorted(links)

        verify = sh("systemd-analyze", "verify", str(UNIT_DIR / "fermata.socket"), str(UNIT_DIR / "fermata.service"),
                    check=False)
        assert verify.returncode == 0 and verify.stdout + verify.stderr == "", verify.stderr

        # The installed binary needs nothing from the toolchain.
        ldd = sh("ldd", "/usr/bin/fermata").stdout
        assert "not found" not in ldd and str(SWIFT_TOOLCHAIN) not in ldd, ldd
        assert re.search(r"libswiftCore\.so => /usr/lib/fermata/libswiftCore\.so", ldd), ldd

        # The service as its unit starts it, through socket activation, on the installed config with
        # its /var/lib/fermata moved to a temporary directory (and zeroconf off: loopback only).
        workdir = music_workdir(user)
        config_text = Path("/etc/fermata.conf").read_text().replace("/var/lib/fermata", str(workdir))
        config_text = config_text.replace('zeroconf_enabled    "yes"', 'zeroconf_enabled    "no"')
        assert str(workdir) in config_text and 'zeroconf_enabled    "no"' in config_text
        config = workdir / "fermata.conf"
        config.write_text(config_text)
        service = UNIT_DIR / "fermata.service"
        command = [str(config) if word == "/etc/fermata.conf" else word
                   for word in unit_setting(service, "ExecStart").split()]
        assert command[0] == "/usr/bin/fermata" and str(config) in command, command
        port = free_port()
        sock_path = workdir / "socket"
        activate = ["systemd-socket-activate", "-l", f"127.0.0.1:{port}", "-l", str(sock_path), *command]
        minimal = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", *unit_privileges(service), *activate]
        if SWIFT_TOOLCHAIN.is_dir():
            # A private mount namespace in which the toolchain's directory is empty.
            minimal = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                       f"mount -t tmpfs -o ro,size=4k none {SWIFT_TOOLCHAIN} && exec \"$@\"", "sh", *minimal]
        proc = subprocess.Popen(minimal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        client = connect(socket.AF_INET, ("127.0.0.1", port), timeout=15)
        assert ping(client) == GREETING + b"OK\n"
        client.close()
        assert os.readlink(f"/proc/{proc.pid}/exe") == "/usr/bin/fermata"
        maps = Path(f"/proc/{proc.pid}/maps").read_text()
        assert "/usr/lib/fermata/libswiftCore.so" in maps and str(SWIFT_TOOLCHAIN) not in maps
        status_fields = dict(l.split(":", 1) for l in Path(f"/proc/{proc.pid}/status").read_text().splitlines())
        bounded = len(unit_privileges(service)[1].split(",")) - 1
        assert bin(int(status_fields["CapBnd"], 16)).count("1") == bounded, status_fields["CapBnd"]
        assert int(status_fields["CapEff"], 16) == 0 and status_fields["NoNewPrivs"].strip() == "1"
        for uid, gid, groups in mpdtest.thread_credentials(proc.pid):
            assert uid.split() == [str(user.pw_uid)] * 4 and gid.split() == [str(audio.gr_gid)] * 4, (uid, gid)
            assert str(audio.gr_gid) in groups.split(), groups

        mpc = ["mpc", "-h", "127.0.0.1", "-p", str(port)]
        status = sh(*mpc, "status", timeout=10)
        assert "volume:" in status.stdout, status.stdout
        sh(*mpc, "--wait", "update", timeout=30)
        assert sh(*mpc, "listall", timeout=10).stdout.split() == ["tone.wav"]
        local = connect(socket.AF_UNIX, str(sock_path))
        local.recv(100)
        local.sendall(b"status\n")
        reply = b""
        while not reply.endswith(b"OK\n"):
            chunk = local.recv(4096)
            assert chunk, reply
            reply += chunk
        local.close()
        assert b"\nstate: stop\n" in b"\n" + reply, reply
        database = workdir / "database"
        assert mpdtest.wait_until(database.exists, timeout=10), "no database written"
        assert database.stat().st_uid == user.pw_uid

        # Remove while it runs: the prerm stops it (SIGTERM, a clean exit), and only the conffile stays.
        result = sh("dpkg", "-r", PACKAGE, check=False, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail("the server still runs after dpkg -r")
        code, err = stop_process(proc)
        proc = None
        assert code == 0, err
        # Warnings about a config line name its file and line: the package's config gives none.
        assert f"{config}:" not in err, "the package's config warns: " + err
        assert not installed(PACKAGE)
        left = [p for p in files if os.path.lexists(p) and not os.path.isdir(p)]
        assert left == ["/etc/fermata.conf"], left
        assert not [p for p in files if p.startswith(("/usr/lib/fermata", "/usr/share/doc/fermata"))
                    and os.path.lexists(p)]

        result = sh("dpkg", "--purge", PACKAGE, check=False, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        assert not known(PACKAGE)
        assert not leftovers(), leftovers()
        assert not [p for p in files if os.path.lexists(p) and not os.path.isdir(p)]
        after = mpd_snapshot()
        assert after == before, "mpd's package changed"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()
        if known(PACKAGE):
            subprocess.run(["dpkg", "--purge", PACKAGE], capture_output=True, timeout=120)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
