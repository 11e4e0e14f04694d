"""Sample conversion as mpd converts: the device (an ALSA `file` PCM with a fixed `format`) gets the samples mpd
sends it, bit for bit.

Resampling: a song whose rate the output does not take (`format "48000:16:2"`) is resampled by both servers.

* Without a `resampler` setting, Debian's mpd 0.23.12 uses libsamplerate's Fastest Sinc Interpolator, and so
  does Fermata: the recordings are the same, sample for sample, over the same length (neither plays what the
  converter still holds at the end of the song). The float samples become 16-bit ones as mpd makes them
  (scaled, truncated towards zero): rounding instead made every other sample one step off.
* `samplerate_converter "Medium Sinc Interpolator"` picks another libsamplerate converter on both.
* `samplerate_converter "soxr"`: libsoxr's high recipe on both, its tail played by both.
* `resampler { plugin "soxr" quality "custom" … }`: mpd's custom recipe keys (precision, phase response, pass
  and stop band, attenuation, flags) give the same samples on both, and not those of the high recipe.

Narrowing: 24- and 32-bit songs on a 16-bit device go through mpd's dither (its noise-shaped, pseudo-random
one, whose state starts afresh when the output opens), 32-bit ones on a 24-bit device are shifted.

Resampling with another channel count: mpd resamples first, in the song's channels (to float, libsamplerate's
and libsoxr's output), then makes the device's sample format, then its channels with the integer rules above; a
float song (Ogg Vorbis) too is truncated to the device's format before its channels change.

The songs are the format fixtures' 0.7 s FLAC files (libFLAC decodes them the same on both) and a 1 s Ogg Vorbis
one. 25 cases, about 2 s each (49 s for the file on a 2-core machine at a load of 7).
"""

from __future__ import annotations

import array

import pytest

import audiofiles

SONGS = ["flac/formats/s16_44100_2ch.flac", "flac/formats/s24_96000_2ch.flac"]


def recordings(server_factory, format_music, tmp_path, uri: str, device: str = "48000:16:2",
               **settings) -> tuple[array.array, array.array]:
    """mpd's and Fermata's recordings of `uri` played to a `device` format device (16 or 24 bits), mpd's with
    the silence that fills its last period cut off (checked to be silence)."""
    rate, bits, channels = device.split(":")
    wire, typecode = ("S16_LE", "h") if bits == "16" else ("S24_LE", "i")
    out = []
    for kind in ("ref", "sut"):
        directory = tmp_path / kind
        server = audiofiles.file_recorder(server_factory, kind, format_music, directory,
                                          output={"format": device}, **settings)
        name, data = audiofiles.record_queue(server, directory, [f'add "{uri}"', "play"])
        assert name == f"rec-{wire}-{rate}-{channels}.raw", kind
        out.append(array.array(typecode, data))
    ref, sut = out
    assert len(sut) > 0 and len(ref) >= len(sut), (len(ref), len(sut))
    assert not any(ref[len(sut):]), "mpd's recording goes on with sound"
    return ref[:len(sut)], sut


def difference(ref: array.array, sut: array.array) -> int:
    return max((abs(a - b) for a, b in zip(ref, sut)), default=0)


@pytest.mark.parametrize("uri", SONGS)
def test_libsamplerate_by_default_as_debians_mpd(server_factory, format_music, tmp_path, uri):
    ref, sut = recordings(server_factory, format_music, tmp_path, uri)
    seconds = 0.7
    # The song's length at 48 kHz, less libsamplerate's delay (under a millisecond), on both.
    assert 2 * (round(seconds * 48000) - 48) <= len(sut) <= 2 * round(seconds * 48000), len(sut)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    assert max(abs(v) for v in sut) > 1000, "no sound"


def test_another_libsamplerate_converter(server_factory, format_music, tmp_path):
    ref, sut = recordings(server_factory, format_music, tmp_path, SONGS[0],
                          samplerate_converter="Medium Sinc Interpolator")
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    default_ref, _ = recordings(server_factory, format_music, tmp_path / "default", SONGS[0])
    assert difference(default_ref, sut) > 1, "the converter made no difference"


def test_soxr(server_factory, format_music, tmp_path):
    ref, sut = recordings(server_factory, format_music, tmp_path, SONGS[0], samplerate_converter="soxr")
    assert abs(len(sut) - 2 * round(0.7 * 48000)) <= 2 * 2, len(sut)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"


#: A custom recipe far from the high one: 28 bits, a phase response between minimum and linear (and the extremes,
#: minimum and maximum phase, whose filters are sensitive to the last bit of the stop band: Debian's mpd is built
#: with -ffast-math, which makes its 100.5 / 100 a 100.5 × 0.01), a narrower pass band, 3 dB down, soxr's
#: double-precision flag.
CUSTOM = """resampler {
    plugin "soxr"
    quality "custom"
    precision "28"
    phase_response "25"
    passband_end "90.5"
    stopband_begin "100.5"
    attenuation "3"
    flags "0x10"
}"""


