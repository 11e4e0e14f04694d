"""The rest of a usual mpd.conf: `resampler` blocks, `samplerate_converter` lines, the `input_cache` block's
`size` and the options of `audio_output` blocks are read as mpd 0.23.12 reads them (its errors and its warnings
about options nobody read, compared with the real `mpd` run on the same file), and the options Fermata acts on start
it without an ignored-option warning.  127.0.0.1 only."""

import re
import socket
import subprocess

import pytest

import mpdtest
from test_daemon import binary, connect, ping, stop_process, write_config, GREETING
from mpdtest import free_port


def start_and_stop(config, reference: bool = False) -> str:
    """Starts Fermata (or, with `reference`, mpd) on `config`, waits for its greeting, stops it: its stderr."""
    command = ([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)] if reference
               else [str(binary()), str(config)])
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(next(line.split('"')[1] for line in config.read_text().splitlines()
                        if line.startswith("port ")))
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port), timeout=20)) == GREETING + b"OK\n"
    finally:
        code, err = stop_process(proc)
    assert code == 0, err
    return err


def fail_both(config) -> tuple[str, str]:
    """Runs Fermata and mpd on a configuration both must refuse (status 1): Fermata's last stderr line and mpd's
    message (its last line without `exception: `)."""
    ours = subprocess.run([str(binary()), str(config)], capture_output=True, text=True, timeout=20)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                            capture_output=True, text=True, timeout=20)
    assert ours.returncode == theirs.returncode == 1, (ours.stderr, theirs.stderr)
    return ours.stderr.strip().splitlines()[-1], theirs.stderr.strip().splitlines()[-1].removeprefix("exception: ")


def lines(port: int, *body: str) -> list[str]:
    return ['bind_to_address "127.0.0.1"', f'port "{port}"', 'zeroconf_enabled "no"', *body,
            "audio_output {", '  type "null"', '  name "n"', "}"]


@pytest.mark.parametrize("body", [
    ['resampler {', '  plugin "soxr"', '  quality "very high"', '  threads "2"', '}'],
    ['samplerate_converter "soxr quick"'],
    ['samplerate_converter "soxr"', 'volume_normalization "no"', 'filesystem_charset "UTF-8"'],
    ['resampler {', '  plugin "libsamplerate"', '  type "Best Sinc Interpolator"', '}'],
    ['samplerate_converter "Fastest Sinc Interpolator"'],
    ['samplerate_converter "internal"'],
    ['resampler {', '  plugin "soxr"', '  quality "custom"', '  precision "20"', '  phase_response "25"',
     '  passband_end "91"', '  stopband_begin "104.5"', '  attenuation "1.5"', '  flags "0x3"', '  threads "1"',
     '}'],
    ['input_cache {', '  size "1 GB"', '}'],
], ids=["resampler-block", "samplerate_converter", "defaults-spelled-out", "libsamplerate-block",
        "libsamplerate-converter", "internal", "soxr-custom", "input_cache"])
def test_acted_on_without_warnings(tmp_path, body):
    err = start_and_stop(write_config(tmp_path, lines(free_port(), *body)))
    for word in ("not supported", "ignored", "deprecated"):
        assert word not in err, err


@pytest.mark.parametrize("body", [
    ['resampler {', '  plugin "soxr"', '}', 'samplerate_converter "soxr"'],
    ['resampler {', '  plugin "foo"', '}'],
    ['resampler {', '  plugin "soxr"', '  quality "bogus"', '}'],
    ['resampler {', '  quality "high"', '}'],
    ['samplerate_converter "soxr bogus"'],
    ['resampler {', '  plugin "libsamplerate"', '  type "bogus"', '}'],
    ['samplerate_converter "Sinc"'],
], ids=["both", "no-such-plugin", "bad-quality", "no-plugin", "bad-converter-quality", "bad-type",
        "bad-converter"])
def test_errors_as_mpd(tmp_path, body):
    config = write_config(tmp_path, lines(free_port(), *body))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:4: {mpd_message}"


def _custom(*keys: str) -> list[str]:
    return ['resampler {', '  plugin "soxr"', '  quality "custom"', *(f"  {key}" for key in keys), '}']


