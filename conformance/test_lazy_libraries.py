"""Libraries Fermata loads on first use instead of linking them (issues 12/17): an idle server maps neither
libchromaprint nor the libavcodec it needs until a client sends `getfingerprint`, which then answers as mpd's
(nor libsmbclient, which only `smb://` streams and mounts load: conformance/test_storage.py uses them; nor
libfluidsynth and libmikmod, which the first MIDI file and the first module only libmikmod reads load; nor
libopenmpt (with its libvorbisfile), libmodplug and libgme, which the first file of their plugin loads; nor
libshout, which an enabled shout output loads; nor libpulse, which an enabled pulse output loads; nor
libpipewire, which an enabled pipewire output loads; nor
libao, which an ao output in the configuration loads; nor libopenal, which an enabled openal output loads; nor
libjack, which an enabled jack output loads (conformance/test_jack.py plays through it); nor libsndio, which an
enabled sndio output loads (conformance/test_sndio.py plays through it); nor
libcurl, which the first http stream loads; nor libsoxr and its libgomp, which the first stream resampled with
the soxr resampler loads), and a library
that cannot be loaded gives the command's error or a logged reason, and a server that goes on.

The library holds one FLAC song (decoded by libFLAC, so that neither the scan nor the fingerprint's decoding
brings FFmpeg in) from the fingerprint fixtures (tools/fixtures/fingerprint.py); the MIDI and tracker cases
copy a file of the format fixtures (tools/fixtures/midi.py, mikmod.py, trackers.py) into it and update.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import formatcases
import mpdtest
from test_shout import PASSWORD, icecast, sources  # noqa: F401 (icecast: the fixture)

SONG = "song/16.flac"
#: Every library an idle server must not map.
LAZY = ("libchromaprint.so", "libavcodec.so", "libavformat.so", "libavutil.so", "libsmbclient.so", "libfluidsynth.so",
        "libshout.so", "libmikmod.so", "libcurl", "libpulse.so", "libpipewire", "libao.so",
        "libopenal.so", "libjack.so", "libsndio.so", "libsoxr.so", "libgomp.so",
        "libopenmpt.so", "libvorbisfile.so", "libmodplug.so", "libgme.so")
#: The SoundFont the MIDI case plays with (Debian's timgm6mb-soundfont, as the FluidSynth unit tests).
SOUNDFONT = Path("/usr/share/sounds/sf2/TimGM6mb.sf2")


@pytest.fixture(scope="module")
def music(tmp_path_factory) -> Path:
    source = (formatcases.format_library("fingerprint", only="fingerprint") / "fingerprint" / SONG).resolve()
    music = tmp_path_factory.mktemp("lazy-music")
    shutil.copyfile(source, music / "16.flac")
    return music


def _server(tmp_path: Path, music: Path, role: str, binary: Path) -> mpdtest.Server:
    if not binary.exists():
        pytest.skip(f"server not found: {binary}")
    if role == "sut" and mpdtest.is_mpd(binary):
        pytest.skip("mpd links these libraries")
    server = mpdtest.Server(role, binary, music, tmp_path / role)
    server.deny_io_uring = mpdtest.is_mpd(binary)
    return server


def _mapped(pid: int) -> set[str]:
    """The file names of the libraries mapped in the process."""
    names = set()
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and ".so" in fields[5]:
            names.add(Path(fields[5]).name)
    return names


def _has(names: set[str], prefix: str) -> bool:
    return any(name.startswith(prefix) for name in names)


def test_chromaprint_and_libavcodec_are_mapped_only_after_a_fingerprint(tmp_path, music):
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    ref = _server(tmp_path, music, "ref", mpdtest.ref_binary())
    try:
        sut.start(songs_hint=1)
        ref.start(songs_hint=1)
        assert sut.proc is not None
        assert b"file: 16.flac\n" in sut.query("listall")
        idle = _mapped(sut.proc.pid)
        assert _has(idle, "libFLAC.so"), sorted(idle)
        for library in LAZY:
            assert not _has(idle, library), f"{library} mapped by an idle server"

        command = 'getfingerprint "16.flac"\n'
        answer = sut.query(command, timeout=mpdtest.scaled(60))
        assert answer.startswith(b"chromaprint: AQ") and answer.endswith(b"\nOK\n"), answer
        assert answer == ref.query(command, timeout=mpdtest.scaled(60))
        used = _mapped(sut.proc.pid)
        assert _has(used, "libchromaprint.so.1") and _has(used, "libavcodec.so"), sorted(used)
        # Kept loaded: the next fingerprint is the same.
        assert sut.query(command, timeout=mpdtest.scaled(60)) == answer
        assert _has(_mapped(sut.proc.pid), "libchromaprint.so.1")
        assert not _has(_mapped(sut.proc.pid), "libsmbclient.so")
    finally:
        ref.stop()
        sut.stop()
    assert not sut.crashed and not ref.crashed


def test_a_libchromaprint_that_cannot_be_loaded_fails_the_command_not_the_server(tmp_path, music):
    """A library by libchromaprint's soname without its functions (zlib's, first on LD_LIBRARY_PATH): the
    error `chromaprint_new()` failing would give, the reason on the log once, and the server goes on."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.env = {"LD_LIBRARY_PATH": str(_fake_library(tmp_path, "libchromaprint.so.1"))}
    try:
        sut.start(songs_hint=1)
        for _ in range(2):
            assert sut.query('getfingerprint "16.flac"\n', timeout=mpdtest.scaled(60)) == \
                b"ACK [5@0] {} chromaprint_new() failed\n"
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count("chromaprint_get_version not found") == 1, log
    finally:
        sut.stop()
    assert not sut.crashed


