"""pytest wiring for the conformance suite (see README.md).

Session fixtures build the test library once (cached in conformance/.cache/),
start the reference mpd and the system under test on free 127.0.0.1 ports, and
stop both at the end.  A server that crashes fails the run.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

# pytest explains a failed `==` of two sequences with a full difflib diff when it believes it runs on CI ($CI or
# $BUILD_NUMBER set): on recordings of a million samples that takes longer than the whole run (and an expected
# failure pays it too). The suite's messages name the first difference themselves, so pytest gives its ordinary,
# truncated explanations everywhere. Nothing in the suite reads these variables.
for _name in ("CI", "BUILD_NUMBER"):
    os.environ.pop(_name, None)

import formatcases  # noqa: E402
import mpdtest  # noqa: E402
from mpdtest import CACHE_DIR, REPO_ROOT, Server  # noqa: E402

DEFAULT_SONGS = mpdtest.DEFAULT_SONGS
#: Every server started in this session, for liveness checks and crash reports.
_RUNNING: list[Server] = []
_CRASHED: list[str] = []


def pytest_configure(config):
    mpdtest.raise_nofile_limit(4096)
    config.addinivalue_line("markers", "sut_only: runs against the system under test only")
    # Cases that measure other clients' latency: `make test` runs them after the parallel run, alone on the
    # machine (`-m serial`), where another worker's load cannot push a percentile over its bound.
    config.addinivalue_line("markers", "serial: measures latency; make test runs these alone, after the rest")


def pytest_report_header(config):
    sut = mpdtest.sut_binary()
    return [f"conformance: reference {mpdtest.ref_binary()}; system under test {sut}"
            + ("" if sut.exists() else "  (MISSING: its tests will be skipped)")]


# ---------------------------------------------------------------------------
# The library

@pytest.fixture(scope="session")
def music_dir() -> Path:
    songs = int(os.environ.get("CONFORMANCE_SONGS", DEFAULT_SONGS))
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    out = CACHE_DIR / f"library-{songs}"
    with open(CACHE_DIR / "library.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "make-fixtures.py"),
                        str(out), "--songs", str(songs), "--quiet"],
                       check=True, timeout=900)
    return out


@pytest.fixture(scope="session")
def format_music() -> Path:
    """The multi-format library (tools/make-format-fixtures.py): one directory per format."""
    return formatcases.format_library("formats")


@pytest.fixture(scope="session")
def format_pair(format_music, server_pair):
    """mpd and the system under test on the multi-format library."""
    pair = server_pair(format_music)
    pair.require_sut()
    return pair


# ---------------------------------------------------------------------------
# Servers

class Servers:
    """The reference and the system under test, plus what each implements."""

    def __init__(self, ref: Server, sut: Server | None, sut_missing: str = ""):
        self.ref = ref
        self.sut = sut
        self.sut_missing = sut_missing
        self.mpd_commands = set(mpdtest.command_names(ref.query("commands")))
        self.sut_commands: set[str] = set()
        self.sut_commands_reply = b""
        if sut is not None:
            self.sut_commands_reply = sut.query("commands")
            self.sut_commands = set(mpdtest.command_names(self.sut_commands_reply))

    def require_sut(self) -> Server:
        if self.sut is None:
            pytest.skip(self.sut_missing)
        for s in (self.ref, self.sut):
            if not s.alive():
                pytest.fail(f"{s.label} is not running any more (it died earlier, see the "
                            f"first error)", pytrace=False)
        return self.sut


def _workdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"fermata-conformance-{prefix}-"))


def _start(servers: list[Server], songs_hint_from: Server | None = None) -> None:
    for s in servers:
        s.spawn()
        _RUNNING.append(s)
    hint = None
    for s in servers:
        s.start(songs_hint=hint, spawned=True)
        if s is songs_hint_from:
            songs = mpdtest.parse_pairs(s.query("stats")).get("songs")
            hint = int(songs) if songs else None


def _stop(server: Server) -> None:
    server.stop()
    if server in _RUNNING:
        _RUNNING.remove(server)
    if server.crashed:
        _CRASHED.append(f"{server.label} crashed or exited by itself "
                        f"(status {server.returncode}); work dir kept: {server.workdir}\n"
                        f"{server.log_tail()}")


@pytest.fixture(scope="session")
def servers(music_dir) -> Servers:
    ref = Server("ref", mpdtest.ref_binary(), music_dir, _workdir("ref"))
    sut_bin = mpdtest.sut_binary()
    sut = None
    missing = ""
    if sut_bin.exists():
        sut = Server("sut", sut_bin, music_dir, _workdir("sut"))
    else:
        missing = (f"system under test not found: {sut_bin} (build Fermata, or set "
                   f"FERMATA_BIN; FERMATA_BIN=/usr/bin/mpd runs the self-check)")
    started = [ref] + ([sut] if sut else [])
    try:
        _start(started, songs_hint_from=ref)
        pair = Servers(ref, sut, missing)
    except BaseException:
        for s in started:
            _stop(s)
        raise
    yield pair
    for s in started:
        _stop(s)
    for s in started:
        if not s.crashed and not os.environ.get("CONFORMANCE_KEEP"):
            shutil.rmtree(s.workdir, ignore_errors=True)
    if any(s.crashed for s in started):
        pytest.fail("a server crashed during the session:\n" + "\n".join(_CRASHED),
                    pytrace=False)


@pytest.fixture(scope="session")
def server_pair():
    """``server_pair(music_dir)``: a reference mpd and the system under test on
    another library (e.g. the real-world files), started on first use and kept for
    the session, like `servers`.  Returns a :class:`Servers`; ``run_as=(uid, gid)``
    starts both as that user (for file-permission cases when running as root),
    ``limits={resource.RLIMIT_DATA: n}`` caps what a runaway server can take; ``extra_config`` is text
    appended to both configuration files (blocks).
    """
    pairs: dict[tuple, Servers] = {}
    started: list[Server] = []

    def get(music: Path, run_as: tuple[int, int] | None = None,
            limits: dict[int, int] | None = None, extra_config: str = "", **settings) -> Servers:
        key = (str(music), run_as, tuple(sorted((limits or {}).items())), extra_config,
               tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in settings.items())))
        if key in pairs:
            return pairs[key]
        tag = Path(music).name
        ref = Server(f"ref-{tag}", mpdtest.ref_binary(), music, _workdir("ref"),
                     {k: (v if isinstance(v, list) else str(v)) for k, v in settings.items()})
        sut_bin = mpdtest.sut_binary()
        sut = None
        missing = ""
        if sut_bin.exists():
            sut = Server(f"sut-{tag}", sut_bin, music, _workdir("sut"),
                         {k: (v if isinstance(v, list) else str(v)) for k, v in settings.items()})
        else:
            missing = f"system under test not found: {sut_bin}"
        both = [ref] + ([sut] if sut else [])
        for s in both:
            s.run_as = run_as
            s.limits = dict(limits or {})
            s.extra_config = extra_config
        started.extend(both)
        _start(both, songs_hint_from=ref)
        pairs[key] = Servers(ref, sut, missing)
        return pairs[key]

    yield get
    for s in started:
        _stop(s)
    for s in started:
        if not s.crashed and not os.environ.get("CONFORMANCE_KEEP"):
            shutil.rmtree(s.workdir, ignore_errors=True)


@pytest.fixture
def ref(servers) -> Server:
    return servers.ref


@pytest.fixture
def sut(servers) -> Server:
    return servers.require_sut()


@pytest.fixture
def sut_commands(servers) -> set[str]:
    servers.require_sut()
    return servers.sut_commands


@pytest.fixture
def require_commands(servers):
    """``require_commands("status", "idle")``: skip unless the SUT lists them."""
    def check(*names: str) -> None:
        servers.require_sut()
        missing = sorted(set(names) - servers.sut_commands)
        if missing and not os.environ.get("CONFORMANCE_NO_SKIP"):
            pytest.skip(f"restricted to implemented commands: the system under test "
                        f"does not list {', '.join(missing)} in `commands`")
    return check


@pytest.fixture
def server_factory(music_dir, request):
    """Start extra servers for one test: ``server_factory("sut", max_connections="600")``;
    ``outputs=[{"type": "alsa", "name": "x", "device": "rec"}]`` replaces the null output,
    ``env={"HOME": ...}`` adds to the environment, ``extra_config="resampler {…}"`` adds configuration text.

    Stopped at the end of the test; a crash fails the test.
    """
    started: list[Server] = []

    def start(kind: str = "sut", music: Path | None = None, outputs: list[dict[str, str]] | None = None,
              env: dict[str, str] | None = None, extra_config: str = "", **settings) -> Server:
        binary = mpdtest.sut_binary() if kind == "sut" else mpdtest.ref_binary()
        if kind == "sut" and not binary.exists():
            pytest.skip(f"system under test not found: {binary}")
        s = Server(f"{kind}-extra", binary, music or music_dir, _workdir(kind),
                   {k: (v if isinstance(v, list) else str(v)) for k, v in settings.items()})
        s.outputs = outputs
        s.env = dict(env or {})
        s.extra_config = extra_config
        started.append(s)
        _start([s])
        return s

    yield start
    crashed = []
    for s in started:
        if s.expect_exit and not s.alive():
            s.proc = None          # the test made it exit on purpose
            if s in _RUNNING:
                _RUNNING.remove(s)
            shutil.rmtree(s.workdir, ignore_errors=True)
            continue
        _stop(s)
        if s.crashed:
            crashed.append(s.label)
        else:
            shutil.rmtree(s.workdir, ignore_errors=True)
    if crashed:
        pytest.fail(f"{', '.join(crashed)} crashed during the test", pytrace=False)


@pytest.fixture
def differential_runner(servers):
    """Compare one case on both servers; skip it if the SUT lacks a command it uses."""
    def run(case: mpdtest.Case, case_id: str):
        sut = servers.require_sut()
        missing = mpdtest.missing_commands(case, servers.mpd_commands, servers.sut_commands)
        if missing and not os.environ.get("CONFORMANCE_NO_SKIP"):
            pytest.skip(f"restricted to implemented commands: the system under test does "
                        f"not list {', '.join(missing)} in `commands`")
        try:
            t_ref, _ = mpdtest.compare(case, servers.ref, sut, case_id)
            mismatch = None
        except mpdtest.DifferentialMismatch as exc:
            mismatch = str(exc)
        if mismatch:
            pytest.fail(mismatch, pytrace=False)
        if os.environ.get("CONFORMANCE_SHOW"):
            print(f"\n=== {case_id} ({t_ref.elapsed * 1000:.0f} ms on {servers.ref.label})")
            print("\n".join(mpdtest.render(t_ref.normalized(case))))
    return run


@pytest.fixture(autouse=True)
def _servers_stay_alive():
    """Fail the test during which a server died (its log tail is shown)."""
    yield
    for s in list(_RUNNING):
        if s.proc is not None and s.proc.poll() is not None and not s.expect_exit:
            _RUNNING.remove(s)
            s.crashed = True
            s.returncode = s.proc.returncode
            _CRASHED.append(f"{s.label} died (status {s.returncode})\n{s.log_tail()}")
            pytest.fail(f"{s.label} died during this test (status {s.returncode})\n"
                        f"{s.log_tail()}", pytrace=False)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    # Safety net: stop anything still running and make sure a crash fails the run.
    for s in list(_RUNNING):
        _stop(s)
    if _CRASHED:
        sys.stderr.write("\nconformance: server crash(es):\n" + "\n".join(_CRASHED) + "\n")
        if session.exitstatus == 0:
            session.exitstatus = 1


@pytest.fixture(scope="session")
def audio_music(tmp_path_factory) -> Path:
    """The generated MP3s of test_audio.py and test_clients_playback.py (see audiofiles.build_library)."""
    import audiofiles
    audiofiles.require_tools("sox", "lame", "mpg123")
    return audiofiles.build_library(tmp_path_factory.mktemp("audio-music"))
