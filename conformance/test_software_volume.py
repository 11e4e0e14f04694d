"""The software mixer's samples against mpd's: `mixer_type "software"` on an ALSA output recorded through
alsa-lib's `file` plugin, at `setvol 50` (mpd's volume curve, its PcmVolume steps of 1/1024 and its dither),
with and without ReplayGain (both stages of mpd's filter chain), for 16- and 24-bit songs."""

from __future__ import annotations

import pytest

import audiofiles

#: 24-bit sources, and 16-bit ones, which mpd's ReplayGain filter widens to 24 bits before a software mixer
#: (the device gets S24_LE).
URIS = ["flac/formats/s24_96000_2ch.flac", "mpcfaad/mpc/replaygain.mpc", "flac/formats/s16_48000_1ch.flac",
        "mpcfaad/aac/ape-tag.aac"]


@pytest.mark.parametrize("replaygain", ["off", "track"])
def test_software_volume_samples_as_mpd(server_factory, format_music, tmp_path, replaygain):
    recorders = {kind: (audiofiles.file_recorder(server_factory, kind, format_music, tmp_path / kind,
                                                 mixer_type="software", replaygain=replaygain), tmp_path / kind)
                 for kind in ("ref", "sut")}
    mismatches = []
    for uri in URIS:
        got = {kind: audiofiles.record_queue(server, directory, ["setvol 50", f'add "{uri}"', "play"])
               for kind, (server, directory) in recorders.items()}
        mismatch = audiofiles.recording_mismatch(uri, got["ref"], got["sut"])
        if mismatch:
            mismatches.append(mismatch)
    assert not mismatches, "\n".join(mismatches)


def test_software_mixer_of_a_disabled_output(server_factory, music_dir, tmp_path):
    """mpd counts a software mixer even while its output is disabled: with the only output disabled `status`
    keeps `volume:`, `getvol` answers and `volume` changes it; `disableoutput` and `toggleoutput` to off raise
    `mixer` as well as `output` (any output with a mixer), enabling raises both, toggling on only `output`."""
    import shutil

    import mpdtest
    music = tmp_path / "music"
    music.mkdir()
    shutil.copy(music_dir / "root song.mp3", music / "root song.mp3")
    outputs = [{"type": "null", "name": "Null Output", "mixer_type": "software"}]
    ref = server_factory("ref", music=music, outputs=outputs)
    sut = server_factory("sut", music=music, outputs=outputs)
    spec = [("a", "setvol 40\ndisableoutput 0\nstatus\ngetvol\nvolume +5\ngetvol\nstatus\nsetvol 30\ngetvol\n"),
            ("b", "idle mixer output\n"), ("a", "enableoutput 0\n"), ("b", "idle mixer output\n"),
            ("a", "disableoutput 0\n"), ("b", "idle mixer output\n"), ("a", "toggleoutput 0\n"),
            ("b", "idle mixer output\n"), ("a", "toggleoutput 0\n"), ("b", "idle mixer output\n"),
            ("a", "volume -10\n"), ("b", "idle mixer output\n"), ("a", "enableoutput 0\n"),
            ("b", "idle mixer output\n"), ("a", "getvol\n")]
    mpdtest.compare(mpdtest.make_case(spec), ref, sut, "software mixer of a disabled output")
