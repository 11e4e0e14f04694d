"""The rest of a usual mpd.conf: `resampler` blocks, `samplerate_converter` lines and the `input_cache` block's
`size` are read as mpd 0.23.12 reads them (its errors, compared with the real `mpd` run on the same file), and the
options Fermata acts on start it without an ignored-option warning.  127.0.0.1 only."""

import socket
import subprocess

import pytest

import mpdtest
from test_daemon import binary, connect, free_port, ping, stop_process, write_config, GREETING


def start_and_stop(config) -> str:
    proc = subprocess.Popen([str(binary()), str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        port = int(next(line.split('"')[1] for line in config.read_text().splitlines()
                        if line.startswith("port ")))
        assert ping(connect(socket.AF_INET, ("127.0.0.1", port), timeout=20)) == GREETING + b"OK\n"
    finally:
        code, err = stop_process(proc)
    assert code == 0, err
    return err


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
    ours = subprocess.run([str(binary()), str(config)], capture_output=True, text=True, timeout=20)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                            capture_output=True, text=True, timeout=20)
    assert ours.returncode == theirs.returncode == 1
    mpd_message = theirs.stderr.strip().splitlines()[-1].removeprefix("exception: ")
    assert ours.stderr.strip().splitlines()[-1] == f"fermata: {config}:4: {mpd_message}"


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
    ours = subprocess.run([str(binary()), str(config)], capture_output=True, text=True, timeout=20)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                            capture_output=True, text=True, timeout=20)
    assert ours.returncode == theirs.returncode == 1, theirs.stderr
    mpd_message = theirs.stderr.strip().splitlines()[-1].removeprefix("exception: ")
    assert ours.stderr.strip().splitlines()[-1] == f"fermata: {config}:{line}: {mpd_message}"


@pytest.mark.parametrize("size", ["x", "", "10 Q", "5B", "7 k ", "5 MiB", "99999999999999999999 G",
                                  "18014398509481984 k"])
def test_input_cache_size_errors_as_mpd(tmp_path, size):
    """mpd 0.23.12's `ParseSize` for `input_cache { size }`: its texts, at the `size` line."""
    config = write_config(tmp_path, lines(free_port(), 'input_cache {', f'  size "{size}"', '}'))
    ours = subprocess.run([str(binary()), str(config)], capture_output=True, text=True, timeout=20)
    theirs = subprocess.run([str(mpdtest.ref_binary()), "--no-daemon", "--stderr", str(config)],
                            capture_output=True, text=True, timeout=20)
    assert ours.returncode == theirs.returncode == 1, theirs.stderr
    mpd_message = theirs.stderr.strip().splitlines()[-1].removeprefix("exception: ")
    assert mpd_message.startswith('Error in setting "size" on line 5; ')
    assert ours.stderr.strip().splitlines()[-1] == f"fermata: {config}:5: {mpd_message}"