def _fake_library(tmp_path: Path, soname: str) -> Path:
    """A directory holding zlib under `soname`: it loads, but has none of the library's functions."""
    libraries = tmp_path / "lib"
    libraries.mkdir(exist_ok=True)
    zlib = next(p for p in (Path("/usr/lib/x86_64-linux-gnu/libz.so.1"), Path("/lib/x86_64-linux-gnu/libz.so.1"))
                if p.exists())
    shutil.copyfile(zlib, libraries / soname)
    return libraries


def _with_mount_cache(server: mpdtest.Server) -> None:
    """A simple database with a cache directory, so that `mount` is possible."""
    server.overrides["db_file"] = None
    server.extra_config = mpdtest.simple_database_block(server.workdir)


SMB_URI = "smb://127.0.0.1:9/share"


def test_libsmbclient_is_mapped_from_the_first_smb_use_on(tmp_path, music):
    """A refused share (nothing listens on port 9) answers as mpd's (test_fingerprint, test_storage compare it);
    here: the library comes in with the first SMB context."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    try:
        sut.start(songs_hint=1)
        assert sut.proc is not None
        assert not _has(_mapped(sut.proc.pid), "libsmbclient.so")
        assert sut.query(f'getfingerprint "{SMB_URI}/x.flac"\n', timeout=mpdtest.scaled(30)) == \
            b"ACK [52@0] {} smbc_open() failed: Connection refused\n"
        assert _has(_mapped(sut.proc.pid), "libsmbclient.so.0")
    finally:
        sut.stop()
    assert not sut.crashed


def test_a_libsmbclient_that_cannot_be_loaded_fails_smb_uses_not_the_server(tmp_path, music):
    """Without libsmbclient's functions, every SMB context fails as `smbc_new_context()` failing would, the
    reason is logged once, and the server goes on."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.env = {"LD_LIBRARY_PATH": str(_fake_library(tmp_path, "libsmbclient.so.0"))}
    _with_mount_cache(sut)
    failure = b"smbc_new_context() failed: Can not access a needed shared library\n"
    try:
        sut.start(songs_hint=1)
        for _ in range(2):
            assert sut.query(f'getfingerprint "{SMB_URI}/x.flac"\n', timeout=mpdtest.scaled(30)) == \
                b"ACK [52@0] {} " + failure
            assert sut.query(f"mount m {SMB_URI}\n", timeout=mpdtest.scaled(30)) == b"ACK [5@0] {mount} " + failure
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count("smbc_new_context not found") == 1, log
    finally:
        sut.stop()
    assert not sut.crashed


@pytest.fixture(scope="module")
def tracks() -> Path:
    """The MIDI and tracker fixtures."""
    return formatcases.format_library("lazy-tracks", only="midi,mikmod,trackers")


def _update_with(server: mpdtest.Server, source: Path, name: str) -> None:
    """Copies `source` into the server's music directory as `name` and updates until the song is listed."""
    shutil.copyfile(source, server.music_dir / name)
    assert server.query(f'update "{name}"').startswith(b"updating_db: ")
    assert mpdtest.wait_until(lambda: b"updating_db" not in server.query("status"), mpdtest.scaled(30))