@pytest.mark.parametrize("body, line", [
    (_custom(), 4),
    (['samplerate_converter "soxr custom"'], 4),
    (_custom('precision "25"'), 4),
    (_custom('precision "-3"'), 4),
    (_custom('precision "x"'), 7),
    (_custom('precision "24"', 'phase_response "101"'), 4),
    (_custom('precision "24"', 'phase_response "-1"'), 4),
    (_custom('precision "24"', 'phase_response "1.5"'), 8),
    (_custom('precision "24"', 'passband_end "abc"'), 4),
    (_custom('precision "24"', 'passband_end "0.5"'), 4),
    (_custom('precision "24"', 'passband_end "95x"'), 4),
    (_custom('precision "24"', 'stopband_begin "99"'), 4),
    (_custom('precision "24"', 'stopband_begin "200"'), 4),
    (_custom('precision "24"', 'stopband_begin ""'), 4),
    (_custom('precision "24"', 'attenuation "31"'), 4),
    (_custom('precision "24"', 'attenuation "-1"'), 4),
    (_custom('precision "24"', 'flags "x"'), 8),
    (_custom('precision "24"', 'flags "x"', 'attenuation "31"'), 8),
    (_custom('precision "24"', 'threads "x"'), 8),
    (['resampler {', '  plugin "soxr"', '  threads "2x"', '}'], 6),
], ids=["no-precision", "converter-line", "precision", "negative-precision", "precision-not-a-number",
        "phase", "negative-phase", "phase-not-a-number", "passband-not-a-number", "passband", "passband-suffix",
        "stopband-low", "stopband-high", "stopband-empty", "attenuation", "negative-attenuation",
        "flags-not-a-number", "flags-before-attenuation", "threads", "threads-without-custom"])
def test_soxr_custom_errors_as_mpd(tmp_path, body, line):
    """mpd 0.23.12's custom recipe checks, its texts (and its typos) included; a bad number names its own line."""
    config = write_config(tmp_path, lines(free_port(), *body))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:{line}: {mpd_message}"


@pytest.mark.parametrize("size", ["x", "", "10 Q", "5B", "7 k ", "5 MiB", "99999999999999999999 G",
                                  "18014398509481984 k"])
def test_input_cache_size_errors_as_mpd(tmp_path, size):
    """mpd 0.23.12's `ParseSize` for `input_cache { size }`: its texts, at the `size` line."""
    config = write_config(tmp_path, lines(free_port(), 'input_cache {', f'  size "{size}"', '}'))
    ours, mpd_message = fail_both(config)
    assert mpd_message.startswith('Error in setting "size" on line 5; ')
    assert ours == f"fermata: {config}:5: {mpd_message}"


def _output(*keys: str) -> list[str]:
    """An `audio_output` block starting on line 4 of `lines`' configuration, and the null output after it."""
    return ["audio_output {", *(f"  {key}" for key in keys), "}"]