@pytest.mark.parametrize("phase", ["25", "0", "100"])
def test_soxr_custom_recipe(server_factory, format_music, tmp_path, phase):
    recipe = CUSTOM.replace('phase_response "25"', f'phase_response "{phase}"')
    ref, sut = recordings(server_factory, format_music, tmp_path, SONGS[0], extra_config=recipe)
    assert abs(len(sut) - 2 * round(0.7 * 48000)) <= 2 * 2, len(sut)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    _, high = recordings(server_factory, format_music, tmp_path / "high", SONGS[0], samplerate_converter="soxr")
    assert difference(high, sut) > 100, "the custom recipe made no difference"


@pytest.mark.parametrize("uri, device", [
    ("flac/formats/s24_44100_2ch.flac", "44100:16:2"),
    ("flac/formats/s32_44100_2ch.flac", "44100:16:2"),
    ("flac/formats/s32_44100_2ch.flac", "44100:24:2"),
])
def test_narrowing_as_mpd(server_factory, format_music, tmp_path, uri, device):
    ref, sut = recordings(server_factory, format_music, tmp_path, uri, device=device)
    assert len(sut) == 2 * round(0.7 * 44100)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    assert max(abs(v) for v in sut) > 1000, "no sound"


@pytest.mark.parametrize("uri, device", [
    ("flac/formats/s24_44100_2ch.flac", "44100:16:1"),
    ("flac/formats/s32_44100_2ch.flac", "44100:24:1"),
    ("flac/formats/s16_48000_1ch.flac", "48000:16:2"),
    ("flac/formats/s16_48000_1ch.flac", "48000:24:2"),
    ("flac/formats/s16_48000_6ch.flac", "48000:16:2"),
    ("flac/formats/s16_48000_6ch.flac", "48000:16:1"),
    ("flac/formats/s16_44100_2ch.flac", "44100:16:6"),
])
def test_channels_as_mpd(server_factory, format_music, tmp_path, uri, device):
    """mpd converts the sample format first (its dither, shifts), then the channels in the new format with its
    integer rules: mono is copied to both sides, stereo averaged (truncated) to mono, more channels averaged
    into every channel of the device, stereo to surround on the front pair with the rest silent."""
    ref, sut = recordings(server_factory, format_music, tmp_path, uri, device=device)
    rate, _, channels = device.split(":")
    assert len(sut) == int(channels) * round(0.7 * int(rate)), len(sut)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    assert max(abs(v) for v in sut) > 1000, "no sound"


@pytest.mark.parametrize("converter", ["libsamplerate", "soxr"])
@pytest.mark.parametrize("uri, device", [
    ("flac/formats/s8_44100_1ch.flac", "48000:16:2"),
    ("flac/formats/s16_48000_6ch.flac", "44100:16:2"),
    ("flac/formats/s16_44100_2ch.flac", "48000:16:1"),
])
def test_resampling_with_channels_as_mpd(server_factory, format_music, tmp_path, uri, device, converter):
    """A rate and a channel change at once: mpd resamples in the song's channels (libsamplerate's default converter
    or libsoxr's high recipe, float out), truncates to the device's sample format, then converts the channels with
    its integer rules (mono copied, 5.1 averaged, stereo averaged to mono, truncated)."""
    settings = {"samplerate_converter": "soxr"} if converter == "soxr" else {}
    ref, sut = recordings(server_factory, format_music, tmp_path, uri, device=device, **settings)
    rate, _, channels = device.split(":")
    assert len(sut) >= int(channels) * (round(0.7 * int(rate)) - 48), len(sut)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    assert max(abs(v) for v in sut) > 1000, "no sound"


@pytest.mark.parametrize("uri, device", [
    ("ogg/vorbis/quad.ogg", "44100:16:2"),
    ("ogg/vorbis/quad.ogg", "48000:16:1"),
])
def test_float_songs_change_channels_after_the_format(server_factory, format_music, tmp_path, uri, device):
    """A float song (Ogg Vorbis, 1 s of four channels): mpd truncates its samples to the device's 16 bits first,
    then averages them as integers (truncated), with or without a resampler before."""
    ref, sut = recordings(server_factory, format_music, tmp_path, uri, device=device)
    rate, _, channels = device.split(":")
    assert len(sut) >= int(channels) * (int(rate) - 48), len(sut)
    assert ref == sut, f"samples differ by up to {difference(ref, sut)} steps"
    assert max(abs(v) for v in sut) > 1000, "no sound"