def _plays(server: mpdtest.Server, name: str) -> None:
    """Plays `name` alone until its audio shows and time passes."""
    mpdtest.settled_play(server, f'clear\nadd "{name}"\nplay 0\n')
    assert mpdtest.wait_until(lambda: float(mpdtest.parse_pairs(server.query("status")).get("elapsed", "0")) > 0.5,
                              mpdtest.scaled(10)), server.query("status")
    server.query("stop")


@pytest.mark.parametrize("soname,file,config", [
    # The SoundFont named in a decoder block (mpd's default, FluidR3_GM, is not installed here).
    ("libfluidsynth.so.3", "midi/tune.mid", f'decoder {{\n    plugin "fluidsynth"\n    soundfont "{SOUNDFONT}"\n}}'),
    # A suffix only mikmod claims.
    ("libmikmod.so.3", "mikmod/tune.stx", ""),
    # openmpt comes before modplug and mikmod in mpd's order.
    ("libopenmpt.so.0", "trackers/tune.mod", ""),
    # The one suffix only modplug claims.
    ("libmodplug.so.1", "trackers/tune.dfm", ""),
    ("libgme.so.0", "trackers/psg.vgm", ""),
], ids=["fluidsynth", "mikmod", "openmpt", "modplug", "gme"])
def test_a_decoder_library_is_mapped_from_the_first_file_it_reads_on(tmp_path, music, tracks, soname, file, config):
    """The scan of the first file of the plugin loads its library; the song then plays."""
    if "fluidsynth" in soname and not SOUNDFONT.exists():
        pytest.skip(f"{SOUNDFONT} is not installed (timgm6mb-soundfont)")
    sut = _server(tmp_path, _copy(music, tmp_path / "music"), "sut", mpdtest.sut_binary())
    sut.extra_config = config
    name = Path(file).name
    try:
        sut.start(songs_hint=1)
        assert sut.proc is not None
        assert not _has(_mapped(sut.proc.pid), soname)
        _update_with(sut, tracks / file, name)
        assert f"file: {name}\n".encode() in sut.query("listall")
        assert _has(_mapped(sut.proc.pid), soname)
        _plays(sut, name)
    finally:
        sut.stop()
    assert not sut.crashed


@pytest.mark.parametrize("soname,file,symbol", [
    ("libfluidsynth.so.3", "midi/tune.mid", "fluid_is_midifile"),
    ("libmikmod.so.3", "mikmod/tune.stx", "MikMod_RegisterDriver"),
    ("libopenmpt.so.0", "trackers/tune.mod", "openmpt_log_func_silent"),
    ("libmodplug.so.1", "trackers/tune.dfm", "ModPlug_GetSettings"),
    ("libgme.so.0", "trackers/psg.vgm", "gme_identify_extension"),
], ids=["fluidsynth", "mikmod", "openmpt", "modplug", "gme"])
def test_a_decoder_library_that_cannot_be_loaded_leaves_the_plugin_out(tmp_path, music, tracks, soname, file,
                                                                        symbol):
    """As mpd leaves out a decoder plugin whose initialisation fails: `decoders` is mpd's with the plugin disabled
    (the child the server runs at start-up tried the library), the update makes of its files what that mpd makes
    of them (the plugins after it read them: modplug a .mod openmpt would; or none does), the reason is logged
    once, the server goes on."""
    plugin = soname.split(".")[0].removeprefix("lib")
    sut = _server(tmp_path, _copy(music, tmp_path / "music-sut"), "sut", mpdtest.sut_binary())
    sut.env = {"LD_LIBRARY_PATH": str(_fake_library(tmp_path, soname))}
    ref = _server(tmp_path, _copy(music, tmp_path / "music-ref"), "ref", mpdtest.ref_binary())
    ref.extra_config = f'decoder {{\n    plugin "{plugin}"\n    enabled "no"\n}}'
    name = Path(file).name
    try:
        ref.start(songs_hint=1)
        sut.start(songs_hint=1)
        decoders = sut.query("decoders")
        assert decoders == ref.query("decoders")
        assert f"plugin: {plugin}\n".encode() not in decoders, decoders
        for copy in ("a", "b"):
            for server in (ref, sut):
                # The same modification time in both (listallinfo shows it).
                shutil.copy2(tracks / file, server.music_dir / f"{copy}-{name}")
                assert server.query(f'update "{copy}-{name}"').startswith(b"updating_db: ")
            for server in (ref, sut):
                assert mpdtest.wait_until(lambda: b"updating_db" not in server.query("status"), mpdtest.scaled(30))
        listed = sut.query("listallinfo")
        assert b"16.flac" in listed
        assert listed == ref.query("listallinfo")
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count(f"{symbol} not found") == 1, log
    finally:
        ref.stop()
        sut.stop()
    assert not sut.crashed and not ref.crashed