@pytest.mark.parametrize("block, line", [
    (_output('type "null"', 'name "a"', 'sync "maybe"'), 4),
    (_output('type "null"', 'name "a"', 'mixer_enabled "x"'), 4),
    (_output('type "null"', 'name "a"', 'mixer_type "x"'), 4),
    (_output('type "nosuch"', 'name "a"'), 4),
    (_output('name "a"'), 4),
    (_output('type "null"'), 4),
    (_output('type "null"', 'name "a"', 'always_on "2"'), 7),
    (_output('type "null"', 'name "a"', 'enabled "on"'), 7),
    (_output('type "null"', 'name "a"', 'tags ""'), 7),
    (_output('type "alsa"', 'name "a"', 'buffer_time "0"'), 4),
    (_output('type "alsa"', 'name "a"', 'period_time "x"'), 4),
    (_output('type "alsa"', 'name "a"', 'dop "x"'), 4),
    (_output('type "alsa"', 'name "a"', 'stop_dsd_silence "x"'), 4),
    (_output('type "httpd"', 'name "a"', 'port "x"'), 4),
    (_output('type "httpd"', 'name "a"', 'port "-1"'), 4),
    (_output('type "httpd"', 'name "a"', 'port "70000"'), 4),
    (_output('type "httpd"', 'name "a"', f'port "{mpdtest.free_port()}"', 'max_clients "-2"'), 4),
    (_output('type "httpd"', 'name "a"', 'encoder "flac"', 'compression "x"'), 4),
    (_output('type "snapcast"', 'name "a"', 'port "x"'), 4),
    (_output('type "snapcast"', 'name "a"', 'format "44100:16:2"', 'zeroconf "x"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "x"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"', 'public "x"'),
     4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"',
             'format "44100:*:2"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"', 'format "x"'), 4),
    (_output('type "jack"', 'name "a"', 'ringbuffer_size "0"'), 4),
    (_output('type "ao"', 'name "a"', 'write_size "x"'), 4),
    (_output('type "pipewire"', 'name "a"', 'dsd "x"'), 4),
    (_output('type "null"', 'name "a"', 'enabled "x"', 'sync "x"'), 4),
    (_output('type "null"', 'name "a"', 'sync "x"') + _output('name "b"'), 4),
    (_output('type "null"', 'name "a"', 'enabled "x"') + _output('name "b"'), 7),
    (_output('type "null"', 'name "a"', 'mixer_type "x"', 'format "x"'), 4),
    (_output('type "null"', 'name "a"', 'format "x"'), 4),
    (_output('type "null"', 'name "a"', 'replay_gain_handler "x"'), 4),
    (_output('type "null"', 'name "a"', 'replay_gain_handler "x"', 'mixer_type "x"'), 4),
    (_output('type "shout"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"', 'mixer_type "x"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'port "x"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"',
             'mixer_type "x"'), 4),
    (_output('type "shout"', 'name "a"', 'host "h"', 'mount "/m"', 'password "p"', 'port "8000"',
             'format "44100:16:2"', 'quality "x"', 'mixer_type "x"'), 4),
    (_output('type "snapcast"', 'name "a"', f'port "{mpdtest.free_port()}"', 'mixer_type "x"'), 4),
    (_output('type "snapcast"', 'name "a"', 'port "0"', 'format "44100:16:2"'), 4),
], ids=["null-sync", "mixer_enabled", "mixer_type", "no-such-type", "no-type", "no-name", "always_on", "enabled",
        "tags", "alsa-buffer_time", "alsa-period_time", "alsa-dop", "alsa-stop_dsd_silence", "httpd-port",
        "httpd-negative-port", "httpd-port-range", "httpd-max_clients", "flac-compression", "snapcast-port",
        "snapcast-zeroconf", "shout-port", "shout-public", "shout-no-format", "shout-format-wildcard",
        "shout-format-unparsable", "jack-ringbuffer_size", "ao-write_size", "pipewire-dsd",
        "plugin-before-enabled", "plugin-before-next-block", "enabled-before-next-block", "format-before-mixer_type",
        "format-unparsable", "replay_gain_handler", "mixer_type-before-replay_gain_handler", "shout-name-first",
        "shout-password-before-port", "shout-format-before-mixer_type", "shout-quality-before-mixer_type",
        "snapcast-format-before-mixer_type", "snapcast-port-0-without-address"])
def test_output_option_errors_as_mpd(tmp_path, block, line):
    """mpd 0.23.12's words for a bad option of an `audio_output` block, with the line of the option and, for what
    its output plugin reads, its `Failed to configure output in line N; ` before them; status 1. Of two mistakes,
    the one mpd meets first: a block's plugin options, then its `format` (which shout needs fully defined: the
    shout cases before have none), then its `enabled`, then the next block."""
    config = write_config(tmp_path, lines(free_port(), *block))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:{line}: {mpd_message}"


def _unrecognized(err: str) -> list[str]:
    return re.findall(r"option '[^']*' on line \d+ was not recognized", err)