def test_a_soundfont_that_is_no_soundfont_leaves_the_fluidsynth_plugin_listed_as_in_mpd(tmp_path, music):
    """mpd 0.23.12's fluidsynth initialisation reads the `soundfont` setting and checks nothing: a file that is no
    SoundFont leaves the plugin listed (its songs then fail to decode), so `decoders` is mpd's; libfluidsynth stays
    unloaded in the server all the same (its child tried it)."""
    soundfont = tmp_path / "not-a-soundfont.sf2"
    soundfont.write_bytes(b"RIFF\0\0\0\0WAVEfmt " + bytes(64))
    servers = [_server(tmp_path, music, role, binary)
               for role, binary in (("ref", mpdtest.ref_binary()), ("sut", mpdtest.sut_binary()))]
    for server in servers:
        server.extra_config = f'decoder {{\n    plugin "fluidsynth"\n    soundfont "{soundfont}"\n}}'
    ref, sut = servers
    try:
        for server in servers:
            server.start(songs_hint=1)
        decoders = sut.query("decoders")
        assert decoders == ref.query("decoders")
        assert b"plugin: fluidsynth\n" in decoders and b"plugin: mikmod\n" in decoders, decoders
        assert sut.proc is not None
        assert not _has(_mapped(sut.proc.pid), "libfluidsynth.so")
    finally:
        for server in servers:
            server.stop()
    assert not sut.crashed and not ref.crashed


def _copy(music: Path, target: Path) -> Path:
    """A music directory of this test's own (the cases add files to it)."""
    shutil.copytree(music, target)
    return target


def _shout_output(port: int) -> dict[str, str]:
    return {"type": "shout", "name": "Lazy", "host": mpdtest.HOST, "port": str(port), "password": PASSWORD,
            "mount": "/lazy.ogg", "encoding": "ogg", "quality": "2", "format": "44100:16:2"}