@pytest.mark.parametrize("block", [
    _output('type "null"', 'name "a"', 'bogus "1"', 'mixer_control "PCM"', 'device "x"', 'sync "no"'),
    _output('type "alsa"', 'name "a"', 'mixer_type "software"', 'mixer_control "PCM"', 'dvice "hw:9"',
            'enabled "no"', 'allowed_formats "44100:16:2"', 'replay_gain_handler "software"', 'tags "yes"'),
    _output('type "alsa"', 'name "a"', 'mixer_type "null"', 'mixer_enabled "no"', 'enabled "no"'),
    _output('type "snapcast"', 'name "a"', 'encoder "vorbis"', f'port "{mpdtest.free_port()}"', 'zeroconf "no"',
            'format "44100:16:2"', 'enabled "no"'),
    _output('type "httpd"', 'name "a"', 'encoder "vorbis"', f'port "{mpdtest.free_port()}"', 'bitrate "128"',
            'foo "1"', 'enabled "no"'),
    _output('type "httpd"', 'name "a"', 'encoder "wave"', f'port "{mpdtest.free_port()}"', 'bitrate "128"',
            'enabled "no"', 'filters ""'),
    _output('type "pipe"', 'name "a"', 'command "cat >/dev/null"', 'path "/tmp/x"', 'enabled "no"'),
    ['resampler {', '  plugin "soxr"', '  quality "high"', '  type "x"', '  precision "20"', '  threads "1"', '}'],
    ['resampler {', '  plugin "libsamplerate"', '  type "2"', '  bogus "1"', '}'],
], ids=["null", "alsa-software-mixer", "mixer_enabled-after-mixer_type", "snapcast-encoder", "httpd-vorbis",
        "httpd-wave", "pipe", "soxr", "libsamplerate"])
def test_unread_block_options_warned_about_as_mpd(tmp_path, block):
    """mpd warns about each option of an `audio_output` block that neither the block, its plugin nor its mixer
    read, and about those of the `resampler` block its plugin does not read, once started; Fermata prints the same
    lines."""
    _compare_warnings(write_config(tmp_path, lines(free_port(), *block)))


def _warning_lines(log: str) -> list[str]:
    """The `was not recognized` lines of a log, without Fermata's time and level."""
    return mpdtest.log_matches(log, r"^(?:\S+ warning: )?(.* was not recognized)$")


def _compare_warnings(config, after: str | None = None, together: bool = True) -> list[str]:
    """Runs mpd then Fermata on `config`: both print the same `was not recognized` lines, whole (mpd's `config`
    domain, no file name), in the same order, with `together` one after the other; with `after`, both print them
    after their first line containing it.  mpd's lines."""
    mpd_log = start_and_stop(config, reference=True)
    theirs = _warning_lines(mpd_log)
    assert theirs, "mpd warned about nothing: the case tests nothing"
    assert theirs == [f"config: {warning}" for warning in _unrecognized(mpd_log)]
    our_log = start_and_stop(config)
    assert _warning_lines(our_log) == theirs, our_log
    for log in (mpd_log, our_log):
        log_lines = log.splitlines()
        first = next(i for i, line in enumerate(log_lines) if line.endswith(" was not recognized"))
        if together:
            assert all(line.endswith(" was not recognized") for line in log_lines[first:first + len(theirs)]), log
        if after is not None:
            assert any(after in line for line in log_lines[:first]), log
    return theirs


def _block(kind: str, *keys: str) -> list[str]:
    return [f"{kind} {{", *(f"  {key}" for key in keys), "}"]


@pytest.mark.parametrize("body", [
    # Enabled plugins' blocks; not a disabled one's, an unknown plugin's or a second block naming a plugin.
    _block("decoder", 'plugin "flac"', 'dbogus "1"') + _block("decoder", 'plugin "mad"', 'dbogus2 "1"')
    + _block("decoder", 'plugin "vorbis"', 'enabled "no"', 'dbogus3 "1"')
    + _block("decoder", 'plugin "nosuch"', 'dbogus4 "1"') + _block("decoder", 'plugin "flac"', 'dbogus5 "1"'),
    # What the plugins read is not warned about; an unavailable plugin's block was used all the same.
    _block("decoder", 'plugin "gme"', 'accuracy "yes"', 'default_fade "1"', 'junk "1"')
    + _block("decoder", 'plugin "dsf"', 'lsbitfirst "yes"')
    + _block("decoder", 'plugin "wildmidi"', 'config_file "/nonexistent/timidity.cfg"', 'x "1"')
    + _block("decoder", 'plugin "hybrid_dsd"', 'enabled "yes"', 'y "1"'),
    _block("input", 'plugin "curl"', 'proxy_port "0"', 'ibogus "1"') + _block("input", 'plugin "alsa"', 'a "1"')
    + _block("input", 'plugin "nfs"', 'n "1"') + _block("input", 'plugin "ffmpeg"', 'f "1"')
    + _block("input", 'plugin "cdio_paranoia"', 'speed "2"', 'c "1"') + _block("input", 'plugin "mms"', 'm "1"')
    + _block("input", 'plugin "smbclient"', 'enabled "no"', 's "1"') + _block("input", 'plugin "file"', 'x "1"')
    + _block("input", 'plugin "qobuz"', 'q "1"'),
    _block("playlist_plugin", 'name "m3u"', 'pbogus "1"')
    + _block("playlist_plugin", 'name "pls"', 'as_directory "yes"', 'p "1"')
    + _block("playlist_plugin", 'name "soundcloud"', 'apikey "k"', 's "1"')
    + _block("playlist_plugin", 'name "cue"', 'enabled "no"', 'c "1"')
    + _block("playlist_plugin", 'name "embcue"', 'e "1"') + _block("playlist_plugin", 'name "flac"', 'f "1"'),
    _block("resampler", 'plugin "internal"', 'type "x"', 'quality "high"'),
    # Several kinds, in the reverse of mpd's order of them: mpd's order it is, each kind's blocks in file order.
    _block("filter", 'plugin "null"', 'name "used"', 'fbogus "1"')
    + _block("filter", 'plugin "null"', 'name "unused"', 'fbogus2 "1"')
    + _block("database", 'plugin "simple"', 'path "/nonexistent/fermata-db"', 'xbogus "1"')
    + _block("input_cache", 'size "1 MB"', 'cbogus "1"')
    + _block("resampler", 'plugin "soxr"', 'rbogus "1"')
    + _block("playlist_plugin", 'name "m3u"', 'pbogus "1"') + _block("input", 'plugin "curl"', 'ibogus "1"')
    + _block("decoder", 'plugin "flac"', 'dbogus "1"')
    + _block("audio_output", 'type "null"', 'name "o"', 'filters "used"', 'obogus "1"'),
    # Kinds interleaved.
    _block("decoder", 'plugin "opus"', 'd1 "1"') + _block("input", 'plugin "curl"', 'i1 "1"')
    + _block("audio_output", 'type "null"', 'name "o1"', 'o1 "1"') + _block("decoder", 'plugin "mpg123"', 'd2 "1"')
    + _block("playlist_plugin", 'name "xspf"', 'p1 "1"') + _block("input", 'plugin "alsa"', 'i2 "1"')
    + _block("audio_output", 'type "null"', 'name "o2"', 'o2 "1"') + _block("playlist_plugin", 'name "asx"', 'p2 "1"'),
], ids=["decoder", "decoder-read-keys", "input", "playlist_plugin", "resampler-internal", "kinds-reversed",
        "kinds-interleaved"])
def test_unread_options_of_every_block_kind_warned_about_as_mpd(tmp_path, body):
    """mpd warns about the lines nothing read of each block something used once it has started, all together:
    the outputs', then the decoders', the inputs', the playlist plugins', the resampler's, the filter templates',
    the database's and the neighbors'; Fermata prints the same lines in the same order."""
    _compare_warnings(write_config(tmp_path, lines(free_port(), *body)))


def test_unread_options_of_neighbors_blocks_warned_about_as_mpd(tmp_path):
    """Last of all, a `neighbors` block's lines (its plugin reads none); the smbclient explorer's own error comes
    from another thread, whenever it comes."""
    body = (_block("neighbors", 'plugin "smbclient"', 'nbogus "1"', 'other "2"')
            + _block("decoder", 'plugin "flac"', 'dbogus "1"'))
    _compare_warnings(write_config(tmp_path, lines(free_port(), *body)), together=False)


@pytest.mark.parametrize("what", ["filter chain", "state file"])
def test_unread_options_warned_about_after_the_outputs_and_the_state_file(tmp_path, what):
    """mpd checks the blocks once the outputs are made (after an output's filter chain failed) and the state file
    is read (after it said it could not read it: here a directory)."""
    state = tmp_path / "state"
    state.mkdir()
    body = ([f'state_file "{state}"'] + _block("decoder", 'plugin "flac"', 'dbogus "1"')
            + _block("audio_output", 'type "null"', 'name "o"', 'filters "nosuch"', 'obogus "1"'))
    config = write_config(tmp_path, lines(free_port(), *body))
    after = "Failed to initialize filter chain for 'o'" if what == "filter chain" else str(state)
    _compare_warnings(config, after=after)