def test_libshout_is_mapped_by_a_server_with_an_enabled_shout_output(tmp_path, music, icecast):  # noqa: F811
    """Outputs are enabled when they first play, as in mpd: a server with a shout output maps libshout from then on
    (one without maps none: the idle case above), and streams through it."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.outputs = [_shout_output(icecast)]
    try:
        sut.start(songs_hint=1)
        assert sut.proc is not None
        assert not _has(_mapped(sut.proc.pid), "libshout.so.3")
        _plays(sut, "16.flac")
        assert _has(_mapped(sut.proc.pid), "libshout.so.3")
        sut.query("play 0")
        assert mpdtest.wait_until(lambda: "lazy.ogg" in sources(icecast), 10), sut.log_tail()
    finally:
        sut.stop()
    assert not sut.crashed


def test_a_libshout_that_cannot_be_loaded_fails_the_output_not_the_server(tmp_path, music, icecast):  # noqa: F811
    """The shout output fails to open (logged; libshout's reason once) beside a null output that plays on."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.outputs = [_shout_output(icecast), {"type": "null", "name": "Null"}]
    sut.env = {"LD_LIBRARY_PATH": str(_fake_library(tmp_path, "libshout.so.3"))}
    try:
        sut.start(songs_hint=1)
        for _ in range(2):
            _plays(sut, "16.flac")
        assert "lazy.ogg" not in sources(icecast)
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count("shout_init not found") == 1, log
        assert "shout_new() failed" in log, log
    finally:
        sut.stop()
    assert not sut.crashed


#: Outputs whose library the server loads (libao when the output is made from the configuration, as mpd
#: initialises libao there; libopenal when it is enabled, at its first play), each beside a null output that keeps
#: time (libao's null driver takes a song at once), the environment they play in, their soname and first function.
OUTPUT_LIBRARIES = {
    "ao": ({"type": "ao", "name": "Lazy", "driver": "null"}, {}, "libao.so.4", "ao_initialize",
           "libao could not be loaded"),
    "openal": ({"type": "openal", "name": "Lazy"}, {"ALSOFT_DRIVERS": "null"}, "libopenal.so.1", "alcGetString",
               "libopenal could not be loaded"),
}


@pytest.mark.parametrize("kind", OUTPUT_LIBRARIES)
def test_an_output_library_is_mapped_by_a_server_with_such_an_output(tmp_path, music, kind):
    """A server with the output maps its library from start-up on (libao) or from its first play on (libopenal; one
    without maps none: the idle case above), and plays through it."""
    output, env, soname, _, _ = OUTPUT_LIBRARIES[kind]
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.outputs = [output, {"type": "null", "name": "Clock"}]
    sut.env = dict(env)
    try:
        sut.start(songs_hint=1)
        assert sut.proc is not None
        assert _has(_mapped(sut.proc.pid), soname) == (kind == "ao")
        _plays(sut, "16.flac")
        assert _has(_mapped(sut.proc.pid), soname)
        assert "error" not in mpdtest.parse_pairs(sut.query("status"))
    finally:
        sut.stop()
    assert not sut.crashed


#: Those, and the pulse output (whose library is mapped only with a PulseAudio daemon to play to: its own case
#: below), the pipewire output (conformance/test_pipewire.py plays through it), the jack output
#: (conformance/test_jack.py) and the sndio output (conformance/test_sndio.py), in the same shape.
UNLOADABLE_OUTPUT_LIBRARIES = {
    **OUTPUT_LIBRARIES,
    "pulse": ({"type": "pulse", "name": "Lazy", "server": "unix:/nonexistent"}, {}, "libpulse.so.0",
              "pa_threaded_mainloop_new", "pa_threaded_mainloop_new() has failed"),
    "pipewire": ({"type": "pipewire", "name": "Lazy"}, {}, "libpipewire-0.3.so.0", "pw_init",
                 "libpipewire could not be loaded"),
    "jack": ({"type": "jack", "name": "Lazy", "server_name": "fermata-test-not-running"}, {}, "libjack.so.0",
             "jack_client_open", "libjack could not be loaded"),
    "sndio": ({"type": "sndio", "name": "Lazy", "device": "snd,15/0"}, {}, "libsndio.so.7", "sio_initpar",
              "libsndio could not be loaded"),
}


@pytest.mark.parametrize("kind", UNLOADABLE_OUTPUT_LIBRARIES)
def test_an_output_library_that_cannot_be_loaded_fails_the_output_not_the_server(tmp_path, music, kind):
    """The output fails to enable (logged; the library's reason once) beside a null output that plays on."""
    output, env, soname, symbol, failure = UNLOADABLE_OUTPUT_LIBRARIES[kind]
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.outputs = [output, {"type": "null", "name": "Null"}]
    sut.env = {**env, "LD_LIBRARY_PATH": str(_fake_library(tmp_path, soname))}
    try:
        sut.start(songs_hint=1)
        for _ in range(2):
            _plays(sut, "16.flac")
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count(f"{symbol} not found") == 1, log
        assert failure in log, log
    finally:
        sut.stop()
    assert not sut.crashed


@pytest.fixture(scope="module")
def http(music, tmp_path_factory):
    """tools/streamserver.py serving the library's FLAC song."""
    with mpdtest.stream_server(music, tmp_path_factory.mktemp("streamserver") / "port") as url:
        yield url


def test_libcurl_is_mapped_from_the_first_http_stream_on(tmp_path, music, http):
    """`urlhandlers` lists libcurl's protocols (learnt by a child process) without loading it; the first http
    stream does (its `lsinfo` answers as mpd's), and plays."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    ref = _server(tmp_path, music, "ref", mpdtest.ref_binary())
    try:
        sut.start(songs_hint=1)
        ref.start(songs_hint=1)
        assert sut.proc is not None
        handlers = sut.query("urlhandlers")
        assert b"handler: http://\n" in handlers and b"handler: https://\n" in handlers, handlers
        assert not _has(_mapped(sut.proc.pid), "libcurl")
        url = f"{http}/file/16.flac"
        assert sut.query(f'lsinfo "{url}"') == ref.query(f'lsinfo "{url}"')
        assert _has(_mapped(sut.proc.pid), "libcurl-gnutls.so.4")
        _plays(sut, url)
    finally:
        ref.stop()
        sut.stop()
    assert not sut.crashed and not ref.crashed


def test_a_libcurl_that_cannot_be_loaded_leaves_the_curl_plugin_out(tmp_path, music, http):
    """Neither the child that lists the schemes nor the server can load it: the curl plugin is left out, as
    mpd leaves out an input plugin whose initialisation fails, so http streams go to the ffmpeg input plugin as
    in an mpd whose curl plugin is disabled; the reason is logged, the server goes on."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.env = {"LD_LIBRARY_PATH": str(_fake_library(tmp_path, "libcurl-gnutls.so.4"))}
    ref = _server(tmp_path, music, "ref", mpdtest.ref_binary())
    ref.extra_config = 'input {\n    plugin "curl"\n    enabled "no"\n}'
    try:
        sut.start(songs_hint=1)
        ref.start(songs_hint=1)
        for path in ("/file/16.flac", "/status/404"):
            command = f'lsinfo "{http}{path}"\n'
            assert sut.query(command, timeout=mpdtest.scaled(30)) == ref.query(command, timeout=mpdtest.scaled(30))
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert "curl_global_init not found" in log, log
    finally:
        ref.stop()
        sut.stop()
    assert not sut.crashed and not ref.crashed


def test_libpulse_is_mapped_by_a_server_with_an_enabled_pulse_output(tmp_path, music):
    """A server with a pulse output maps libpulse from its first play on, when the output is enabled as mpd's is
    (one without maps none: the idle case above), and plays through it to a PulseAudio daemon of the test's own."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    with mpdtest.pulseaudio_daemon(tmp_path / "pulse") as socket:
        sut.outputs = [{"type": "pulse", "name": "Lazy", "server": f"unix:{socket}"}]
        try:
            sut.start(songs_hint=1)
            assert sut.proc is not None
            assert not _has(_mapped(sut.proc.pid), "libpulse.so.0")
            _plays(sut, "16.flac")
            assert _has(_mapped(sut.proc.pid), "libpulse.so.0")
        finally:
            sut.stop()
    assert not sut.crashed


def _soxr_server(tmp_path: Path, music: Path) -> mpdtest.Server:
    """A server resampling with libsoxr to a 48 kHz null output (the song is 44.1 kHz)."""
    sut = _server(tmp_path, music, "sut", mpdtest.sut_binary())
    sut.overrides["samplerate_converter"] = "soxr"
    sut.outputs = [{"type": "null", "name": "Resampled", "format": "48000:16:2"}]
    return sut


def test_libsoxr_is_mapped_from_the_first_stream_it_resamples_on(tmp_path, music):
    """A server configured with the soxr resampler maps libsoxr (and libgomp) only when a song is resampled with it
    (test_sample_conversion compares what it plays with mpd's)."""
    sut = _soxr_server(tmp_path, music)
    try:
        sut.start(songs_hint=1)
        assert sut.proc is not None
        idle = _mapped(sut.proc.pid)
        assert not _has(idle, "libsoxr.so") and not _has(idle, "libgomp.so"), sorted(idle)
        _plays(sut, "16.flac")
        assert "error" not in mpdtest.parse_pairs(sut.query("status"))
        used = _mapped(sut.proc.pid)
        assert _has(used, "libsoxr.so.0") and _has(used, "libgomp.so.1"), sorted(used)
    finally:
        sut.stop()
    assert not sut.crashed


def test_a_libsoxr_that_cannot_be_loaded_fails_the_output_not_the_server(tmp_path, music):
    """Each stream's resampler fails to open as a failing `soxr_create` fails it in mpd ("soxr initialization has
    failed"), the reason is logged once, and the server goes on."""
    sut = _soxr_server(tmp_path, music)
    sut.env = {"LD_LIBRARY_PATH": str(_fake_library(tmp_path, "libsoxr.so.0"))}
    try:
        sut.start(songs_hint=1)
        for _ in range(2):
            sut.query('clear\nadd "16.flac"\nplay 0\n')
            assert mpdtest.wait_until(lambda: "error" in mpdtest.parse_pairs(sut.query("status")),
                                      mpdtest.scaled(10)), sut.query("status")
            error = mpdtest.parse_pairs(sut.query("status"))["error"]
            assert "soxr initialization has failed: dlsym: soxr_io_spec not found in libsoxr.so.0" in error, error
            sut.query("stop\nclearerror\n")
        assert sut.query("ping") == b"OK\n"
        log = sut.log_path.read_text()
        assert log.count("soxr: dlsym: soxr_io_spec not found") == 1, log
    finally:
        sut.stop()
    assert not sut.crashed