@pytest.mark.parametrize("plugin", ["smbclient", "nfs", "mms"])
def test_enabled_of_input_plugins_without_settings_checked_as_mpd(tmp_path, plugin):
    """mpd reads `enabled` of the block of every input plugin it has, those that read nothing else included."""
    config = write_config(tmp_path, lines(free_port(), *_block("input", f'plugin "{plugin}"', 'enabled "maybe"')))
    ours, mpd_message = fail_both(config)
    assert mpd_message == 'Error in setting "enabled" on line 6; Not a valid boolean ("yes" or "no"): "maybe"'
    assert ours == f"fermata: {config}:6: {mpd_message}"


@pytest.mark.parametrize("mixer, logged", [("none", True), ("software", False), ("null", False)])
def test_replay_gain_handler_mixer_without_a_mixer_logged_as_mpd(tmp_path, mixer, logged):
    """`replay_gain_handler "mixer"` on an output without a mixer is no error: mpd logs `No such mixer for output
    'NAME'` (its `output` domain) and applies ReplayGain in software; with a mixer, nothing."""
    body = ['bind_to_address "127.0.0.1"', f'port "{free_port()}"', 'zeroconf_enabled "no"', "audio_output {",
            '  type "null"', '  name "a"', f'  mixer_type "{mixer}"', '  replay_gain_handler "mixer"', "}"]
    config = write_config(tmp_path, body)
    line = "output: No such mixer for output 'a'"
    theirs = start_and_stop(config, reference=True)
    ours = start_and_stop(config)
    assert (line in theirs.splitlines()) == logged, theirs
    assert any(entry.endswith(f" error: {line}") for entry in ours.splitlines()) == logged, ours


@pytest.mark.parametrize("body, line", [
    (['database {', '  plugin "bogus"', '}'], 4),
    (['database {', '  path "relative"', '}'], 5),
    (['database {', '  compress "no"', '}'], 4),
    (['database {', '  hide_playlist_targets "2"', '}'], 5),
    (['database {', '  cache_directory "c"', '  compress "x"', '}'], 6),
    (['database {', '  cache_directory "c"', '}'], 5),
    (['db_file "relative"'], 4),
    (['database {', '  plugin "proxy"', '  port "x"', '}'], 6),
    (['database {', '  plugin "proxy"', '  host "h"', '  keepalive "maybe"', '}'], 7),
], ids=["no-such-plugin", "relative-path", "no-path", "bad-boolean-before-no-path", "compress-before-cache_directory",
        "relative-cache_directory", "relative-db_file", "proxy-port", "proxy-keepalive"])
def test_database_errors_as_mpd(tmp_path, body, line):
    """The database block's errors in mpd's words and order: an unknown plugin, then the plugin's keys as its
    constructor reads them (simple: `path`, `compress`, `hide_playlist_targets`, `cache_directory`, then whether
    `path` was there) after `Failed to initialize database plugin 'x'; `; `db_file` is the simple plugin's `path`.
    The proxy plugin, which Fermata does not run, has its values checked all the same."""
    config = write_config(tmp_path, lines(free_port(), *body))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:{line}: {mpd_message}"


@pytest.mark.parametrize("value", ["x", "0", "2G", "-1", "4 kiB", "99999999999999999999k"])
def test_audio_buffer_size_errors_as_mpd(tmp_path, value):
    """`audio_buffer_size` is read by mpd's `ParseSize` (KiB without a suffix; `k`, `M`, `G`, an optional `B`):
    its errors in mpd's words (mpd's `Error on line N; ` is Fermata's location)."""
    config = write_config(tmp_path, lines(free_port(), f'audio_buffer_size "{value}"'))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:4: {mpd_message.removeprefix('Error on line 4; ')}"


@pytest.mark.parametrize("value", ["64k", "100", "4M", "1 MB"])
def test_audio_buffer_size_accepted_as_mpd(tmp_path, value):
    """Sizes mpd accepts start Fermata too; one under 128 KiB is raised to it with mpd's `config` warning."""
    config = write_config(tmp_path, lines(free_port(), f'audio_buffer_size "{value}"'))
    theirs = [line for line in start_and_stop(config, reference=True).splitlines() if "buffer size" in line]
    ours = [re.sub(r"^\S+ warning: ", "", line) for line in start_and_stop(config).splitlines()
            if "buffer size" in line]
    assert ours == theirs
    assert bool(theirs) == (value in ("64k", "100"))


@pytest.mark.parametrize("body, line", [
    (['input {', '  plugin "cdio_paranoia"', '  mode "fast"', '}'], 6),
    (['input {', '  plugin "cdio_paranoia"', '  default_byte_order "middle"', '}'], 4),
    (['input {', '  plugin "cdio_paranoia"', '  speed "-1"', '}'], 4),
    (['input {', '  plugin "cdio_paranoia"', '  skip "maybe"', '}'], 4),
], ids=["mode", "default_byte_order", "speed", "skip"])
def test_cdio_paranoia_errors_as_mpd(tmp_path, body, line):
    """The cdio_paranoia input block's errors in mpd's words, after `Failed to initialize input plugin
    'cdio_paranoia'; ` (a bad `mode` is read in mpd's `With`, which names the setting and its line)."""
    config = write_config(tmp_path, lines(free_port(), *body))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:{line}: {mpd_message}"


@pytest.mark.parametrize("auto_update", ["yes", "no"])
def test_a_bad_auto_update_depth_is_logged_as_mpd(tmp_path, auto_update):
    """mpd reads `auto_update_depth` only with `auto_update`, where it starts watching the music directory: a bad
    value is logged there (`exception: Error on line N; …`) and it runs on without watching; without
    `auto_update` the value is never read."""
    music = tmp_path / "music"
    music.mkdir()
    config = write_config(tmp_path, lines(free_port(), f'music_directory "{music}"',
                                          f'db_file "{tmp_path}/db"', f'auto_update "{auto_update}"',
                                          'auto_update_depth "x"'))
    line = "exception: Error on line 7; Failed to parse number"
    theirs = start_and_stop(config, reference=True)
    (tmp_path / "db").unlink(missing_ok=True)
    ours = start_and_stop(config)
    assert (line in theirs.splitlines()) == (auto_update == "yes"), theirs
    assert any(entry.endswith(f" error: {line}") for entry in ours.splitlines()) == (auto_update == "yes"), ours


@pytest.mark.parametrize("value", ["bogus", "-1", "", "44100:17:2", "44100:16:99", "*:*:*:*"])
def test_audio_output_format_errors_as_mpd(tmp_path, value):
    """A global `audio_output_format` that does not parse stops the start in mpd's words (Fermata logged it and
    ran on)."""
    config = write_config(tmp_path, lines(free_port(), f'audio_output_format "{value}"'))
    ours, mpd_message = fail_both(config)
    assert ours == f"fermata: {config}:4: {mpd_message.removeprefix('Error on line 4; ')}"


def test_a_bad_zeroconf_enabled_is_logged_as_mpd(tmp_path):
    """mpd reads `zeroconf_enabled` as zeroconf starts: a bad value is logged there (`exception: Zeroconf
    initialization failed: Error on line N; …`) and it runs on without zeroconf (Fermata refused to start)."""
    config = write_config(tmp_path, [line for line in lines(free_port()) if not line.startswith("zeroconf_enabled")]
                          + ['zeroconf_enabled "maybe"'])
    line = ('exception: Zeroconf initialization failed: Error on line 7; Not a valid boolean ("yes" or "no"): '
            '"maybe"')
    assert line in start_and_stop(config, reference=True).splitlines()
    ours = start_and_stop(config)
    assert any(entry.endswith(f" error: {line}") for entry in ours.splitlines()), ours
    assert "zeroconf" not in ours.replace(line, ""), ours


def test_a_relative_log_file_is_an_error_only_where_the_log_goes_there_as_mpd(tmp_path):
    """mpd does not read `log_file` with `--stderr`: a relative one stops it only without that option."""
    config = write_config(tmp_path, lines(free_port(), 'log_file "relative.log"'))
    for command in ([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                    [str(binary()), "--stderr", str(config)]):
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            port = int(next(line.split('"')[1] for line in config.read_text().splitlines() if line.startswith("port ")))
            assert ping(connect(socket.AF_INET, ("127.0.0.1", port), timeout=20)) == GREETING + b"OK\n", command
        finally:
            code, err = stop_process(proc)
        assert code == 0, err
    ours = subprocess.run([str(binary()), str(config)], capture_output=True, text=True, timeout=20)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", str(config)], capture_output=True, text=True,
                            timeout=20)
    assert ours.returncode == theirs.returncode == 1, (ours.stderr, theirs.stderr)
    mpd_message = theirs.stderr.strip().splitlines()[-1].removeprefix("exception: ").removeprefix("Error on line 4; ")
    assert ours.stderr.strip().splitlines()[-1] == f"fermata: {config}:4: {mpd_message}"


@pytest.mark.parametrize("address", ["", "[::1", "[]:6600", "_bad", "[::1]x", "127.0.0.1:abc", "h" * 256],
                         ids=["empty", "unclosed-bracket", "empty-brackets", "bad-character", "garbage-after-host",
                              "unknown-service", "host-too-long"])
def test_a_bind_to_address_mpd_cannot_listen_on_stops_both_as_mpd(tmp_path, address):
    """mpd's `Failed to listen on VALUE (line N); REASON`, the line named as Fermata names every setting's (no case
    resolves a name through DNS: the host is numeric or never resolved)."""
    config = write_config(tmp_path, [f'bind_to_address "{address}"', f'port "{free_port()}"',
                                     'zeroconf_enabled "no"'])
    ours, mpd_message = fail_both(config)
    match = re.fullmatch(r"Failed to listen on (.*) \(line 1\); (.*)", mpd_message)
    assert match, mpd_message
    assert ours == f"fermata: {config}:1: Failed to listen on {match[1]}; {match[2]}"


@pytest.mark.parametrize("form", ["127.0.0.1", "127.0.0.1:{port}", "any", None],
                         ids=["host", "host-and-port", "any", "no-bind_to_address"])
def test_a_port_in_use_stops_both_as_mpd(tmp_path, form):
    """`Failed to bind to 'ADDRESS'; Failed to bind socket: Address already in use`: for `any` (and no
    bind_to_address), the IPv6 wildcard's failure, which takes IPv4 clients too and so fails as IPv4's does."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        body = [] if form is None else [f'bind_to_address "{form.format(port=port)}"']
        config = write_config(tmp_path, [*body, f'port "{port}"', 'zeroconf_enabled "no"'])
        ours, mpd_message = fail_both(config)
    assert mpd_message.startswith("Failed to bind to '"), mpd_message
    assert ours == f"fermata: {mpd_message}"


def test_the_wildcards_bind_as_mpd_binds_them(tmp_path):
    """No bind_to_address: the IPv6 wildcard takes IPv4 clients too (the system's default), so binding the IPv4
    one after it fails, which both log (`server_socket: bind to '0.0.0.0:PORT' failed (continuing anyway, …)`)
    and go on, answering on 127.0.0.1."""
    if open("/proc/sys/net/ipv6/bindv6only").read().strip() != "0":
        pytest.skip("IPv6 sockets are IPv6-only here")
    port = free_port()
    config = write_config(tmp_path, [f'port "{port}"', 'zeroconf_enabled "no"'])
    line = (f"bind to '0.0.0.0:{port}' failed (continuing anyway, because binding to '[::]:{port}' succeeded): "
            "Failed to bind socket: Address already in use")
    assert f"server_socket: {line}" in start_and_stop(config, reference=True).splitlines()
    ours = start_and_stop(config)
    assert any(entry.endswith(f" error: server_socket: {line}") for entry in ours.splitlines()), ours


def test_a_host_permissions_host_that_does_not_resolve_stops_both_as_mpd(tmp_path):
    """mpd resolves each host_permissions host as it resolves a listen address (`HOST[:PORT]`): `Error on line N;
    Failed to resolve 'HOST':'SERVICE': …` (a numeric host with an unknown service: no DNS)."""
    config = write_config(tmp_path, lines(free_port(), 'host_permissions "127.0.0.1:nosuchservice read"'))
    ours, mpd_message = fail_both(config)
    assert mpd_message.startswith("Error on line 4; Failed to resolve '127.0.0.1':'nosuchservice'"), mpd_message
    assert ours == f"fermata: {config}:4: {mpd_message.removeprefix('Error on line 4; ')}"
